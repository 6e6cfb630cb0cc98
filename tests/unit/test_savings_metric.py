"""The daily savings metric: the report's dollars, spread over days, for every kind, honest about gaps."""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime, timedelta

import pytest

from reaper.core.settings import KINDS
from reaper.record.logentry import LogEntry, from_mapping
from reaper.report.savings_metric import LOOKBACK, NAMESPACE, SAVED, UNPRICED, day_savings, days_to_publish, metric_data
from reaper.report.summary import group, reclaimed
from reaper_devkit.iam_check import Request, granted
from reaper_devkit.template import function_statements, load
from tests.helpers.log_entries import JOB_UNDER_CEILING, logged_stop

D1 = date(2026, 11, 30)
START = datetime(2026, 11, 30, tzinfo=UTC)


entry = logged_stop  # a stop as the log reads it back (tests/helpers/log_entries.py)


def report_by_kind(entries: list[LogEntry], since: datetime, now: datetime) -> dict[str, float]:
    """What `reaper report --since ... --by kind` computes (cli._report: reclaimed -> group)."""
    logged = [e for e in entries if since <= datetime.fromisoformat(e.logged_at.replace("Z", "+00:00")) <= now]
    return {g.key: g.to_json("kind")["saved_usd"] for g in group(reclaimed(logged, now), "kind")}


def test_a_day_of_actions_is_what_the_report_says_for_that_day():
    # Given a day: a notebook stopped at 10:00 (still off), an endpoint zeroed 06:00 and restored 12:00,
    # a job stopped with $120 of its ceiling left, and a dry-run finding
    entries = [
        entry(START + timedelta(hours=10), "nb"),
        entry(START + timedelta(hours=6), "ep", kind="endpoint", hourly=1.5),
        from_mapping(
            {
                "logged_at": (START + timedelta(hours=12)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "type": "notice",
                "kind": "endpoint",
                "id": "ep",
                "region": "us-east-1",
                "title": "Restored endpoint ep",
            }
        ),
        entry(
            START + timedelta(hours=3),
            "job",
            **JOB_UNDER_CEILING,
        ),
        entry(START + timedelta(hours=1), "dry", kind="ec2", executed=False, hourly=9.0),
    ]
    # When the day's figures are computed
    figures = day_savings(entries, D1)
    # Then each kind's dollars equal the report's for the same log, read at the day's end
    expected = report_by_kind(entries, START, START + timedelta(days=1))
    assert (
        {k: f.saved_usd for k, f in figures.items() if f.saved_usd}
        == expected
        == {"notebook": 28.0, "endpoint": 9.0, "training-job": 120.0}
    )
    # and every kind has a value, the dry-run finding none
    assert set(figures) == set(KINDS) and figures["ec2"].saved_usd == 0 and figures["ec2"].resources == 0


def test_days_add_up_to_the_report_over_the_same_span():
    # Given a notebook stopped on day 1 at 10:00 and seen running again (a warning) on day 3 at 06:00,
    # and a GPU box stopped on day 2 that never came back
    entries = [
        entry(START + timedelta(hours=10), "nb"),
        entry(START + timedelta(days=2, hours=6), "nb", verdict="warn", executed=False),
        entry(START + timedelta(days=1, hours=20), "box", kind="ec2", hourly=3.25),
    ]
    days = [D1 + timedelta(days=n) for n in range(4)]
    per_day = [day_savings(entries, d) for d in days]
    # Then the notebook counts 14 h, 24 h, 6 h, then nothing
    assert [d["notebook"].saved_usd for d in per_day] == [28.0, 48.0, 12.0, 0.0]
    # and the days sum to the report from day 1 to the end of day 4, kind by kind
    expected = report_by_kind(entries, START, START + timedelta(days=4))
    for kind, usd in expected.items():
        assert math.isclose(sum(d[kind].saved_usd for d in per_day), usd, abs_tol=0.01 * len(days))


def test_a_dry_run_log_publishes_zero_for_every_kind():
    entries = [entry(START + timedelta(hours=h), f"r{h}", kind=KINDS[h % len(KINDS)], executed=False) for h in range(12)]
    data = metric_data(D1, day_savings(entries, D1))
    saved = {d["Dimensions"][0]["Value"]: d["Value"] for d in data if d["MetricName"] == SAVED}
    assert saved == dict.fromkeys(KINDS, 0.0)


def test_unpriced_and_unreadable_prices_are_counted_not_summed():
    entries = [
        entry(START + timedelta(hours=1), "a", hourly=None),
        entry(START + timedelta(hours=2), "b", kind="ec2", hourly=float("nan")),
        entry(START + timedelta(hours=23), "c"),
    ]
    figures = day_savings(entries, D1)
    assert figures["notebook"].unpriced == 1 and figures["notebook"].saved_usd == 2.0
    assert figures["ec2"].unpriced == 1 and figures["ec2"].saved_usd == 0.0
    unpriced = {d["Dimensions"][0]["Value"]: d["Value"] for d in metric_data(D1, figures) if d["MetricName"] == UNPRICED}
    assert unpriced["notebook"] == 1 and unpriced["ec2"] == 1 and unpriced["fsx"] == 0


def test_hostile_entries_never_break_the_day():
    entries = [
        from_mapping({"logged_at": "garbage", "verdict": "act", "executed": True}),
        entry(START + timedelta(hours=1), "x", kind="<!channel>" * 300),
        entry(START + timedelta(hours=1), "y", kind=None),  # type: ignore[arg-type]
    ]
    figures = day_savings(entries, D1)
    # unknown kinds are one bounded dimension value, never the raw text
    assert figures["other"].saved_usd == 2 * 2.0 * 23 and all(len(d["Dimensions"][0]["Value"]) < 30 for d in metric_data(D1, figures))


def test_actions_after_the_day_or_before_the_lookback_do_not_count():
    entries = [entry(START + timedelta(days=1, hours=1), "later"), entry(START - LOOKBACK - timedelta(hours=1), "ancient")]
    assert day_savings(entries, D1)["notebook"].saved_usd == 0


def test_only_complete_days_are_published_and_stamped_at_their_start():
    now = datetime(2026, 12, 2, 17, 0, tzinfo=UTC)
    assert days_to_publish(now)[-1] == date(2026, 12, 1) and date(2026, 12, 2) not in days_to_publish(now)
    stamps = {d["Timestamp"] for d in metric_data(D1, day_savings([], D1))}
    assert stamps == {START}


# -- the stack's side: IAM and the dashboard ---------------------------------------------------


def test_the_notifier_may_publish_savings_and_nothing_else():
    stmts = function_statements("NotifierFunction")
    put = "cloudwatch:PutMetricData"
    assert granted(Request(put, "*", {"cloudwatch:namespace": (NAMESPACE,)}), stmts)
    # not the notebooks' activity (forging it would keep idle notebooks alive), not another namespace, not unnamed
    assert not granted(Request(put, "*", {"cloudwatch:namespace": ("MLReaper",)}), stmts)
    assert not granted(Request(put, "*", {"cloudwatch:namespace": ("AWS/SageMaker",)}), stmts)
    assert not granted(Request(put, "*"), stmts)


def _dashboard() -> dict:
    body = load()["Resources"]["OperationsDashboard"]["Properties"]["DashboardBody"]["Sub"]
    return json.loads(body)  # ${...} are inside strings, so the template text is itself JSON


def test_the_dashboard_is_valid_json_and_shows_dollars_per_kind_and_what_has_no_price():
    widgets = _dashboard()["widgets"]
    for w in widgets:
        assert {"type", "x", "y", "width", "height", "properties"} <= set(w) and w["x"] + w["width"] <= 24
    savings = [w["properties"] for w in widgets if any(NAMESPACE in json.dumps(m) for m in w["properties"]["metrics"])]

    def kinds_of(props: dict, metric: str) -> set[str]:
        rows = [r for r in props["metrics"] if isinstance(r[0], str)]
        names = {r[1] for r in rows if r[0] == NAMESPACE}
        return {r[3] if r[0] == NAMESPACE else r[1] for r in rows if r[0] != "."} if metric in names else set()

    per_kind = [p for p in savings if kinds_of(p, SAVED) == set(KINDS) and p["view"] == "timeSeries"]
    assert per_kind and per_kind[0]["period"] == 86400 and "USD" in per_kind[0]["title"]
    total = [p for p in savings if p["view"] == "singleValue"]
    assert total and total[0]["metrics"][0][0]["expression"] == "SUM(METRICS())" and kinds_of(total[0], SAVED) == set(KINDS)
    assert any(kinds_of(p, UNPRICED) == set(KINDS) for p in savings)


@pytest.mark.parametrize("output", ["OperationsDashboardName", "OperationsDashboardUrl"])
def test_the_stack_outputs_name_the_dashboard(output):
    value = json.dumps(load()["Outputs"][output]["Value"])
    assert "OperationsDashboard" in value


def test_the_digest_counts_the_same_dollars_as_the_metric_and_the_report():
    from reaper.slack import digest as daily_digest

    # Given a notebook stopped at 02:00 and seen running at 09:00, and a job stopped with $120 of its ceiling left
    entries = [
        entry(START + timedelta(hours=2), "nb"),
        entry(START + timedelta(hours=9), "nb", verdict="warn", executed=False),
        entry(
            START + timedelta(hours=5),
            "job",
            **JOB_UNDER_CEILING,
        ),
    ]
    end = START + timedelta(days=1)
    # When the digest is built at the day's end
    digest = daily_digest.build(entries, end - timedelta(seconds=1))
    # Then "reclaimed today" is the day's metric and the report's total: 7 h x $2 + $120, never $40/h since the stop
    assert (
        digest.reclaimed_today_usd
        == sum(f.saved_usd for f in day_savings(entries, D1).values())
        == sum(report_by_kind(entries, START, end).values())
        == 134.0
    )


def test_the_dashboard_shows_every_long_sweep_metric_the_handlers_count():
    import re
    from pathlib import Path

    counted = set(
        re.findall(
            r'add_metric\(name="([A-Za-z]+)"', (Path(__file__).resolve().parents[2] / "layers/reaper/reaper/sweep/in_parts.py").read_text()
        )
    )
    chain_metrics = {m for m in counted if m in {"SweepDeferred", "SweepOutlastedSchedule", "ContinuationDropped", "ChainRecordUnreadable"}}
    assert len(chain_metrics) == 4, f"the handlers no longer count {chain_metrics}: update this test and the dashboard"
    shown = {r[1] for w in _dashboard()["widgets"] for r in w["properties"]["metrics"] if isinstance(r[0], str) and len(r) > 1}
    assert chain_metrics <= shown
