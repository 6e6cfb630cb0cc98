"""Issue 33, item 12: AWS does not document which ModelId a Provisioned Throughput's traffic carries in
AWS/Bedrock, so "no data in the window" deletes an uncommitted one only once its own series has been
seen (ListMetrics lists it: data within two weeks). One never seen is unknown: told, never deleted,
and counted by `reaper coverage` with its cost and fix. ListMetrics is read once per region, not per
Provisioned Throughput. Through the bedrock-pt function's real handler and the CLI against moto.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.cli.main import main
from reaper_devkit import seed_bedrock
from reaper_devkit.calls import recording
from tests.conftest import drain, event, load_function

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}


def seed(aws: Any, now: datetime) -> dict[str, str]:
    """Three uncommitted PTs in service for 20 days, none invoked in the 7-day window: one whose series was
    seen 7.5 days ago (listed), one never invoked, one last invoked 16 days ago (no longer listed)."""
    bedrock, cw = aws.client("bedrock"), aws.client("cloudwatch")
    old = now - timedelta(days=20)
    arns = {name: seed_bedrock.provisioned(bedrock, name, old, units=2, tags=DEV) for name in ("pt-seen", "pt-never", "pt-gone-quiet")}
    seed_bedrock.seen_before(cw, arns["pt-seen"], now)
    seed_bedrock.invocations(cw, arns["pt-gone-quiet"], now - timedelta(days=16))
    return arns


def test_only_the_pt_whose_series_was_seen_is_deleted_the_never_seen_are_told_and_kept(aws, deployed_env, lambda_context, monkeypatch):
    # Given the three, enforce, no grace
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    monkeypatch.setenv("REAPER_BEDROCK_MODEL_UNIT_HOURLY_USD", "20")  # the admin's override: the dollars below
    bedrock = aws.client("bedrock")
    seed(aws, datetime.now(UTC))
    app = load_function("bedrock_pt")
    # When the scheduled sweep runs
    with recording() as calls:
        result = app.handler(event("bedrock-pt-schedule.json"), lambda_context)
    # Then the one whose series was seen and is quiet is deleted, as before
    assert result["acted"] == ["pt-seen"] and not seed_bedrock.exists(bedrock, "pt-seen")
    # and the two never seen (or no longer listed) are kept, unknown, and their owner is told why and what they cost
    assert seed_bedrock.exists(bedrock, "pt-never") and seed_bedrock.exists(bedrock, "pt-gone-quiet")
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("kind") == "bedrock-pt"}
    for name in ("pt-never", "pt-gone-quiet"):
        told = messages[name]
        assert told["verdict"] == "keep" and told["unknown"] == "bedrock-series-never-seen", told
        assert "lists no AWS/Bedrock Invocations series" in told["reason"] and "$6,720.00 idle over 168 h" in told["reason"]
    # and ListMetrics was read once for the region, not once per Provisioned Throughput
    assert calls.calls["cloudwatch:ListMetrics"] == 1 and calls.calls["cloudwatch:GetMetricData"] == 1
    # When the next sweep runs, the unknown ones are not told again
    app.handler(event("bedrock-pt-schedule.json", id="next"), lambda_context)
    assert [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("kind") == "bedrock-pt"] == []


def test_coverage_counts_the_never_seen_with_their_cost_and_fix(aws, capsys, monkeypatch):
    # Given the three
    seed(aws, datetime.now(UTC))
    # When an admin asks what the reaper cannot judge, without a price per model-unit hour (AWS's Price List has none
    # the reaper can read): the two never seen are unknown and unpriced, never $0
    assert main(["coverage", "--kind", "bedrock-pt", "--json"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    (line,) = [o for o in out if o["type"] == "coverage"]
    assert (line["resources"], line["unknown"], line["unknown_unpriced"]) == (3, 2, 2)
    # And with the admin's override ($20 per model-unit hour), priced (2 model units x $20/h each), with the fix
    monkeypatch.setenv("REAPER_BEDROCK_MODEL_UNIT_HOURLY_USD", "20")
    assert main(["coverage", "--kind", "bedrock-pt", "--json"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    (line,) = [o for o in out if o["type"] == "coverage"]
    assert (line["resources"], line["unknown"], line["unknown_unpriced"]) == (3, 2, 0) and line["unknown_hourly_usd"] == pytest.approx(80.0)
    (reason,) = line["reasons"]
    assert reason["code"] == "bedrock-series-never-seen" and reason["resources"] == 2 and "kill-after" in reason["fix"]


def test_the_kit_lists_a_series_only_with_data_in_the_past_two_weeks(aws, cw):
    # API_ListMetrics: "ListMetrics doesn't return information about metrics if those metrics haven't reported data in the past two weeks"
    now = datetime.now(UTC)
    arns = {
        "fresh": "arn:aws:bedrock:us-east-1:123456789012:provisioned-model/fresh",
        "stale": "arn:aws:bedrock:us-east-1:123456789012:provisioned-model/stale",
    }
    seed_bedrock.invocations(cw, arns["fresh"], now - timedelta(days=13))
    seed_bedrock.invocations(cw, arns["stale"], now - timedelta(days=15))
    listed = cw.list_metrics(Namespace="AWS/Bedrock", MetricName="Invocations")["Metrics"]
    assert [d["Value"] for m in listed for d in m["Dimensions"]] == [arns["fresh"]]
