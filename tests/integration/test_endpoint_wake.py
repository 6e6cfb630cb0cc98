"""A wake brings back only what is still the reaper's: never what an admin deleted, recreated or exempted.

Off-hours takes three dev endpoints to zero on a Saturday (classic llm-dev deleted, ic-dev's copies
and async-dev's instances to 0), each with a wake schedule for Monday 08:00. The wakes are fired as
Scheduler would (the restore function with the schedule's input); the admins act with their own
clients; the endpoint function gets the state-change events. docs/kinds/endpoint.md, "Wake";
the attacks and their figures: docs/safety.md, "Wakes and what the admin removed".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

import pytest
from botocore.client import BaseClient

from reaper.cli.main import main
from reaper.handlers import handle_kind_event
from reaper.kinds.endpoint import restore as endpoint_restore
from reaper.record.actionlog import ActionLog
from reaper_devkit import seed_endpoint as se
from reaper_devkit.calls import recording
from reaper_devkit.template import function_actions
from tests.conftest import TABLE, drain, event, load_function
from tests.helpers.wake import GROUP, OFF_HOURS, deploy_wake

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
SATURDAY = datetime(2026, 12, 5, 11, 0, tzinfo=UTC)
MONDAY = datetime(2026, 12, 7, 7, 0, tzinfo=UTC)  # 08:00 in Berlin: the wakes fire
ENDPOINTS = ("llm-dev", "ic-dev", "async-dev")


class Weekend:
    def __init__(self, aws: Any, endpoint_fn: ModuleType, restore_fn: ModuleType, wakes: dict[str, dict[str, str]], ctx: Any) -> None:
        self.aws, self.endpoint_fn, self.restore_fn, self.wakes, self.ctx = aws, endpoint_fn, restore_fn, wakes, ctx

    def fire(self, name: str) -> dict[str, Any]:
        """The wake's schedule invokes the restore function with its input, as Scheduler does."""
        result: dict[str, Any] = self.restore_fn.handler(dict(self.wakes[name]), self.ctx)
        return result

    def state(self, name: str, status: str, n: int = 0) -> dict[str, Any]:
        """SageMaker's state-change event for the endpoint, to the endpoint function."""
        ev = event("endpoint-state-creating.json", id=f"evt-{name}-{status}-{n}")
        arn = f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{name}"
        detail = {"EndpointName": name, "EndpointArn": arn, "EndpointStatus": status, "EndpointConfigName": f"{name}-config"}
        ev["detail"] = {**ev["detail"], **detail}
        ev["resources"] = [arn]
        result: dict[str, Any] = handle_kind_event(ev, "endpoint", self.endpoint_fn.RUNTIME, now=MONDAY)
        return result

    def record(self, name: str) -> dict[str, Any]:
        found = ActionLog(self.aws.client("dynamodb"), TABLE).latest_restore("endpoint", name)
        assert found is not None
        return found

    def scheduled(self) -> set[str]:
        """The endpoints that still have a wake schedule."""
        sched = self.aws.client("scheduler")
        return {
            json.loads(sched.get_schedule(GroupName=GROUP, Name=s["Name"])["Target"]["Input"])["name"]
            for s in sched.list_schedules(GroupName=GROUP)["Schedules"]
        }

    def notices(self, queue: str) -> list[dict[str, Any]]:
        return [m for m in drain(self.aws, queue) if m.get("type") == "notice"]


@pytest.fixture
def weekend(aws, sm, cw, deployed_env, monkeypatch, lambda_context) -> Weekend:
    deploy_wake(aws, monkeypatch, {**OFF_HOURS, "REAPER_RESTORE_WAIT_MINUTES": "0"})  # its wait: the restore function's, as deployed
    monkeypatch.setattr(endpoint_restore, "sleep", lambda _s: None)
    se.classic(sm, "llm-dev", DEV)
    se.components(sm, "ic-dev", {"ic-a": 1}, DEV)
    se.asynchronous(sm, "async-dev", DEV, count=2)
    for name in ENDPOINTS:
        se.invocations(cw, name, SATURDAY, [40, 25, 30])  # busy: off-hours does not care
    endpoint_fn = load_function("endpoint")
    result = handle_kind_event(event("endpoint-schedule.json"), "endpoint", endpoint_fn.RUNTIME, now=SATURDAY)
    assert sorted(result["acted"]) == sorted(ENDPOINTS), result
    sched = aws.client("scheduler")
    names = [s["Name"] for s in sched.list_schedules(GroupName=GROUP)["Schedules"]]
    inputs = [json.loads(sched.get_schedule(GroupName=GROUP, Name=n)["Target"]["Input"]) for n in names]
    wakes = {i["name"]: i for i in inputs}
    assert set(wakes) == set(ENDPOINTS)
    drain(aws, deployed_env["REAPER_QUEUE_URL"])
    return Weekend(aws, endpoint_fn, load_function("restore"), wakes, lambda_context)


def _endpoints(sm: Any) -> set[str]:
    return {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]}


def _copies(sm: Any) -> int:
    return int(sm.describe_inference_component(InferenceComponentName="ic-a")["RuntimeConfig"]["DesiredCopyCount"])


def _instances(sm: Any) -> int:
    return int(sm.describe_endpoint(EndpointName="async-dev")["ProductionVariants"][0]["DesiredInstanceCount"])


# -- the normal wake ---------------------------------------------------------------------------


def test_the_wake_still_restores_what_the_reaper_zeroed_and_leaves_no_schedule(weekend, sm, deployed_env):
    # Given each wake's input names its schedule (what tells the restore function it is a wake)
    assert all(w["wake"].startswith(f"mlr-wake-{n}-") for n, w in weekend.wakes.items())
    # When Monday's wakes fire
    with recording() as calls:
        results = {name: weekend.fire(name) for name in ENDPOINTS}
    # Then all three are back
    assert all(r["ok"] for r in results.values()), results
    assert _endpoints(sm) == set(ENDPOINTS) and _copies(sm) == 1 and _instances(sm) == 2
    # And every restore record is closed and no wake is left scheduled
    assert {weekend.record(n)["status"] for n in ENDPOINTS} <= {"restored", "restoring"}
    assert weekend.scheduled() == set()
    assert calls.actions <= function_actions("RestoreFunction")
    assert calls.ungranted("RestoreFunction") == []


# -- restored, then deleted by its admin -------------------------------------------------------------


def test_restored_by_reaper_restore_then_deleted_by_its_admin_stays_deleted(weekend, sm, capsys):
    # Given llm-dev brought back by `reaper restore` on Sunday: its wake is deleted with it
    assert main(["restore", "llm-dev"]) == 0
    assert "llm-dev" not in weekend.scheduled() and weekend.scheduled() == {"ic-dev", "async-dev"}
    # And its admin deletes it
    sm.delete_endpoint(EndpointName="llm-dev")
    # When a wake for it fires anyway (Scheduler had already queued it)
    result = weekend.fire("llm-dev")
    # Then nothing is recreated
    assert result["ok"] and "nothing done" in result["result"]
    assert "llm-dev" not in _endpoints(sm)


def test_restored_by_the_slack_button_its_wake_is_deleted(weekend, sm):
    # Given the owner clicks Restore in Slack (the restore function, asked by a person)
    result = weekend.restore_fn.handler({"name": "ic-dev", "reason": "Restore clicked in Slack by U0ANA"}, weekend.ctx)
    # Then it is back and no wake is left for it
    assert result["ok"] and _copies(sm) == 1
    assert weekend.scheduled() == {"llm-dev", "async-dev"}


def test_recreated_by_hand_then_deleted_by_its_admin_the_wake_does_nothing(weekend, sm, deployed_env):
    # Given someone recreates llm-dev from the console, and its Creating event arrives (twice)
    sm.create_endpoint(EndpointName="llm-dev", EndpointConfigName="llm-dev-config")
    first, again = weekend.state("llm-dev", "CREATING"), weekend.state("llm-dev", "CREATING", 1)
    # Then the reaper's restore is cancelled, once, and its wake deleted
    assert "restore cancelled: recreated by someone else" in first["restore"] and "restore" not in again  # closed: nothing to cancel
    assert weekend.record("llm-dev")["status"] == "cancelled" and "llm-dev" not in weekend.scheduled()
    cancelled = [n for n in weekend.notices(deployed_env["REAPER_QUEUE_URL"]) if "restore cancelled" in n["text"]]
    assert len(cancelled) == 1 and cancelled[0]["id"] == "llm-dev"
    # When its admin deletes it, and a wake fires anyway
    sm.delete_endpoint(EndpointName="llm-dev")
    result = weekend.fire("llm-dev")
    # Then it stays deleted
    assert result["ok"] and "nothing done" in result["result"] and "llm-dev" not in _endpoints(sm)


@pytest.mark.parametrize("name", ["ic-dev", "async-dev"])
def test_deleted_at_zero_by_its_admin_the_wake_cancels_once(weekend, sm, deployed_env, name):
    # Given the admin deletes the endpoint while it is at zero, and no state event reaches the reaper
    for ic in sm.list_inference_components(EndpointNameEquals=name)["InferenceComponents"]:
        sm.delete_inference_component(InferenceComponentName=ic["InferenceComponentName"])
    sm.delete_endpoint(EndpointName=name)
    # When its wake fires, twice (Scheduler's retry)
    first, again = weekend.fire(name), weekend.fire(name)
    # Then nothing comes back, the restore is cancelled and said once, and the wake is deleted
    assert name not in _endpoints(sm)
    assert first["ok"] and "restore cancelled: deleted by someone else" in first["result"]
    assert again["ok"] and "nothing done" in again["result"]
    record = weekend.record(name)
    assert record["status"] == "cancelled" and record["cancelled"] == "deleted by someone else"
    said = [n for n in weekend.notices(deployed_env["REAPER_QUEUE_URL"]) if "restore cancelled: deleted by someone else" in n["text"]]
    assert len(said) == 1
    assert name not in weekend.scheduled()


def test_the_deleting_event_cancels_before_the_wake(weekend, sm):
    # Given the admin deletes ic-dev at zero and its Deleting event reaches the endpoint function
    sm.delete_inference_component(InferenceComponentName="ic-a")
    sm.delete_endpoint(EndpointName="ic-dev")
    result = weekend.state("ic-dev", "DELETING")
    # Then the restore is cancelled and the wake deleted before it fires
    assert "restore cancelled: deleted by someone else" in result["restore"]
    assert "ic-dev" not in weekend.scheduled() and weekend.record("ic-dev")["status"] == "cancelled"
    # And a wake Scheduler had already sent does nothing
    assert "nothing done" in weekend.fire("ic-dev")["result"] and "ic-dev" not in _endpoints(sm)


# -- exempted while at zero ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["ic-dev", "async-dev"])
def test_exempted_at_zero_is_not_brought_back(weekend, sm, deployed_env, name):
    # Given the owner tags the endpoint reaper:exempt=true while it is at zero
    arn = sm.describe_endpoint(EndpointName=name)["EndpointArn"]
    sm.add_tags(ResourceArn=arn, Tags=[{"Key": "reaper:exempt", "Value": "true"}])
    # When its wake fires
    result = weekend.fire(name)
    # Then it stays at zero, the restore is cancelled once and the wake deleted
    assert result["ok"] and "restore cancelled: tagged reaper:exempt=true while at zero" in result["result"]
    assert (_copies(sm) if name == "ic-dev" else _instances(sm)) == 0
    assert weekend.record(name)["status"] == "cancelled" and name not in weekend.scheduled()


# -- the attacks: races and repeated deliveries (docs/safety.md, "Wakes and what the admin removed") --------


@contextmanager
def just_before(operation: str, attack: Callable[[], None], nth: int = 1) -> Iterator[list[str]]:
    """Run `attack` (someone else's change) once, just before the reaper's `nth` `operation` call: the
    race between the wake's check and its change."""
    original = BaseClient._make_api_call
    fired: list[str] = []
    seen: list[str] = []

    def wrapped(self: BaseClient, name: str, params: Any) -> Any:
        if name == operation and not fired:
            seen.append(name)
            if len(seen) == nth:
                fired.append(name)
                attack()
        return original(self, name, params)

    BaseClient._make_api_call = wrapped  # type: ignore[method-assign]
    try:
        yield fired
    finally:
        BaseClient._make_api_call = original  # type: ignore[method-assign]


def test_race_recreated_between_the_check_and_create_endpoint(weekend, sm, aws):
    # Given someone recreates llm-dev just after the wake found it absent
    admin = aws.client("sagemaker")
    with just_before("CreateEndpoint", lambda: admin.create_endpoint(EndpointName="llm-dev", EndpointConfigName="llm-dev-config")) as fired:
        result = weekend.fire("llm-dev")
    # Then the wake's CreateEndpoint is refused (the name exists): read as theirs, cancelled, not an error
    assert fired and result["ok"] and "restore cancelled: recreated by someone else" in result["result"]
    assert weekend.record("llm-dev")["status"] == "cancelled" and "llm-dev" not in weekend.scheduled()
    # And when they delete it, nothing brings it back
    sm.delete_endpoint(EndpointName="llm-dev")
    assert "nothing done" in weekend.fire("llm-dev")["result"] and "llm-dev" not in _endpoints(sm)


def test_race_deleted_between_the_check_and_the_copies(weekend, sm, aws):
    admin = aws.client("sagemaker")

    def delete() -> None:
        admin.delete_inference_component(InferenceComponentName="ic-a")
        admin.delete_endpoint(EndpointName="ic-dev")

    with just_before("UpdateInferenceComponentRuntimeConfig", delete) as fired:
        result = weekend.fire("ic-dev")
    assert fired and result["ok"] and "restore cancelled: deleted by someone else" in result["result"], result
    assert "ic-dev" not in _endpoints(sm) and weekend.record("ic-dev")["status"] == "cancelled"


def test_race_async_deleted_between_the_check_and_the_restore(weekend, sm, aws):
    admin = aws.client("sagemaker")
    # the check reads DescribeEndpoint (1st) and ListTags; the restore starts with DescribeEndpoint (2nd)
    with just_before("DescribeEndpoint", lambda: admin.delete_endpoint(EndpointName="async-dev"), nth=2) as fired:
        result = weekend.fire("async-dev")
    assert fired and result["ok"] and "restore cancelled: deleted by someone else" in result["result"], result
    assert "async-dev" not in _endpoints(sm)


def test_duplicate_delivery_of_a_wake_creates_the_endpoint_once(weekend, sm, deployed_env):
    # When Scheduler (or Lambda's retry) delivers llm-dev's wake twice
    with recording() as calls:
        first, again = weekend.fire("llm-dev"), weekend.fire("llm-dev")
    # Then it is created once, and the second delivery changes nothing
    assert first["ok"] and again["ok"] and "llm-dev" in _endpoints(sm)
    assert calls.calls["sagemaker:CreateEndpoint"] == 1
    restoring = [n for n in weekend.notices(deployed_env["REAPER_QUEUE_URL"]) if n["title"] == "Restoring endpoint llm-dev"]
    assert len(restoring) == 1


def test_a_retried_wake_after_the_admin_deleted_the_restored_endpoint_does_nothing(weekend, sm):
    assert weekend.fire("llm-dev")["ok"] and "llm-dev" in _endpoints(sm)
    sm.delete_endpoint(EndpointName="llm-dev")  # its admin does not want it today
    result = weekend.fire("llm-dev")  # the same delivery again (Lambda's async retry)
    assert result["ok"] and "nothing done" in result["result"] and "llm-dev" not in _endpoints(sm)


def test_the_reapers_own_state_events_cancel_nothing(weekend, sm):
    # the reaper's own DeleteEndpoint (Saturday) and its own recreation (Monday's wake) are not someone else's
    assert "restore" not in weekend.state("llm-dev", "DELETING")
    assert weekend.record("llm-dev")["status"] == "reaped"
    weekend.fire("llm-dev")
    assert weekend.state("llm-dev", "CREATING").get("restore") != "cancelled"
    assert weekend.record("llm-dev")["status"] in ("restoring", "restored")
    assert weekend.state("ic-dev", "UPDATING").get("restore") is None and weekend.record("ic-dev")["status"] == "reaped"


def test_a_wake_left_from_another_reap_does_nothing(weekend, sm):
    stale = {**weekend.wakes["llm-dev"], "wake": "mlr-wake-llm-dev-000000-202611300800"}
    result = weekend.restore_fn.handler(stale, weekend.ctx)
    assert result["ok"] and "not by this schedule" in result["result"] and "llm-dev" not in _endpoints(sm)
