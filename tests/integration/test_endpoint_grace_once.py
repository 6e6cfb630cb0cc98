"""Learned wake with the stack's default grace (60 min): the owner is warned once per rhythm, then the endpoint
goes to zero after each burst its own wake brought it back for, with no new warning; anything else brings
the warning back, and an owner's exempt or snooze always wins. Through the endpoint function (sweeps and
state-change events) and the restore function (the wake, as Scheduler invokes it) against the moto kit.
docs/kinds/endpoint.md, "The grace, once per rhythm"; the attacks: docs/safety.md, "The grace once per rhythm".
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from types import ModuleType
from typing import Any

import pytest

from reaper.handlers import handle_kind_event
from reaper.kinds.endpoint import restore as endpoint_restore
from reaper.record.actionlog import ActionLog
from reaper.restore.request import handle_restore_request
from reaper_devkit import seed_endpoint as se
from reaper_devkit.calls import recording
from reaper_devkit.seed import put_series
from tests.conftest import TABLE, drain, event, load_function
from tests.helpers.wake import GROUP, WAKE_TARGETS

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
NAME = "burst-dev"
DAY = datetime(2026, 12, 9, tzinfo=UTC)  # a Wednesday; its usual burst is 10:00-10:30 UTC every day
NEXT = DAY + timedelta(days=1)
DIMS = {"EndpointName": NAME, "VariantName": "AllTraffic"}


def _burst(day: datetime) -> list[tuple[datetime, float]]:
    return [(day.replace(hour=10, minute=5 * k), 3.0) for k in range(6)]


class Chain:
    """One dev endpoint with a daily burst, the endpoint and restore functions as deployed, and its action log."""

    def __init__(self, aws: Any, sm: Any, cw: Any, endpoint_fn: ModuleType, restore_fn: ModuleType, queue: str) -> None:
        self.aws, self.sm, self.cw, self.endpoint_fn, self.restore_fn, self.queue = aws, sm, cw, endpoint_fn, restore_fn, queue
        self.log = ActionLog(aws.client("dynamodb"), TABLE)

    def sweep(self, now: datetime, sweep_id: str | None = None) -> dict[str, Any]:
        ev = event("endpoint-schedule.json", id=sweep_id or f"sweep-{now:%Y%m%d%H%M}")
        result: dict[str, Any] = handle_kind_event(ev, "endpoint", self.endpoint_fn.RUNTIME, now=now)
        return result

    def messages(self) -> list[dict[str, Any]]:
        return [m for m in drain(self.aws, self.queue) if m.get("id") == NAME and m.get("type") != "notice"]

    def wakes(self) -> list[dict[str, Any]]:
        sched = self.aws.client("scheduler")
        found = [sched.get_schedule(GroupName=GROUP, Name=s["Name"]) for s in sched.list_schedules(GroupName=GROUP)["Schedules"]]
        return [json.loads(s["Target"]["Input"]) | {"expression": s["ScheduleExpression"]} for s in found]

    def fire(self, wake: dict[str, Any], now: datetime) -> dict[str, Any]:
        """The wake's schedule invokes the restore function with its input, as Scheduler does."""
        payload = {k: v for k, v in wake.items() if k != "expression"}
        return handle_restore_request(payload, self.restore_fn.RUNTIME, now=now)

    def in_service(self, now: datetime, n: int = 0) -> dict[str, Any]:
        """SageMaker's state-change event: the recreated endpoint is InService (it was created at the wake)."""
        se.age(NAME, now, 8)
        ev = event("endpoint-state-creating.json", id=f"evt-{NAME}-in-service-{n}")
        arn = f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{NAME}"
        detail = {"EndpointName": NAME, "EndpointArn": arn, "EndpointStatus": "IN_SERVICE", "EndpointConfigName": f"{NAME}-config"}
        ev["detail"] = {**ev["detail"], **detail}
        ev["resources"] = [arn]
        result: dict[str, Any] = handle_kind_event(ev, "endpoint", self.endpoint_fn.RUNTIME, now=now)
        return result

    def exists(self) -> bool:
        return NAME in {e["EndpointName"] for e in self.sm.list_endpoints()["Endpoints"]}

    def tag(self, tags: dict[str, str]) -> None:
        arn = self.sm.describe_endpoint(EndpointName=NAME)["EndpointArn"]
        self.sm.add_tags(ResourceArn=arn, Tags=[{"Key": k, "Value": v} for k, v in tags.items()])

    def woken_for_its_next_burst(self) -> dict[str, Any]:
        """The first warning after its burst, the zeroing an hour later, and the wake before the next burst."""
        self.sweep(DAY.replace(hour=10, minute=50))
        (warned,) = self.messages()
        assert warned["verdict"] == "warn", warned
        acted = self.sweep(DAY.replace(hour=11, minute=50))
        assert acted["acted"] == [NAME] and not self.exists(), acted
        self.messages()
        (wake,) = self.wakes()
        assert wake["expression"] == "at(2026-12-10T09:30:00)"
        fired = self.fire(wake, NEXT.replace(hour=9, minute=30))
        assert fired["ok"] and self.exists(), fired
        self.in_service(NEXT.replace(hour=9, minute=38))
        assert self.log.latest_restore("endpoint", NAME)["status"] == "restored"
        return wake


@pytest.fixture
def chain(aws, sm, cw, deployed_env, monkeypatch) -> Chain:
    for k, v in {"REAPER_MODE": "enforce", "REAPER_RESTORE_WAIT_MINUTES": "0", **WAKE_TARGETS}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("REAPER_GRACE_MINUTES", raising=False)  # the stack's default grace: 60 minutes
    monkeypatch.delenv("REAPER_ENDPOINT_LEARNED_WAKE", raising=False)  # on by default where a wake can be scheduled
    monkeypatch.setattr(endpoint_restore, "sleep", lambda _s: None)
    aws.client("scheduler").create_schedule_group(Name=GROUP)
    se.classic(sm, NAME, DEV)
    se.age(NAME, DAY.replace(hour=10, minute=50), 60 * 24 * 2)
    calls = [p for d in range(15) for p in _burst(DAY - timedelta(days=d))] + _burst(NEXT)  # 14 days, today, tomorrow
    put_series(cw, "AWS/SageMaker", "Invocations", DIMS, calls)
    return Chain(aws, sm, cw, load_function("endpoint"), load_function("restore"), deployed_env["REAPER_QUEUE_URL"])


def test_the_first_warning_says_the_whole_rhythm(chain):
    # Given a dev endpoint whose usual burst is over, with the stack's default grace
    # When the endpoint function sweeps
    chain.sweep(DAY.replace(hour=10, minute=50))
    # Then its owner is warned, and the warning says it goes to zero between its bursts and is woken before each
    (warned,) = chain.messages()
    assert warned["verdict"] == "warn" and chain.exists()
    assert "back at Thu 2026-12-10 09:30 UTC" in warned["reason"]
    assert (
        "from then on it goes to zero after each of its usual bursts and is woken before the next, with no new warning"
        in (warned["reason"])
    )


def test_after_the_burst_its_own_wake_brought_it_back_for_it_goes_to_zero_without_a_new_warning(chain):
    # Given it was warned, went to zero after the grace, and its wake brought it back before today's burst
    wake = chain.woken_for_its_next_burst()
    # When the endpoint function sweeps 20 minutes after today's burst
    with recording() as seen:
        result = chain.sweep(NEXT.replace(hour=10, minute=50))
    # Then it goes to zero at once (before: warned again, and zeroed only an hour later), and that zeroing is posted
    assert result["acted"] == [NAME] and not chain.exists(), result
    (acted,) = chain.messages()
    assert acted["verdict"] == "act"
    assert "no new warning: its owner was warned of this rhythm at 2026-12-09T10:50:00Z" in acted["reason"]
    # And the next wake is scheduled, its restore record carrying the first warning on
    (nxt,) = chain.wakes()
    assert nxt["wake"] != wake["wake"] and nxt["expression"] == "at(2026-12-11T09:30:00)"
    record = chain.log.latest_restore("endpoint", NAME)
    assert record["status"] == "reaped" and record["rhythm_warned_at"] == "2026-12-09T10:50:00Z"
    assert seen.ungranted("EndpointFunction") == []


def test_a_call_outside_its_burst_after_the_wake_brings_the_warning_back(chain, cw):
    # Given its wake brought it back, and a caller used it at 09:40, before its usual burst began
    chain.woken_for_its_next_burst()
    put_series(cw, "AWS/SageMaker", "Invocations", DIMS, [(NEXT.replace(hour=9, minute=40), 1.0)])
    # When the sweeps go on after its burst and its idle window
    kept = chain.sweep(NEXT.replace(hour=10, minute=50))
    later = chain.sweep(NEXT.replace(hour=12, minute=35))
    # Then it is not zeroed without a warning: a change in use gives the full warning and grace again
    assert kept["acted"] == [] and later["acted"] == [] and chain.exists()
    (warned,) = chain.messages()
    assert warned["verdict"] == "warn" and "from then on it goes to zero" in warned["reason"]


def test_a_call_since_the_wake_older_than_a_short_idle_window_still_brings_the_warning_back(chain, cw, monkeypatch):
    # Given an account idle window of 30 minutes, its wake brought it back at 09:30 and someone called it at 09:40
    monkeypatch.setenv("REAPER_IDLE_MINUTES_ENDPOINT", "30")
    chain.endpoint_fn = load_function("endpoint")  # its cold start reads the environment
    chain.woken_for_its_next_burst()
    put_series(cw, "AWS/SageMaker", "Invocations", DIMS, [(NEXT.replace(hour=9, minute=40), 1.0)])
    # When it is swept 20 minutes after its burst: every call in the 30-minute window fell in the burst
    result = chain.sweep(NEXT.replace(hour=10, minute=50))
    # Then the call since its wake, outside its burst, is seen: warned again, not zeroed at once
    assert result["acted"] == [] and chain.exists()
    (warned,) = chain.messages()
    assert warned["verdict"] == "warn"


def test_an_owner_who_restores_it_by_hand_right_after_a_zeroing_is_warned_again(chain):
    # Given it went to zero after its first warning and grace, and its owner needed it at once: restored by hand
    chain.sweep(DAY.replace(hour=10, minute=50))
    chain.sweep(DAY.replace(hour=11, minute=50))
    assert not chain.exists()
    by_hand = handle_restore_request({"name": NAME}, chain.restore_fn.RUNTIME, now=DAY.replace(hour=12))
    assert by_hand["ok"] and chain.exists() and chain.wakes() == []  # its wake is deleted with the record
    chain.in_service(DAY.replace(hour=12, minute=8))
    chain.messages()
    # When the sweep after tomorrow's burst comes
    result = chain.sweep(NEXT.replace(hour=10, minute=50))
    # Then it is warned again, not zeroed: the reaper's own wake did not bring it back
    assert result["acted"] == [] and chain.exists()
    (warned,) = chain.messages()
    assert warned["verdict"] == "warn"


def test_an_owner_who_exempts_it_after_the_first_warning_is_never_zeroed(chain):
    # Given the first warning, and its owner tags it exempt within the grace
    chain.sweep(DAY.replace(hour=10, minute=50))
    chain.tag({"reaper:exempt": "true"})
    # When the grace is over
    result = chain.sweep(DAY.replace(hour=11, minute=50))
    # Then it is left alone: no zeroing, no wake
    assert result["acted"] == [] and chain.exists() and chain.wakes() == []


def test_an_owner_who_exempts_it_once_woken_wins_over_the_rhythm(chain):
    # Given its wake brought it back (recreated with the tags it had), and its owner tags it exempt during the burst
    chain.woken_for_its_next_burst()
    chain.tag({"reaper:exempt": "true"})
    # When the sweep after the burst comes
    result = chain.sweep(NEXT.replace(hour=10, minute=50))
    # Then it stays up and nothing is scheduled
    assert result["acted"] == [] and chain.exists() and chain.wakes() == []


def test_an_owner_who_snoozed_it_after_the_warning_is_warned_again_when_the_snooze_ends(chain):
    # Given its wake brought it back, and its owner snoozed it until 10:40, now over
    chain.woken_for_its_next_burst()
    chain.tag({"reaper:snooze-until": "2026-12-10T10:40:00Z"})
    # When the sweep after the burst comes
    result = chain.sweep(NEXT.replace(hour=10, minute=50))
    # Then the warning is given again with its grace, not a zeroing at once
    assert result["acted"] == [] and chain.exists()
    (warned,) = chain.messages()
    assert warned["verdict"] == "warn"


def test_a_deleted_endpoint_is_never_recreated_by_its_wake(chain):
    # Given its wake brought it back, and its admin deleted it during its burst
    wake = chain.woken_for_its_next_burst()
    chain.sm.delete_endpoint(EndpointName=NAME)
    # When the sweep after the burst comes, and the wake's delivery is repeated
    result = chain.sweep(NEXT.replace(hour=10, minute=50))
    again = chain.fire(wake, NEXT.replace(hour=11))
    # Then nothing is scheduled and nothing recreated: what the admin removed stays removed
    assert result["acted"] == [] and chain.wakes() == [] and not chain.exists()
    assert again["ok"] and "nothing done" in again["result"], again


def test_a_duplicate_delivery_makes_one_zeroing_one_message_and_one_wake(chain):
    # Given its wake brought it back, and that wake is delivered twice
    wake = chain.woken_for_its_next_burst()
    twice = chain.fire(wake, NEXT.replace(hour=9, minute=31))
    assert "nothing done" in twice["result"] or "nothing to do" in twice["result"], twice
    # When the sweep after its burst is delivered twice
    first = chain.sweep(NEXT.replace(hour=10, minute=50), sweep_id="sweep-dup")
    second = chain.sweep(NEXT.replace(hour=10, minute=50), sweep_id="sweep-dup")
    # Then it is zeroed once, posted once, with one restore record open and one wake
    assert first["acted"] == [NAME] and second["acted"] == []
    assert [m["verdict"] for m in chain.messages()] == ["act"]
    assert len(chain.wakes()) == 1 and chain.log.latest_restore("endpoint", NAME)["status"] == "reaped"
