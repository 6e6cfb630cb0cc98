"""The bedrock-pt function, called with events/bedrock-pt-schedule.json against moto: the issue's
seeded account (idle without commitment, idle committed, renewing in 5 days, busy, new, exempt,
production), dry-run, grace, duplicate delivery, throttling, no action log, and `reaper restore`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.cli.main import main
from reaper.handlers import handle_kind_event
from reaper.record.actionlog import ActionLog
from reaper_devkit import seed_bedrock
from reaper_devkit.calls import recording
from reaper_devkit.template import function_actions
from tests.conftest import TABLE, drain, event, load_function, throttle
from tests.helpers.modes import enforce_mode

CHANGING = {
    "bedrock:DeleteProvisionedModelThroughput",
    "bedrock:CreateProvisionedModelThroughput",
    "bedrock:TagResource",
    "bedrock:UntagResource",
}


@pytest.fixture
def bedrock(aws: Any) -> Any:
    return aws.client("bedrock")


@pytest.fixture
def fleet(bedrock: Any, cw: Any) -> dict[str, str]:
    return seed_bedrock.fleet(bedrock, cw, datetime.now(UTC))


def by_name(aws: Any, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in drain(aws, env["REAPER_QUEUE_URL"]) if m.get("kind") == "bedrock-pt"}


def changes_to(calls: Any, arn: str) -> list[str]:
    return [
        op
        for op, params in calls.made
        if arn in (params.get("provisionedModelId"), params.get("resourceARN")) and not op.startswith(("Get", "List"))
    ]


def test_enforce_deletes_only_the_idle_uncommitted_one_and_reports_each_with_idle_hours_and_dollars(
    aws, bedrock, fleet, deployed_env, lambda_context, monkeypatch
):
    # Given the seeded account, enforce, grace 0, and the admin's override of $20 per model-unit hour
    enforce_mode(monkeypatch)
    monkeypatch.setenv("REAPER_BEDROCK_MODEL_UNIT_HOURLY_USD", "20")
    app = load_function("bedrock_pt")
    # When the scheduled sweep runs
    with recording() as calls:
        result = app.handler(event("bedrock-pt-schedule.json"), lambda_context)
    # Then only the idle one without commitment is deleted
    assert result["acted"] == ["pt-idle"]
    assert not seed_bedrock.exists(bedrock, "pt-idle")
    for name, arn in fleet.items():
        if name != "pt-idle":
            assert seed_bedrock.exists(bedrock, name) and changes_to(calls, arn) == [], name
    assert calls.actions <= function_actions("BedrockPtFunction")
    assert calls.calls["bedrock:DeleteProvisionedModelThroughput"] == 1
    # and each is reported: the deleted and the committed with idle hours and dollars
    messages = by_name(aws, deployed_env)
    deleted = messages["pt-idle"]
    assert deleted["verdict"] == "act" and deleted["executed"] is True
    assert "0 invocations in 7 d" in deleted["reason"] and "$6,720.00 idle over 168 h" in deleted["reason"]  # 2 MU x $20/h x 168 h
    assert "the admin's price per model-unit hour" in deleted["reason"]
    assert deleted["price_source"] == "admin override (BedrockModelUnitHourlyUsd)"
    # and Slack's cost line names the admin's figure as theirs, never as AWS's list price
    from reaper.record.message import VerdictMessage
    from reaper.slack.message import render_message

    rendered = json.dumps(render_message(VerdictMessage.model_validate_json(json.dumps(deleted))).blocks)
    assert "(admin override (BedrockModelUnitHourlyUsd), not AWS's list price)" in rendered and "list price," not in rendered
    assert deleted["undo"].startswith("reaper restore pt-idle")
    committed = messages["pt-committed"]
    assert committed["verdict"] == "keep" and "never does" in committed["reason"] and "$3,360.00 idle over 168 h" in committed["reason"]
    assert "renews automatically" in messages["pt-renewing"]["reason"]
    assert "pt-busy" not in messages and "pt-new" not in messages  # kept in use or unknown: nothing to tell


def test_without_the_admins_override_every_figure_is_unpriced_never_a_hand_kept_price(
    aws, bedrock, fleet, deployed_env, lambda_context, monkeypatch
):
    # Given the seeded account and no BedrockModelUnitHourlyUsd (AWS's Price List has no model-unit hour the reaper reads)
    monkeypatch.delenv("REAPER_BEDROCK_MODEL_UNIT_HOURLY_USD", raising=False)
    app = load_function("bedrock_pt")
    # When the scheduled sweep runs (dry-run)
    app.handler(event("bedrock-pt-schedule.json"), lambda_context)
    # Then the idle one is still judged, and no message carries a dollar figure: unpriced, never $0 or $20
    messages = by_name(aws, deployed_env)
    assert messages["pt-idle"]["verdict"] == "act"
    for name, message in messages.items():
        assert message["hourly_usd"] is None and message["price_source"] is None, name
        assert "$" not in message["reason"], name


def test_every_kept_one_says_why(bedrock, fleet, deployed_env, monkeypatch):
    from reaper.core.settings import Settings
    from reaper.sweep import pipeline
    from reaper.wiring import build_runtime

    rt = build_runtime(Settings(mode="enforce", grace_minutes=0, table=TABLE), region="us-east-1")
    got = {o.resource.id: (o.verdict.value, o.reason) for o in pipeline.sweep(rt, ["bedrock-pt"], datetime.now(UTC), event_id="why")}
    expected = {
        "pt-idle": ("act", "0 invocations"),
        "pt-committed": ("keep", "committed (SixMonths)"),
        "pt-renewing": ("keep", "renews automatically at the end of the term"),
        "pt-busy": ("keep", "12 invocations in the last 7 d"),
        "pt-new": ("keep", "not yet 7 d 00 h of evidence"),
        "pt-exempt": ("exempt", "exempt"),
        "pt-prod": ("exempt", "prod"),
    }
    for name, (verdict, words) in expected.items():
        assert got[name][0] == verdict and words in got[name][1], (name, got[name])


def test_dry_run_changes_nothing(aws, bedrock, fleet, deployed_env, lambda_context):
    app = load_function("bedrock_pt")
    with recording() as calls:
        result = app.handler(event("bedrock-pt-schedule.json"), lambda_context)
    assert result["acted"] == []
    assert not calls.actions & CHANGING
    assert all(seed_bedrock.exists(bedrock, n) for n in fleet)
    assert by_name(aws, deployed_env)["pt-idle"]["executed"] is False


def test_grace_warns_first_then_deletes_after_it(aws, bedrock, fleet, deployed_env, lambda_context, monkeypatch):
    enforce_mode(monkeypatch, grace=60)
    app = load_function("bedrock_pt")
    first = app.handler(event("bedrock-pt-schedule.json"), lambda_context)
    assert first["acted"] == [] and seed_bedrock.exists(bedrock, "pt-idle")
    tags = {t["key"]: t["value"] for t in bedrock.list_tags_for_resource(resourceARN=fleet["pt-idle"])["tags"]}
    assert "reaper:warned-at" in tags
    later = datetime.now(UTC) + timedelta(minutes=65)
    done = handle_kind_event(event("bedrock-pt-schedule.json", id="later"), "bedrock-pt", app.RUNTIME, now=later)
    assert done["acted"] == ["pt-idle"] and not seed_bedrock.exists(bedrock, "pt-idle")
    record = ActionLog(aws.client("dynamodb"), TABLE).latest_restore("bedrock-pt", "pt-idle")
    assert record is not None and "reaper:warned-at" not in record["tags"]


def test_the_renewal_warning_is_posted_once_however_often_the_sweep_runs(aws, fleet, deployed_env, lambda_context, monkeypatch):
    enforce_mode(monkeypatch)
    app = load_function("bedrock_pt")
    for n in range(3):
        app.handler(event("bedrock-pt-schedule.json", id=f"run-{n}"), lambda_context)
    renewals = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("id") == "pt-renewing"]
    assert len(renewals) == 1 and "renews automatically" in renewals[0]["reason"]


def test_the_same_event_three_times_deletes_and_posts_once(aws, fleet, deployed_env, lambda_context, monkeypatch):
    enforce_mode(monkeypatch)
    app = load_function("bedrock_pt")
    results = [app.handler(event("bedrock-pt-schedule.json"), lambda_context) for _ in range(3)]
    assert [r["acted"] for r in results] == [["pt-idle"], [], []]
    acts = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("verdict") == "act"]
    assert [m["id"] for m in acts] == ["pt-idle"]


def test_throttled_delete_is_an_error_and_nothing_is_deleted(aws, bedrock, fleet, deployed_env, lambda_context, monkeypatch):
    enforce_mode(monkeypatch)
    app = load_function("bedrock_pt")
    throttle(monkeypatch, app.RUNTIME.clients("us-east-1")("bedrock"), "delete_provisioned_model_throughput")
    result = app.handler(event("bedrock-pt-schedule.json"), lambda_context)
    assert result["verdicts"].get("error") == 1 and seed_bedrock.exists(bedrock, "pt-idle")
    assert by_name(aws, deployed_env)["pt-idle"]["verdict"] == "error"


def test_without_an_action_log_the_delete_is_refused(aws, bedrock, fleet, queue, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_QUEUE_URL", queue)
    enforce_mode(monkeypatch)
    app = load_function("bedrock_pt")
    with recording() as calls:
        result = app.handler(event("bedrock-pt-schedule.json"), lambda_context)
    assert result["acted"] == [] and seed_bedrock.exists(bedrock, "pt-idle")
    assert calls.calls["bedrock:DeleteProvisionedModelThroughput"] == 0
    refused = by_name(aws, {"REAPER_QUEUE_URL": queue})["pt-idle"]
    assert refused["verdict"] == "error" and "action log" in refused["reason"]


def test_a_protective_tag_added_after_discovery_stops_the_delete(aws, bedrock, fleet, deployed_env, lambda_context, monkeypatch):
    import dataclasses

    from reaper.kinds.bedrock_pt import parts

    enforce_mode(monkeypatch)
    found = parts.PARTS.discover

    def then_tagged(clients, settings, now):
        out = found(clients, settings, now)
        bedrock.tag_resource(resourceARN=fleet["pt-idle"], tags=[{"key": "reaper:exempt", "value": "true"}])
        return out

    # the kind's discover, as its declaration reaches it (kinds/bedrock_pt/parts.py), tags the PT just after listing it
    monkeypatch.setattr(parts, "PARTS", dataclasses.replace(parts.PARTS, discover=then_tagged))
    result = load_function("bedrock_pt").handler(event("bedrock-pt-schedule.json"), lambda_context)
    assert result["acted"] == [] and seed_bedrock.exists(bedrock, "pt-idle")


def test_reaper_restore_recreates_it_with_the_same_model_units_and_tags_in_one_command(
    aws, bedrock, fleet, deployed_env, lambda_context, monkeypatch
):
    enforce_mode(monkeypatch)
    load_function("bedrock_pt").handler(event("bedrock-pt-schedule.json"), lambda_context)
    assert not seed_bedrock.exists(bedrock, "pt-idle")
    with recording() as calls:
        assert main(["restore", "pt-idle"]) == 0
    assert calls.actions <= function_actions("RestoreFunction")
    [pt] = [s for s in bedrock.list_provisioned_model_throughputs()["provisionedModelSummaries"] if s["provisionedModelName"] == "pt-idle"]
    assert pt["modelUnits"] == 2 and pt["modelArn"].endswith("foundation-model/anthropic.claude-v2") and "commitmentDuration" not in pt
    tags = {t["key"]: t["value"] for t in bedrock.list_tags_for_resource(resourceARN=pt["provisionedModelArn"])["tags"]}
    assert tags["ml:owner"] == "ana@example.com" and tags["ml:project"] == "chat" and tags["reaper:restored-from"] == fleet["pt-idle"]
    assert main(["restore", "pt-idle"]) == 0  # a second restore says so and creates nothing
    assert len(bedrock.list_provisioned_model_throughputs()["provisionedModelSummaries"]) == len(fleet)
