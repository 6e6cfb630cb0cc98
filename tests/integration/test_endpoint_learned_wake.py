"""Learned wake by bursts, replayed (bench/endpoint_wake.py: eight dev endpoints with labelled traffic,
14 days of history, a sweep every 15 minutes for 48 hours through the pipeline's decision, the wake on
time and the endpoint InService its start-up later), and through the endpoint and restore functions
against the moto kit: a burst learned, a wake scheduled its measured start-up before the next one, no
wake for what the admin removed. docs/kinds/endpoint.md, "Learned wake"."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from bench import endpoint_wake as bench
from reaper.handlers import handle_kind_event
from reaper.kinds.endpoint import restore as endpoint_restore
from reaper.record.actionlog import ActionLog
from reaper_devkit import seed_endpoint as se
from reaper_devkit.calls import recording
from reaper_devkit.seed import put_series
from reaper_devkit.template import function_actions
from tests.conftest import TABLE, drain, event, load_function


def test_by_default_no_periodic_caller_is_disrupted_and_the_idle_hours_between_bursts_are_reclaimed():
    # Given eight dev endpoints with labelled traffic and 14 days of history, the stack's default settings
    # When a sweep runs every 15 minutes for 48 hours, and each wake's endpoint is InService 8 min after it
    f = bench.figures(bench.replay(bench.configurations()["default"]))
    print(f"default: { {k: v for k, v in f.items() if k != 'per_endpoint'} }")
    # Then no call of periodic traffic finds its endpoint down, none is zeroed during traffic, and at least
    # 95 % of the reclaimable idle endpoint-hours (no call, nor within the start-up after) are at zero
    assert f["disruptions"] == 0 and f["zeroed_in_traffic"] == 0
    assert f["share"] >= 0.95
    # And every periodic endpoint was woken before each of its bursts (the never-called ones never)
    assert f["per_endpoint"]["six-hourly-refresh"]["wakes"] == 8 and "wakes" not in f["per_endpoint"]["never-called"]


def test_with_the_stacks_default_grace_the_rhythm_is_warned_of_once_and_the_hours_between_bursts_are_reclaimed():
    # Given the same replay with the stack's default grace (60 minutes), after the day each endpoint got its first warning
    name = "default_grace_60_steady"
    f = bench.figures(bench.replay(bench.configurations()[name], bench.WARMUP[name]))
    print(f"{name}: { {k: v for k, v in f.items() if k != 'per_endpoint'} }")
    # Then no periodic caller is disrupted and at least 95 % of the reclaimable idle endpoint-hours are at zero:
    # each burst its own wake brought it back for is followed by a zeroing, not by another hour's warning
    assert f["disruptions"] == 0 and f["zeroed_in_traffic"] == 0
    assert f["share"] >= 0.95
    # And from the deploy on, the first warning costs each endpoint its grace once, not after every burst
    cold = bench.figures(bench.replay(bench.configurations()["default_grace_60"]))
    assert cold["disruptions"] == 0 and cold["share"] > 0.93


def test_without_learned_wake_the_same_replay_disrupts_periodic_traffic():
    # Given the same replay with learned wake turned off (the default before)
    before = bench.figures(bench.replay(bench.configurations()["learned_wake_off"]))
    print(f"learned wake off: { {k: v for k, v in before.items() if k != 'per_endpoint'} }")
    # Then callers find periodic endpoints at zero (and nothing is woken)
    assert before["disruptions"] > 0 and before["wakes"] == 0


# -- the same through the endpoint function, against the moto kit ---------------------------------

WEDNESDAY = datetime(2026, 12, 9, 12, 40, tzinfo=UTC)
DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
RESTORE_ARN = "arn:aws:lambda:us-east-1:123456789012:function:mlreaper-RestoreFunction"
ROLE_ARN = "arn:aws:iam::123456789012:role/mlreaper-RestoreSchedulerRole"
GROUP = "mlreaper-restores"


@pytest.fixture
def learned(aws, sm, cw, deployed_env, monkeypatch):
    for k, v in {
        "REAPER_MODE": "enforce",
        "REAPER_GRACE_MINUTES": "0",
        "REAPER_RESTORE_FUNCTION_ARN": RESTORE_ARN,  # learned wake is on by default where a wake can be scheduled
        "REAPER_SCHEDULER_ROLE_ARN": ROLE_ARN,
        "REAPER_SCHEDULE_GROUP": GROUP,
        "REAPER_RESTORE_WAIT_MINUTES": "0",  # the restore function's, as deployed
    }.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("REAPER_ENDPOINT_LEARNED_WAKE", raising=False)
    monkeypatch.setattr(endpoint_restore, "sleep", lambda _s: None)
    aws.client("scheduler").create_schedule_group(Name=GROUP)
    se.classic(sm, "demo-dev", DEV)  # a demo at 15:00-15:20 every day for the last week
    se.classic(sm, "pinned-dev", {**DEV, "reaper:wake": "mon-fri 12:00-18:00"})  # its owner pinned its hours
    se.classic(sm, "tutorial-dev", DEV)  # never called
    demos = [(WEDNESDAY.replace(hour=15, minute=5 * k) - timedelta(days=d), 6.0) for d in range(1, 8) for k in range(4)]
    put_series(cw, "AWS/SageMaker", "Invocations", {"EndpointName": "demo-dev", "VariantName": "AllTraffic"}, demos)
    return load_function("endpoint")


def _schedules(aws) -> dict[str, dict]:
    sched = aws.client("scheduler")
    return {s["Name"]: sched.get_schedule(GroupName=GROUP, Name=s["Name"]) for s in sched.list_schedules(GroupName=GROUP)["Schedules"]}


def test_the_endpoint_function_learns_the_usual_burst_and_schedules_the_return_before_it(aws, sm, learned, deployed_env, lambda_context):
    # Given three quiet dev endpoints at 12:40 UTC: a daily 15:00-15:20 demo, hours pinned 12:00-18:00, one never called
    # When the endpoint function sweeps
    with recording() as calls:
        result = handle_kind_event(event("endpoint-schedule.json"), "endpoint", learned.RUNTIME, now=WEDNESDAY)
    # Then the pinned one is kept in its hours; the demo and the tutorial go to zero
    assert sorted(result["acted"]) == ["demo-dev", "tutorial-dev"] and result["errors"] == []
    # And the demo comes back at 14:30, the configured lead (no restore has measured its start-up) before its usual 15:00
    (only,) = _schedules(aws).values()
    assert only["ScheduleExpression"] == "at(2026-12-09T14:30:00)" and only["Target"]["Arn"] == RESTORE_ARN
    assert json.loads(only["Target"]["Input"])["name"] == "demo-dev"
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert "back at Wed 2026-12-09 14:30 UTC, 30 min before its usual traffic from 15:00" in messages["demo-dev"]["reason"]
    assert "stays at zero until restored" in messages["tutorial-dev"]["reason"]
    assert "pinned-dev" not in messages and "pinned-dev" in {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]}
    # And the restore record keeps the pre-warm, which the report does not count as saved
    record = learned.RUNTIME.log.latest_restore("endpoint", "demo-dev")
    assert record["prewarm_minutes"] == 30 and record["usual_start"].startswith("2026-12-09T15:00")
    assert calls.actions <= function_actions("EndpointFunction")
    assert calls.ungranted("EndpointFunction") == []


BURST_DAY = datetime(2026, 12, 9, 10, 50, tzinfo=UTC)  # a Wednesday, 20 minutes after its usual 10:00-10:30 burst


def test_after_its_burst_it_goes_to_zero_and_the_wake_comes_its_measured_start_up_before_the_next(
    aws, sm, cw, learned, deployed_env, lambda_context
):
    # Given a dev endpoint called 10:00-10:30 every day for two weeks and today, now 10:50
    se.classic(sm, "burst-dev", DEV)
    se.age("burst-dev", BURST_DAY, 60 * 24 * 2)
    calls = [(BURST_DAY.replace(hour=10, minute=5 * k) - timedelta(days=d), 3.0) for d in range(14) for k in range(6)]
    put_series(cw, "AWS/SageMaker", "Invocations", {"EndpointName": "burst-dev", "VariantName": "AllTraffic"}, calls)
    # And its last restore (a wake two days ago) took 8 minutes from CreateEndpoint to InService, by its restore record
    log = ActionLog(aws.client("dynamodb"), TABLE)
    took = {"status": "restored", "restore_started_at": "2026-12-07T09:30:00+00:00", "restored_at": "2026-12-07T09:38:00+00:00"}
    log.put_restore("endpoint", "burst-dev", {"kind": "endpoint", "name": "burst-dev", **took}, BURST_DAY - timedelta(days=2))
    # When the endpoint function sweeps
    with recording() as seen:
        result = handle_kind_event(event("endpoint-schedule.json"), "endpoint", learned.RUNTIME, now=BURST_DAY)
    # Then it goes to zero now, not after the 120-minute idle window
    assert "burst-dev" in result["acted"] and "burst-dev" not in {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]}
    # And its wake is at 09:45 tomorrow: 8 min measured, a quarter more and 5 min for the schedule, in whole 5 minutes
    (wake,) = [w for w in _schedules(aws).values() if json.loads(w["Target"]["Input"])["name"] == "burst-dev"]
    assert wake["ScheduleExpression"] == "at(2026-12-10T09:45:00)"
    said = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}["burst-dev"]["reason"]
    assert "its usual burst (10:00-10:30 UTC" in said and "lead from its measured start-up of 8 m" in said
    assert seen.ungranted("EndpointFunction") == []
    # When its admin recreates it by hand, and the wake fires anyway (no state event reached the reaper)
    sm.create_endpoint(EndpointName="burst-dev", EndpointConfigName="burst-dev-config")
    fired = load_function("restore").handler(json.loads(wake["Target"]["Input"]), lambda_context)
    # Then the wake does not act on it: the restore is cancelled and the wake deleted
    assert fired["ok"] and "restore cancelled: recreated by someone else" in fired["result"], fired
    assert log.latest_restore("endpoint", "burst-dev")["status"] == "cancelled"
    assert [w for w in _schedules(aws).values() if json.loads(w["Target"]["Input"])["name"] == "burst-dev"] == []
