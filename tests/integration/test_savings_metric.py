"""The savings metric end to end: the notifier's daily schedule reads the action log and publishes
into CloudWatch (moto) what `reaper report` says for the same log, once per day, in any Slack mode."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper.cli.main import main
from reaper.core.settings import KINDS
from reaper.record.actionlog import ActionLog
from reaper.report.savings_metric import NAMESPACE, SAVED, UNPRICED
from reaper.slack.notifier import Notifier
from reaper_devkit import seed
from tests.conftest import load_function
from tests.helpers.log_entries import record_stop

SCHEDULED = {"detail-type": "Scheduled Event", "source": "aws.scheduler"}


def published(cw: Any, metric: str, day_start: datetime) -> dict[str, float]:
    """{kind: Sum} of the metric's datapoints for the day that starts at day_start."""
    out: dict[str, float] = {}
    for kind in KINDS:
        points = cw.get_metric_statistics(
            Namespace=NAMESPACE,
            MetricName=metric,
            Dimensions=[{"Name": "Kind", "Value": kind}],
            StartTime=day_start,
            EndTime=day_start + timedelta(days=1),
            Period=86400,
            Statistics=["Sum", "SampleCount"],
        )["Datapoints"]
        if points:
            assert len(points) == 1 and points[0]["SampleCount"] == 1, f"{kind}: published more than once: {points}"
            out[kind] = points[0]["Sum"]
    return out


def record(log: ActionLog, at: datetime, rid: str, **fields: Any) -> None:
    record_stop(log, at, rid, type="verdict", **fields)


@pytest.fixture
def yesterday_log(aws: Any, table: str) -> tuple[ActionLog, datetime]:
    """Yesterday (UTC), as the log saw it: every reclaimed resource came back, or was a job."""
    log = ActionLog(aws.client("dynamodb"), table)
    start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=1)
    record(log, start + timedelta(hours=2), "nb-1")
    record(log, start + timedelta(hours=9), "nb-1", verdict="warn", executed=False)  # running again: 7 h off
    record(log, start + timedelta(hours=4), "ep-1", kind="endpoint", hourly=1.25)
    log.record(
        {"type": "notice", "kind": "endpoint", "id": "ep-1", "region": "us-east-1", "title": "Restored endpoint ep-1"},
        start + timedelta(hours=20),
        "evt-restore",
    )  # 16 h at zero
    record(
        log,
        start + timedelta(hours=5),
        "job-1",
        kind="training-job",
        hourly=40.0,
        evidence={"estimated_usd": 80.0, "max_usd": 200.0, "elapsed_hours": 2.0, "max_hours": 10.0},
    )  # at most $120 left
    record(log, start + timedelta(hours=6), "box-1", kind="ec2", hourly=None)  # no price
    record(log, start + timedelta(hours=12), "box-1", kind="ec2", verdict="warn", executed=False, hourly=None)
    record(log, start + timedelta(hours=7), "fs-1", kind="fsx", executed=False, hourly=3.0)  # dry-run finding
    return log, start


def test_the_published_dollars_are_what_reaper_report_computes_for_the_same_log(aws, cw, table, yesterday_log, capsys, monkeypatch):
    log, start = yesterday_log
    # Given `reaper report` over the same log
    monkeypatch.setenv("REAPER_TABLE", table)
    assert main(["report", "--since", "2d", "--by", "kind", "--json"]) == 0
    report = {row["kind"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())}
    # When the notifier's daily schedule fires today (webhook mode: no bot, no digest)
    n = Notifier(webhook=lambda: None, log=log, cloudwatch=lambda: cw, clock=lambda: start + timedelta(days=1, hours=17))
    result = n.handle(SCHEDULED)
    # Then yesterday's dollars per kind in CloudWatch equal the report's, to the cent
    saved = published(cw, SAVED, start)
    assert {k: v for k, v in saved.items() if v} == {k: r["saved_usd"] for k, r in report.items() if r["saved_usd"]}
    assert saved == {
        "notebook": 14.0,
        "endpoint": 20.0,
        "training-job": 120.0,
        "ec2": 0.0,
        "fsx": 0.0,
        "studio-app": 0.0,
        "capacity": 0.0,
        "bedrock-pt": 0.0,
        "mlflow": 0.0,
        "storage": 0.0,
    }
    assert result["posted"] is False and result["savings"][f"{start:%Y-%m-%d}"]["training-job"] == 120.0
    # and the box without a price is said, as the report says it
    assert published(cw, UNPRICED, start)["ec2"] == 1 == report["ec2"]["unpriced"]


def test_the_schedule_firing_again_publishes_nothing_twice(aws, cw, yesterday_log):
    log, start = yesterday_log
    n = Notifier(webhook=lambda: None, log=log, cloudwatch=lambda: cw, clock=lambda: start + timedelta(days=1, hours=17))
    first, second = n.handle(SCHEDULED), n.handle(SCHEDULED)
    assert f"{start:%Y-%m-%d}" in first["savings"] and second["savings"] == {}
    assert published(cw, SAVED, start)["notebook"] == 14.0  # SampleCount 1, checked in published()


def test_a_dry_run_sweep_publishes_zero_reclaimed_for_every_kind(aws, sm, cw, table, capsys, monkeypatch):
    # Given a dry-run sweep that found an idle notebook
    seed.notebook(sm, "idle", {"ml:owner": "ana@example.com"})
    seed.activity(cw, "idle", datetime.now(UTC), [0] * 20)
    monkeypatch.setenv("REAPER_TABLE", table)
    assert main(["sweep", "--kind", "notebook", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["verdict"] == "act"
    # When the schedule fires the next day
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    log = ActionLog(aws.client("dynamodb"), table)
    Notifier(webhook=lambda: None, log=log, cloudwatch=lambda: cw, clock=lambda: today + timedelta(days=1, hours=17)).handle(SCHEDULED)
    # Then every kind shows 0 dollars reclaimed for that day, a value, not a gap
    assert published(cw, SAVED, today) == dict.fromkeys(KINDS, 0.0)


def test_a_cloudwatch_failure_is_retried_by_the_schedule_and_the_day_published_once(aws, cw, yesterday_log, monkeypatch):
    log, start = yesterday_log
    calls = {"n": 0}
    real_put = cw.put_metric_data

    def failing_once(**kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ClientError({"Error": {"Code": "Throttling", "Message": "Rate exceeded"}}, "PutMetricData")
        return real_put(**kwargs)

    monkeypatch.setattr(cw, "put_metric_data", failing_once)
    n = Notifier(webhook=lambda: None, log=log, cloudwatch=lambda: cw, clock=lambda: start + timedelta(days=1, hours=17))
    # When the first put is throttled, the invocation fails (Lambda retries an asynchronous invocation)
    with pytest.raises(ClientError):
        n.handle(SCHEDULED)
    # Then the retry publishes every day, the throttled one included, each once
    n.handle(SCHEDULED)
    assert published(cw, SAVED, start)["endpoint"] == 20.0


def test_the_deployed_notifier_publishes_from_its_schedule(aws, cw, table, yesterday_log, monkeypatch, lambda_context):
    # Given the function as deployed: the table from its environment, no Slack secret
    _, start = yesterday_log
    monkeypatch.setenv("REAPER_TABLE", table)
    app = load_function("notifier")
    # When the digest schedule fires (webhook mode: no digest is posted)
    result = app.handler(SCHEDULED, lambda_context)
    # Then the metric is published all the same
    assert result["posted"] is False and f"{start:%Y-%m-%d}" in result["savings"]
    assert published(cw, SAVED, start)["notebook"] == 14.0
