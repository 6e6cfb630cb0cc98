"""The chain record (reaper.sweep.chain) through the real studio-app handler: a scheduled sweep defers to
a live chain, a chain reaches every resource however long it runs against the schedule, a dead
chain is said once and superseded, and the table's faults never make a sweep skip silently.

The handler's clock is the test's (reaper.handlers.datetime frozen, moved by hand), the Lambda's
remaining time is a TickingContext: no sleep. The fleet is seeded at the real now; every step stays
within 45 minutes of it, so the busy apps (10 minutes idle) stay under their 60-minute window.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper import handlers
from reaper.sweep import chain
from reaper_devkit import seed_studio as studio
from reaper_devkit.calls import recording
from reaper_devkit.iam_check import ungranted
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function, throttle
from tests.helpers.continuation import idle_ids, next_event, roomy, schedules, short
from tests.helpers.studio_fleet import app_id

SCHEDULED = event("studio-app-schedule.json")


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def at(self, minutes: float) -> Clock:
        self.now = T0 + timedelta(minutes=minutes)
        return self


T0 = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture
def clock(monkeypatch) -> Clock:
    """The handler's `now`, as the test sets it."""
    c = Clock(T0)

    class Frozen(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> datetime:  # type: ignore[override]
            return c.now

    monkeypatch.setattr(handlers, "datetime", Frozen)
    return c


def scheduled(n: int) -> dict[str, Any]:
    """The n-th scheduled sweep (EventBridge gives each its own id)."""
    return {**SCHEDULED, "id": f"{SCHEDULED['id'][:-4]}{n:04d}"}


def record(aws) -> dict[str, Any] | None:
    """The studio-app chain record of the stack (home region us-east-1), as stored."""
    pk = {":pk": {"S": "CHAIN#studio-app#us-east-1"}}
    items = aws.client("dynamodb").query(TableName=_table(), KeyConditionExpression="pk = :pk", ExpressionAttributeValues=pk)["Items"]
    return {k: next(iter(v.values())) for k, v in items[0].items()} if items else None


def _table() -> str:
    import os

    return os.environ["REAPER_TABLE"]


def writes(calls) -> set[str]:
    return {a for a in calls.actions if not a.split(":")[1].startswith(("Get", "List", "Describe", "Query", "Search"))}


def test_a_scheduled_sweep_defers_to_a_live_chain_which_reaches_every_resource_past_the_interval(aws, sm, split, clock):
    app = load_function("studio_app")
    with recording() as calls:
        # Given a sweep (every 15 minutes) whose first part has time for one chunk
        first = app.handler(SCHEDULED, short())
        assert first["continues"].startswith("part 2 at ")
        rec = record(aws)
        assert rec is not None and rec["event_id"] == SCHEDULED["id"] and rec["status"] == "running" and rec["part"] == "2"
        # When the next scheduled sweep comes while part 2 is due
        with recording() as deferring:
            clock.at(15)
            second_sweep = app.handler(scheduled(2), roomy())
        # Then it defers to the chain: it says so, reads the record and changes nothing
        assert second_sweep["deferred"].startswith("deferred to the chain in progress: the sweep " + SCHEDULED["id"])
        assert deferring.actions == {"dynamodb:Query"} and len(schedules(aws)) == 1
        # When part 2 runs 16 minutes after the chain started (it used to be dropped here) and stops short again
        clock.at(16)
        part2 = app.handler(next_event(aws, 2), short())
        assert part2["continues"].startswith("part 3 at ")
        # and the sweep at 30 minutes defers too (part 3 was arranged at 16)
        clock.at(30)
        assert "deferred" in app.handler(scheduled(3), roomy())
        # and part 3 runs with time enough
        clock.at(31)
        last = app.handler(next_event(aws, 3), roomy())
    # Then the chain finished: every resource handled exactly once, in id order
    assert "continues" not in last and split["seen"] == split["all"]
    assert first["resources"] + part2["resources"] + last["resources"] == len(split["all"])
    assert calls.by_operation().get("sagemaker:DeleteApp") == 2
    assert sorted(m["id"] for m in drain(aws, split["queue"]) if m.get("verdict") == "act") == idle_ids(split)
    # and it says it outlasted its schedule; the record is finished
    assert "31 min ago; sweeps every 15 m" in last["outlasted_schedule"]
    rec = record(aws)
    assert rec is not None and rec["status"] == "finished" and rec["event_id"] == SCHEDULED["id"]
    # and every call the functions made on the table is granted (PutItem, Query: actionlog.RECORD_PERMISSIONS)
    test_reads = {"scheduler:ListSchedules", "scheduler:GetSchedule"}
    assert calls.actions - test_reads <= function_actions("StudioAppFunction")
    table_calls = [r for r in calls.requests if r.action.startswith("dynamodb:")]
    assert {r.action for r in table_calls} >= {"dynamodb:PutItem", "dynamodb:Query"} and ungranted(table_calls, "StudioAppFunction") == []
    # When the next scheduled sweep comes after the chain: it starts from the top
    clock.at(45)
    fresh = app.handler(scheduled(4), roomy())
    assert "deferred" not in fresh and fresh["resources"] == len(split["all"]) - len(idle_ids(split))  # the deleted apps are gone


def test_a_late_duplicate_of_a_finished_chains_part_changes_nothing_and_arranges_nothing(aws, sm, split, clock):
    # Given a chain of two parts, finished
    app = load_function("studio_app")
    app.handler(SCHEDULED, short())
    part2 = next_event(aws, 2)
    clock.at(2)
    assert "continues" not in app.handler(part2, roomy())
    # When part 2 is delivered again, late, and this time runs short
    clock.at(3)
    with recording() as calls:
        again = app.handler(part2, short())
    # Then it acts on nothing again and arranges no part 3: the record says the chain is over
    assert again["continues"].startswith("not arranged: the chain record names another sweep, or this one finished")
    assert "sagemaker:DeleteApp" not in calls.actions and "scheduler:CreateSchedule" not in calls.actions
    assert [json.loads(s["Target"]["Input"])["detail"]["part"] for s in schedules(aws)] == [2]
    rec = record(aws)
    assert rec is not None and rec["status"] == "finished"


def test_a_dead_chain_is_said_once_and_the_next_sweep_starts_over_and_supersedes_it(aws, sm, split, clock):
    # Given a chain whose part 2 was arranged and never ran (Scheduler failed, say)
    app = load_function("studio_app")
    dead = app.handler(SCHEDULED, short())
    dead_part = next_event(aws, 2)
    done_by_dead = list(split["seen"])
    # When a scheduled sweep comes past the window (32 minutes after part 2 was arranged)
    clock.at(40)
    assert timedelta(minutes=32) == chain.WINDOW
    fresh = app.handler(scheduled(2), roomy())
    # Then it starts over from the top and reports one error naming the dead chain
    assert "deferred" not in fresh and fresh["verdicts"]["error"] == 1
    assert split["seen"][len(done_by_dead) :] == [i for i in split["all"] if i not in dead["acted"]]  # (deleted by part 1: gone)
    [error] = [m for m in drain(aws, split["queue"]) if m.get("verdict") == "error"]
    assert SCHEDULED["id"] in error["reason"] and "never ran" in error["reason"] and error["id"] == "*"
    rec = record(aws)
    assert rec is not None and rec["event_id"] == scheduled(2)["id"] and rec["status"] == "finished"
    # When the dead chain's part 2 arrives after all (a late retry)
    clock.at(41)
    with recording() as calls:
        late = app.handler(dead_part, roomy())
    # Then it is dropped, naming the sweep that superseded it, and nothing is done
    assert late["dropped"].startswith("superseded: the chain record names the sweep " + scheduled(2)["id"])
    assert calls.actions == {"dynamodb:Query"}
    # When the fresh sweep's event is delivered again: no second error
    clock.at(42)
    again = app.handler(scheduled(2), roomy())
    assert again["verdicts"]["error"] == 0
    assert [m for m in drain(aws, split["queue"]) if m.get("verdict") == "error"] == []
    assert all(studio.status(sm, split["apps"][c]) == "InService" for c in ("busy-canvas", "young-canvas", "exempt-lab"))


class Throttle:
    """DynamoDB refuses the chain record's read (ThrottlingException, after botocore's retries) while on."""

    def __init__(self, monkeypatch, client: Any) -> None:
        self.on = True
        real = client.query

        def query(**kwargs: Any) -> Any:
            if self.on and kwargs.get("ConsistentRead"):
                raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "Query")
            return real(**kwargs)

        monkeypatch.setattr(client, "query", query)


def test_an_unreadable_chain_record_never_skips_a_sweep_nor_forks_a_live_chain(aws, sm, split, clock, monkeypatch):
    # Given a live chain (part 2 arranged) and a table that throttles the chain record's read
    app = load_function("studio_app")
    app.handler(SCHEDULED, short())
    throttle = Throttle(monkeypatch, app.RUNTIME.log.client)
    # When the next scheduled sweep comes, short of time too
    clock.at(15)
    blind = app.handler(scheduled(2), short())
    # Then it sweeps anyway and says why it could not look (a skipped sweep would be silent)
    assert blind["chain"].startswith("chain record unreadable (ThrottlingException") and blind["resources"] > 0
    # but it does not start a second chain: its part 2 is refused by the record's conditional write
    assert blind["continues"].startswith("not arranged: the chain record names another sweep")
    assert [json.loads(s["Target"]["Input"])["detail"]["event_id"] for s in schedules(aws)] == [SCHEDULED["id"]]
    # When the table recovers, the live chain's part 2 finishes it: every resource reached, each idle app deleted once
    throttle.on = False
    clock.at(16)
    assert "continues" not in app.handler(next_event(aws, 2), roomy())
    assert set(split["seen"]) == set(split["all"])
    assert all(studio.status(sm, split["apps"][c]) in ("Deleted", "Deleting") for c in ("idle-canvas", "idle-canvas-big"))
    acts = [m["id"] for m in drain(aws, split["queue"]) if m.get("verdict") == "act"]
    assert sorted(acts) == idle_ids(split)


def test_an_unreadable_chain_record_with_no_chain_going_on_still_lets_the_sweep_continue(aws, sm, split, clock, monkeypatch):
    app = load_function("studio_app")
    Throttle(monkeypatch, app.RUNTIME.log.client)
    first = app.handler(SCHEDULED, short())
    assert "unreadable" in first["chain"] and first["continues"].startswith("part 2 at ")
    rec = record(aws)
    assert rec is not None and rec["event_id"] == SCHEDULED["id"] and rec["status"] == "running"


def test_without_an_action_log_a_continuation_goes_on_whatever_its_age(aws, sm, split, clock):
    # Given a function with no table (no chain record to keep)
    app = load_function("studio_app")
    app.RUNTIME.log = None
    app.handler(SCHEDULED, short())
    # When its part 2 arrives 20 minutes later (past the 15-minute schedule)
    clock.at(20)
    with recording() as calls:
        second = app.handler(next_event(aws, 2), roomy())
    # Then it goes on and finishes: nothing dropped for its age, and no table call
    assert "continues" not in second and "dropped" not in second
    assert split["seen"] == split["all"] and not any(a.startswith("dynamodb:") for a in calls.actions)


def test_a_chain_whose_next_part_cannot_be_arranged_ends_and_the_next_sweep_does_not_wait_for_it(aws, sm, split, clock, monkeypatch):
    # Given a Scheduler that refuses (throttled) when the first part arranges its next
    app = load_function("studio_app")
    throttle(monkeypatch, app.RUNTIME.clients()("scheduler"), "create_schedule")
    first = app.handler(SCHEDULED, short())
    # Then the chain is marked ended (its not-reached notice said the rest), not left running
    assert first["continues"].startswith("not arranged") and schedules(aws) == []
    rec = record(aws)
    assert rec is not None and rec["status"] == "ended" and "ThrottlingException" in rec["why"]
    assert len([m for m in drain(aws, split["queue"]) if m.get("type") == "notice"]) == 1
    # When the next scheduled sweep comes, well within the window
    clock.at(15)
    second = app.handler(scheduled(2), roomy())
    # Then it does not defer, and reports no dead chain: it sweeps from the top
    assert "deferred" not in second and second["verdicts"]["error"] == 0
    assert set(split["seen"]) == set(split["all"])


def put_record(aws, item: dict[str, Any]) -> None:
    """A chain record as another version of the reaper might have left it (DynamoDB typed values)."""
    aws.client("dynamodb").put_item(TableName=_table(), Item={"pk": {"S": "CHAIN#studio-app#us-east-1"}, "sk": {"S": "-"}, **item})


def _iso(minutes: float) -> str:
    return (T0 + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


OTHER_VERSIONS = {
    # an older version: running, but none of the times this version writes
    "older, no times": {"event_id": {"S": "old-sweep"}, "status": {"S": "running"}, "part": {"N": "2"}},
    # a hand-edited or corrupted record: nothing parses
    "garbage": {
        "event_id": {"S": "x"},
        "started": {"S": "not a date"},
        "part": {"S": "two"},
        "status": {"S": "running"},
        "arranged_at": {"S": "yesterday"},
        "due": {"BOOL": True},
    },
    # a clock gone wrong: arranged "in 2099" would look alive for ever
    "arranged in the future": {
        "event_id": {"S": "future-sweep"},
        "started": {"S": "2099-01-01T00:00:00Z"},
        "part": {"N": "2"},
        "status": {"S": "running"},
        "arranged_at": {"S": "2099-01-01T00:00:00Z"},
        "due": {"S": "2099-01-01T00:01:00Z"},
    },
    # a newer version: a part as a map, a time with no offset and a field this version does not know
    "newer, other shapes": {
        "event_id": {"S": "new-sweep"},
        "started": {"S": "2026-12-01T03:00:00"},
        "part": {"M": {"n": {"N": "3"}}},
        "status": {"S": "running"},
        "arranged_at": {"S": "2020-01-01T00:00:00Z"},
        "schema": {"N": "2"},
    },
}


@pytest.mark.parametrize("case", sorted(OTHER_VERSIONS))
def test_a_chain_record_this_version_cannot_read_never_stops_the_sweeps(aws, sm, split, clock, case):
    # Given a running chain record this version cannot make sense of (no live chain can be seen in it)
    put_record(aws, OTHER_VERSIONS[case])
    app = load_function("studio_app")
    # When the scheduled sweep comes, short of time
    first = app.handler(SCHEDULED, short())
    # Then it does not crash or defer for ever: it says the record was a dead chain's, once, and sweeps
    assert "deferred" not in first and first["resources"] > 1 and first["verdicts"]["error"] == 1
    [error] = [m for m in drain(aws, split["queue"]) if m.get("verdict") == "error"]
    assert "never ran" in error["reason"] and error["id"] == "*"
    # and its own chain goes on (the record is its now), and reaches every resource once
    assert first["continues"].startswith("part 2 at ")
    rec = record(aws)
    assert rec is not None and rec["event_id"] == SCHEDULED["id"] and rec["status"] == "running"
    clock.at(2)
    assert "continues" not in app.handler(next_event(aws, 2), roomy())
    assert split["seen"] == split["all"]


def test_a_live_chain_record_with_fields_this_version_does_not_know_is_still_deferred_to(aws, sm, split, clock):
    # Given a live chain written by a newer version (an extra field; the fields this version reads are as it writes them)
    put_record(
        aws,
        {
            "event_id": {"S": "new-sweep"},
            "started": {"S": _iso(-5)},
            "part": {"N": "2"},
            "status": {"S": "running"},
            "arranged_at": {"S": _iso(-1)},
            "due": {"S": _iso(0)},
            "schema": {"N": "2"},
            "owner": {"M": {"x": {"S": "y"}}},
        },
    )
    app = load_function("studio_app")
    with recording() as calls:
        result = app.handler(SCHEDULED, roomy())
    # Then the sweep defers to it, changing nothing
    assert result["deferred"].startswith("deferred to the chain in progress: the sweep new-sweep")
    assert calls.actions == {"dynamodb:Query"}


class Killed(BaseException):
    """The Lambda timeout: the invocation stops where it is; no `except Exception` sees it."""


def test_a_part_killed_right_after_an_action_and_retried_records_and_posts_it_once(aws, sm, split, clock, monkeypatch):
    # Given part 2 of a chain, killed (the function timed out) right after deleting an idle app, before
    # the outcome was recorded; Lambda retries the same event (asynchronous invocations: twice)
    from reaper.sweep import pipeline

    app = load_function("studio_app")
    app.handler(SCHEDULED, short())
    part2 = next_event(aws, 2)
    idle_left = [i for i in idle_ids(split) if i > part2["detail"]["after"]]
    assert idle_left, "the seeded fleet leaves an idle app for part 2"
    real = pipeline.process
    kill = {"armed": True}

    def process(kind: Any, r: Any, signal: Any, ctx: Any) -> Any:
        outcome = real(kind, r, signal, ctx)
        if kill["armed"] and outcome.executed:
            kill["armed"] = False
            raise Killed
        return outcome

    monkeypatch.setattr(pipeline, "process", process)
    clock.at(2)
    with pytest.raises(Killed):
        app.handler(part2, roomy())
    # When the retry comes a minute later and finishes the chain
    clock.at(3)
    with recording() as calls:
        retry = app.handler(part2, roomy())
    assert "continues" not in retry
    # Then nothing was deleted twice, every resource was reached,
    assert "sagemaker:DeleteApp" not in calls.actions or calls.by_operation()["sagemaker:DeleteApp"] == len(idle_left) - 1
    assert set(split["seen"]) == set(split["all"])
    # and the deletion the killed attempt made is in the action log and reaches Slack once, at the latest
    # through the next sweep (invariant 7)
    clock.at(20)
    app.handler(scheduled(2), roomy())
    acts = [m["id"] for m in drain(aws, split["queue"]) if m.get("verdict") == "act"]
    assert sorted(acts) == idle_ids(split)


def test_a_sweep_killed_right_after_writing_a_warning_and_retried_still_tells_the_owner(aws, sm, split, clock, monkeypatch):
    # Given grace: a first finding is a warning (the reaper:warned-at tag, and the owner told);
    # the sweep is killed right after tagging an idle app, before the warning was recorded
    from reaper.core.model import ResultCode
    from reaper.sweep import pipeline

    monkeypatch.setenv("REAPER_GRACE_MINUTES", "60")
    app = load_function("studio_app")
    real = pipeline.process
    kill = {"armed": True}

    def process(kind: Any, r: Any, signal: Any, ctx: Any) -> Any:
        outcome = real(kind, r, signal, ctx)
        if kill["armed"] and outcome.result is not None and outcome.result.code is ResultCode.WARNED:
            kill["armed"] = False
            raise Killed
        return outcome

    monkeypatch.setattr(pipeline, "process", process)
    with pytest.raises(Killed):
        app.handler(SCHEDULED, roomy())
    # When Lambda retries the event, and the next sweep comes
    clock.at(1)
    app.handler(SCHEDULED, roomy())
    clock.at(20)
    app.handler(scheduled(2), roomy())
    # Then every idle app's owner was warned once, the one tagged by the killed attempt too
    # (else the app would be deleted after the grace without its owner ever having been told)
    warned = [m["id"] for m in drain(aws, split["queue"]) if m.get("verdict") == "warn"]
    assert sorted(warned) == idle_ids(split)


def test_what_changes_between_parts_is_what_the_next_part_sees(aws, sm, split, clock):
    # Given a chain whose part 1 stopped short; the apps after its cursor are still to come
    app = load_function("studio_app")
    app.handler(SCHEDULED, short())
    part2 = next_event(aws, 2)
    after = part2["detail"]["after"]
    exempted = max(i for i in idle_ids(split) if i > after)
    arn = next(a for a in split["apps"].values() if a.endswith(exempted))
    # When, before part 2, its owner exempts an idle app, and another app is deleted
    sm.add_tags(ResourceArn=arn, Tags=[{"Key": "reaper:exempt", "Value": "true"}])
    gone = next(c for c in ("covered-lab", "covered-code", "custom-image-lab", "uncovered-lab") if app_id(split["apps"][c]) > after)
    domain, space, app_type, name = app_id(split["apps"][gone]).split("/")
    sm.delete_app(DomainId=domain, SpaceName=space, AppType=app_type, AppName=name)
    clock.at(2)
    second = app.handler(part2, roomy())
    # Then part 2 reads them anew: the exempted app is kept and shown as exempt, the deleted one is no error
    assert "continues" not in second and second["verdicts"]["error"] == 0
    assert exempted not in second["acted"] and studio.status(sm, arn) == "InService"
    assert {m["id"]: m["verdict"] for m in drain(aws, split["queue"])}.get(exempted) in (None, "exempt")
