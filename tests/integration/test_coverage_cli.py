"""`reaper coverage` on a seeded account of GPU boxes as the CloudWatch agent leaves them by default (per-GPU series), with
none, and with the aggregated series; it changes nothing, groups what it cannot judge by reason, and prices it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.cli.main import main
from reaper_devkit import seed_ec2

pytestmark = pytest.mark.usefixtures("fresh_ec2_catalog")

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "reaper:disposable": "true"}
G4_12X = 3.912  # g4dn.12xlarge, us-east-1 Linux On-Demand (reaper/aws/prices.json)


def lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def seed(aws: Any, cw: Any) -> dict[str, str]:
    # Given: 4-GPU boxes: idle on every GPU, busy on one GPU of four, and two with no GPU metric at all
    ec2 = aws.client("ec2")
    now = datetime.now(UTC)
    ids = {}
    for name, per_gpu in (
        ("idle", [[0.0] * 36] * 4),
        ("one-busy", [[0.0] * 36] * 3 + [[90.0] * 4 + [0.0] * 32]),
        ("blind-1", None),
        ("blind-2", None),
    ):
        iid = seed_ec2.instance(ec2, "g4dn.12xlarge", {"Name": name, **DEV}, now=now)
        seed_ec2.metrics(cw, iid, now, gpu=None, per_gpu=per_gpu)
        ids[name] = iid
    return ids


def test_coverage_json_counts_the_blind_gpu_boxes_prices_them_and_names_the_fix_and_the_opt_in(aws, cw, capsys):
    ids = seed(aws, cw)
    # When
    assert main(["coverage", "--kind", "ec2", "--json"]) == 0
    # Then
    out = lines(capsys.readouterr().out)
    (ec2,) = [line for line in out if line["type"] == "coverage"]
    assert (ec2["kind"], ec2["region"], ec2["resources"], ec2["judged"], ec2["unknown"]) == ("ec2", "us-east-1", 4, 2, 2)
    assert ec2["unknown_hourly_usd"] == pytest.approx(2 * G4_12X)
    (reason,) = ec2["reasons"]
    assert reason["code"] == "no-gpu-metric" and reason["resources"] == 2 and reason["hourly_usd"] == pytest.approx(2 * G4_12X)
    assert "nvidia_gpu" in reason["fix"] and reason["opt_in"] == "GpuSsmReads" and reason["opt_in_on"] is False
    (reach,) = [line for line in out if line["type"] == "opt-in"]
    assert reach == {
        "type": "opt-in",
        "opt_in": "GpuSsmReads",
        "on": False,
        "would_reach": 2,
        "hourly_usd": pytest.approx(2 * G4_12X),
        "unpriced": 0,
    }
    # and it is a dry run: nothing stopped, not even the idle box
    assert all(seed_ec2.state(aws.client("ec2"), iid) == "running" for iid in ids.values())


def test_one_busy_gpu_of_four_keeps_the_box_and_every_idle_gpu_lets_it_go(aws, cw, capsys):
    ids = seed(aws, cw)
    assert main(["plan", "--kind", "ec2", "--json"]) == 0
    rows = {r["id"]: r for r in lines(capsys.readouterr().out)}
    assert rows[ids["idle"]]["verdict"] == "act" and rows[ids["idle"]]["unknown"] is None
    busy = rows[ids["one-busy"]]
    assert busy["verdict"] == "keep" and "in use" in busy["reason"] and busy["unknown"] is None
    assert rows[ids["blind-1"]]["verdict"] == "keep" and rows[ids["blind-1"]]["unknown"] == "no-gpu-metric"


def test_coverage_table_says_what_it_cannot_judge_its_cost_and_the_fix(aws, cw, capsys):
    seed(aws, cw)
    assert main(["coverage", "--kind", "ec2"]) == 0
    text = capsys.readouterr().out
    assert "no-gpu-metric: 2 ($7.82/h)" in text and "fix: install the CloudWatch agent" in text
    assert "can't judge 2 of 4 resources ($7.82/h" in text
    assert "GpuSsmReads is off: turning it on would reach up to 2 of them ($7.82/h)" in text


def test_coverage_of_an_account_where_everything_is_judged_says_so(aws, cw, capsys):
    ec2 = aws.client("ec2")
    now = datetime.now(UTC)
    iid = seed_ec2.instance(ec2, "g4dn.12xlarge", {"Name": "agg", **DEV}, now=now)
    seed_ec2.metrics(cw, iid, now)  # the aggregated series (aggregation_dimensions [["InstanceId"]])
    assert main(["coverage", "--kind", "ec2"]) == 0
    assert "every resource was judged on evidence" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["coverage", "--kind", "nope"], ["coverage", "--output", "csv"], ["coverage", "--verdict", "act"]])
def test_coverage_bad_usage_is_exit_2_with_one_line(aws, capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("reaper:")


def test_a_scheduled_sweep_logs_its_coverage_and_publishes_the_dashboard_metrics(aws, cw, deployed_env, lambda_context, capsys):
    # Given: the deployed ec2 function and its action log
    seed(aws, cw)
    from reaper.record.actionlog import ActionLog
    from tests.conftest import event, load_function

    # When: its scheduled sweep runs
    result = load_function("ec2").handler(event("ec2-schedule.json"), lambda_context)
    # Then: the log holds the tally the digest reads, and the EMF lines carry MLReaper/Coverage per kind
    assert result["unknown"] == 2
    now = datetime.now(UTC)
    log = ActionLog(aws.client("dynamodb"), deployed_env["REAPER_TABLE"])
    (entry,) = [e for e in log.stored_entries(now - timedelta(hours=1), now) if e.get("type") == "coverage"]
    assert (entry["kind"], entry["unknown"], entry["reasons"][0]["code"]) == ("ec2", 2, "no-gpu-metric")
    assert entry["reason"] == "judged 2 of 4; can't judge 2 ($7.82/h: no-gpu-metric 2)"  # what `reaper log` shows
    emf = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"MLReaper/Coverage"' in line]
    by_name = {m["_aws"]["CloudWatchMetrics"][0]["Metrics"][0]["Name"]: m for m in emf}
    assert by_name["UnknownResources"]["UnknownResources"] == [2.0] and by_name["UnknownResources"]["Kind"] == "ec2"
    assert by_name["UnknownHourlyUSD"]["UnknownHourlyUSD"] == [pytest.approx(2 * G4_12X)]
