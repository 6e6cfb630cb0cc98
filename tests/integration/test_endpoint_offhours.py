"""Off-hours: dev endpoints go to zero whatever their traffic and come back at the start of working hours."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from reaper.handlers import handle_kind_event
from reaper_devkit import seed_endpoint as se
from reaper_devkit.calls import recording
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function
from tests.helpers.wake import GROUP, OFF_HOURS, RESTORE_ARN, ROLE_ARN, deploy_wake

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
SATURDAY = datetime(2026, 12, 5, 11, 0, tzinfo=UTC)  # 12:00 in Berlin, not a working day


@pytest.fixture
def off_hours(aws, sm, cw, deployed_env, monkeypatch):
    deploy_wake(aws, monkeypatch, OFF_HOURS)
    se.classic(sm, "llm-dev", DEV)
    se.components(sm, "ic-dev", {"ic-a": 1}, DEV)
    se.classic(sm, "llm-prod", {"ml:stage": "prod", "ml:owner": "ops@example.com"})
    for name in ("llm-dev", "ic-dev", "llm-prod"):
        se.invocations(cw, name, SATURDAY, [40, 25, 30])  # busy: off-hours does not care
    return load_function("endpoint")


def schedules(aws) -> dict[str, dict]:
    sched = aws.client("scheduler")
    names = [s["Name"] for s in sched.list_schedules(GroupName=GROUP)["Schedules"]]
    return {n: sched.get_schedule(GroupName=GROUP, Name=n) for n in names}


def test_off_hours_takes_dev_endpoints_to_zero_and_schedules_their_return(aws, sm, off_hours, deployed_env, lambda_context):
    # Given a Saturday, with off-hours and restore-at-work-start on
    # When the sweep runs (twice: a duplicate delivery)
    with recording() as calls:
        result = handle_kind_event(event("endpoint-schedule.json"), "endpoint", off_hours.RUNTIME, now=SATURDAY)
        again = handle_kind_event(event("endpoint-schedule.json"), "endpoint", off_hours.RUNTIME, now=SATURDAY)
    # Then the dev endpoints went to zero, production did not, and the duplicate changed nothing
    assert sorted(result["acted"]) == ["ic-dev", "llm-dev"] and again["acted"] == [] and again["errors"] == []
    assert {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]} == {"ic-dev", "llm-prod"}
    # And one schedule per endpoint brings it back at Monday 08:00 Berlin time, through the restore function
    found = schedules(aws)
    assert len(found) == 2
    for s in found.values():
        assert s["ScheduleExpression"] == "at(2026-12-07T08:00:00)" and s["ScheduleExpressionTimezone"] == "Europe/Berlin"
        assert s["Target"]["Arn"] == RESTORE_ARN and s["Target"]["RoleArn"] == ROLE_ARN
        assert s["ActionAfterCompletion"] == "DELETE"
    inputs = sorted(json.loads(s["Target"]["Input"])["name"] for s in found.values())
    assert inputs == ["ic-dev", "llm-dev"]
    acted = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "act"}
    assert "outside working hours" in acted["llm-dev"]["reason"]
    assert "back at Mon 2026-12-07 08:00 Europe/Berlin" in acted["llm-dev"]["detail"]
    assert calls.actions <= function_actions("EndpointFunction")
    assert calls.ungranted("EndpointFunction") == []  # on the resource it names, conditions included


def test_the_scheduled_restore_brings_them_back(aws, sm, off_hours, deployed_env, lambda_context, monkeypatch):
    handle_kind_event(event("endpoint-schedule.json"), "endpoint", off_hours.RUNTIME, now=SATURDAY)
    # When Monday's schedules invoke the restore function with their input
    monkeypatch.setenv("REAPER_RESTORE_WAIT_MINUTES", "0")
    restore = load_function("restore")
    results = [restore.handler(json.loads(s["Target"]["Input"]), lambda_context) for s in schedules(aws).values()]
    # Then both are back (the classic one recreated, the components' copies set back)
    assert all(r["ok"] for r in results)
    assert {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]} == {"ic-dev", "llm-dev", "llm-prod"}
    assert sm.describe_inference_component(InferenceComponentName="ic-a")["RuntimeConfig"]["DesiredCopyCount"] == 1
