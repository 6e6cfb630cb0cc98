"""SageMaker Endpoint State Change events through the endpoint function: owner checks, restores followed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reaper.kinds.endpoint import restore as endpoint_restore
from reaper.record.actionlog import ActionLog
from reaper_devkit import seed_endpoint as se
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext.sagemaker_inference import script_status, set_status
from reaper_devkit.template import function_actions
from tests.conftest import TABLE, drain, event, load_function

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "reaper:kill-after": "2099-01-01"}
KILL = {"reaper:kill-after": "2099-01-01"}  # a kill date: no "neither a kill date nor a budget" notice


@pytest.fixture
def aas(aws):
    return aws.client("application-autoscaling")


@pytest.mark.parametrize(
    ("tags", "problems"),
    [
        ({"ml:stage": "dev", **KILL}, ["ml:owner"]),
        (KILL, ["ml:owner", "ml:stage"]),
        ({"ml:owner": "ana@example.com", **KILL}, ["ml:stage"]),
    ],
)
def test_a_new_endpoint_missing_what_the_reaper_needs_is_reported_once(aws, sm, deployed_env, lambda_context, tags, problems):
    # Given a new endpoint without an owner (or stage)
    se.classic(sm, "llm-dev", tags)
    app = load_function("endpoint")
    # When its Creating event is delivered three times
    with recording() as calls:
        results = [app.handler(event("endpoint-state-creating.json"), lambda_context) for _ in range(3)]
    # Then it is reported at once, and once
    assert [r["posted"] for r in results] == [True, False, False]
    assert [p.split("`")[1] for p in results[0]["problems"]] == problems
    notices = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert len(notices) == 1 and notices[0]["type"] == "notice" and "add-tags" in notices[0]["text"]
    assert notices[0]["title"] == "Endpoint llm-dev was created without what the reaper needs"
    assert calls.actions <= function_actions("EndpointFunction")
    assert calls.ungranted("EndpointFunction") == []  # on the resource it names, conditions included


def test_a_new_endpoint_with_neither_a_kill_date_nor_a_budget_is_told_once_and_an_update_says_nothing(
    aws, sm, deployed_env, lambda_context, monkeypatch
):
    # Given a new endpoint with owner and stage, but no kill date and no budgeted project
    se.classic(sm, "llm-dev", {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "vision"})
    app = load_function("endpoint")
    results = [app.handler(event("endpoint-state-creating.json"), lambda_context) for _ in range(2)]
    # Then the Creating event tells it once
    assert [r["posted"] for r in results] == [True, False]
    assert len(results[0]["problems"]) == 1 and "neither a kill date nor a budgeted project" in results[0]["problems"][0]
    assert "its ml:project (vision)" in results[0]["problems"][0]
    drain(aws, deployed_env["REAPER_QUEUE_URL"])
    # And with vision budgeted by the stack, nothing is said
    monkeypatch.setenv("REAPER_PROJECT_BUDGETS", "vision=800")
    budgeted = load_function("endpoint").handler(event("endpoint-state-creating.json", id="budgeted"), lambda_context)
    assert budgeted["problems"] == [] and budgeted["posted"] is False


@pytest.mark.parametrize("tags", [DEV, {"ml:stage": "prod"}])
def test_an_endpoint_with_what_it_needs_or_in_production_says_nothing(aws, sm, deployed_env, lambda_context, tags):
    se.classic(sm, "llm-dev", tags)
    app = load_function("endpoint")
    result = app.handler(event("endpoint-state-creating.json"), lambda_context)
    assert result["problems"] == [] and result["posted"] is False
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


def test_an_endpoint_deleted_before_its_event_is_skipped(aws, sm, deployed_env, lambda_context):
    app = load_function("endpoint")
    result = app.handler(event("endpoint-state-creating.json"), lambda_context)
    assert result["skipped"] == "deleted since" and drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


def test_in_service_without_a_restore_in_progress_changes_nothing(aws, sm, deployed_env, lambda_context):
    se.classic(sm, "llm-dev", DEV)
    app = load_function("endpoint")
    result = app.handler(event("endpoint-state-inservice.json"), lambda_context)
    assert result["checked"] is None and drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


@pytest.fixture
def restoring(aws, sm, aas, deployed_env, lambda_context, monkeypatch):
    """llm-dev deleted by an enforce sweep, then recreated by the restore function (which does not wait)."""
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    monkeypatch.setattr(endpoint_restore, "sleep", lambda _s: None)
    se.classic(sm, "llm-dev", DEV)
    se.age("llm-dev", datetime.now(UTC), 300)
    se.autoscale(aas, "llm-dev", minimum=1, maximum=2)
    assert load_function("endpoint").handler(event("endpoint-schedule.json"), lambda_context)["acted"] == ["llm-dev"]
    monkeypatch.setenv("REAPER_RESTORE_WAIT_MINUTES", "0")
    script_status("llm-dev", ["Creating", "Creating"])  # still Creating when the function looks
    started = load_function("restore").handler(event("restore-request.json"), lambda_context)
    assert started["ok"] and "Creating" in started["result"]
    assert aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"] == []  # not before InService
    drain(aws, deployed_env["REAPER_QUEUE_URL"])
    return load_function("endpoint")


def test_a_restore_in_progress_is_finished_when_in_service_and_posted_once(aws, sm, aas, restoring, deployed_env, lambda_context):
    # Given the recreated endpoint became InService
    set_status("llm-dev", "InService")
    # When the InService event is delivered three times
    with recording() as calls:
        results = [restoring.handler(event("endpoint-state-inservice.json"), lambda_context) for _ in range(3)]
    # Then the restore is finished once: autoscaling back, owner told, record restored
    assert [r.get("restore") for r in results] == ["finished", None, None]  # later deliveries find it restored
    targets = aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]
    assert [(t["ResourceId"], t["MinCapacity"], t["MaxCapacity"]) for t in targets] == [("endpoint/llm-dev/variant/AllTraffic", 1, 2)]
    notices = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert [n["title"] for n in notices] == ["Endpoint llm-dev is back"]
    record = ActionLog(aws.client("dynamodb"), TABLE).latest_restore("endpoint", "llm-dev")
    assert record is not None and record["status"] == "restored"
    assert calls.actions <= function_actions("EndpointFunction")
    assert calls.ungranted("EndpointFunction") == []  # on the resource it names, conditions included


def test_a_restore_that_fails_is_reported_once_with_the_reason(aws, sm, restoring, deployed_env, lambda_context):
    script_status("llm-dev", ["Failed"])  # AWS gave up on it
    results = [restoring.handler(event("endpoint-state-failed.json"), lambda_context) for _ in range(2)]
    assert results[0]["restore"] == "failed" and results[1].get("restore") is None
    notices = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert len(notices) == 1 and notices[0]["title"] == "Endpoint llm-dev did not come back"
    assert "ping health check" in notices[0]["text"] and "reaper restore llm-dev" in notices[0]["text"]
