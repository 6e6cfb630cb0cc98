"""A sweep too long for one invocation goes on in the next: through the real studio-app handler,
with events/studio-app-continuation.json and a Lambda context whose clock the test runs (no sleep).

The time left is the context's: each time the sweep asks, a second passes. With chunks of three
resources and 40 s left (30 s of it the reserve), the first part handles one chunk and stops.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.core.errors import BadEventError
from reaper.sweep.continuation import MAX_PARTS, schedule_name
from reaper_devkit import seed_studio as studio
from reaper_devkit.calls import recording
from reaper_devkit.iam_check import ungranted
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function, throttle
from tests.helpers import studio_fleet as fleet
from tests.helpers.continuation import FUNCTION, ROLE, TickingContext, idle_ids, next_event, roomy, schedules, short


def test_a_sweep_short_of_time_arranges_its_next_part_which_handles_the_rest_each_once(aws, sm, split):
    # Given a sweep that has time for one chunk of three
    app = load_function("studio_app")
    with recording() as calls:
        first = app.handler(event("studio-app-schedule.json"), short())
        # Then it stopped after that chunk and arranged part 2, a minute after it ended, invoking itself
        assert first["part"] == 1 and first["continues"].startswith("part 2 at ")
        assert 0 < first["resources"] == len(split["seen"]) < len(split["all"])
        [schedule] = schedules(aws)
        cont = json.loads(schedule["Target"]["Input"])
        assert schedule["Target"]["Arn"] == FUNCTION and schedule["Target"]["RoleArn"] == ROLE
        assert schedule["ScheduleExpression"].startswith("at(") and schedule["ActionAfterCompletion"] == "DELETE"
        assert cont["source"] == "mlreaper.sweep" and cont["detail-type"] == "Sweep Continuation"
        assert cont["detail"]["event_id"] == event("studio-app-schedule.json")["id"] and cont["detail"]["after"] == split["seen"][-1]
        assert schedule["Name"] == cont["id"]
        # When part 2 runs with time enough
        second = app.handler(cont, roomy())
    # Then it finished: every resource handled once across the parts, in id order
    assert "continues" not in second and second["part"] == 2
    assert split["seen"] == split["all"] and len(set(split["seen"])) == len(split["seen"])
    assert first["resources"] + second["resources"] == len(split["seen"])
    # and each idle app was deleted once, and told once
    assert sorted(first["acted"] + second["acted"]) == idle_ids(split)
    assert calls.by_operation().get("sagemaker:DeleteApp") == 2
    acts = [m["id"] for m in drain(aws, split["queue"]) if m.get("verdict") == "act"]
    assert sorted(acts) == idle_ids(split)
    test_reads = {"scheduler:ListSchedules", "scheduler:GetSchedule"}  # this test's own look at the schedules
    assert "scheduler:CreateSchedule" in calls.actions and calls.actions - test_reads <= function_actions("StudioAppFunction")
    # and the role grants what arranging a part names: the schedule in the sweeps' group, the role passed
    arranging = [r for r in calls.requests if r.action in ("scheduler:CreateSchedule", "iam:PassRole")]
    assert len(arranging) == 2 and ungranted(arranging, "StudioAppFunction") == []


def test_a_continuation_delivered_twice_acts_once_and_arranges_its_next_part_once(aws, sm, split):
    # Given part 2 of a sweep, which itself runs short of time
    app = load_function("studio_app")
    with recording() as calls:
        app.handler(event("studio-app-schedule.json"), short())
        cont = next_event(aws, 2)
        # When it is delivered twice (Scheduler and Lambda deliver at least once)
        a = app.handler(cont, short())
        b = app.handler(cont, short())
        # Then the second arranges nothing new: the same part 3, by name
        assert a["continues"].startswith("part 3 at ") and b["continues"].startswith("part 3 arranged already")
        assert len([s for s in schedules(aws) if json.loads(s["Target"]["Input"])["detail"]["part"] == 3]) == 1
        # and the rest, delivered twice too, finishes
        final = next_event(aws, 3)
        ends = [app.handler(final, roomy()) for _ in range(2)]
    assert all("continues" not in e for e in ends)
    # Then every resource was handled, and each idle app deleted once and reported once
    assert sorted(set(split["seen"])) == split["all"]
    assert calls.by_operation().get("sagemaker:DeleteApp") == 2
    acts = [m["id"] for m in drain(aws, split["queue"]) if m.get("verdict") == "act"]
    assert sorted(acts) == idle_ids(split)


def _hostile(detail: dict[str, Any]) -> list[tuple[str, dict[str, Any], str]]:
    d = detail
    return [
        ("unknown kind", {**d, "kind": "gpu-farm"}, "unknown kind"),
        ("another kind", {**d, "kind": "notebook"}, "notebook continuation sent to the studio-app function"),
        ("bad region", {**d, "region": "moon-base-1; rm -rf"}, "region"),
        ("region not swept", {**d, "region": "eu-west-1"}, "does not sweep"),
        ("huge part", {**d, "part": 10**9}, "part"),
        ("part one", {**d, "part": 1}, "part"),
        ("part not a number", {**d, "part": "two"}, "part"),
        ("control characters", {**d, "after": "a\x00b"}, "after"),
        ("no offset", {**d, "sweep_started": "2026-12-02T03:15:00"}, "offset"),
        ("future", {**d, "sweep_started": "2099-01-01T00:00:00Z"}, "future"),
        ("no event id", {**d, "event_id": ""}, "event_id"),
        ("extra field", {**d, "mode": "enforce"}, "mode"),
        ("not an object", [], "detail"),
    ]


@pytest.mark.parametrize("case", [c[0] for c in _hostile(event("studio-app-continuation.json")["detail"])])
def test_a_hostile_cursor_is_a_bad_event_and_changes_nothing(aws, sm, split, case):
    # Given a continuation whose cursor was tampered with
    [(_, detail, words)] = [c for c in _hostile(event("studio-app-continuation.json")["detail"]) if c[0] == case]
    app = load_function("studio_app")
    bad = event("studio-app-continuation.json", detail=detail)
    # When it is delivered, Then it is refused, saying what is wrong
    with recording() as calls, pytest.raises(BadEventError) as err:
        app.handler(bad, roomy())
    assert words in str(err.value)
    # and nothing was read, changed, arranged or posted
    assert calls.total() == 0
    assert all(studio.status(sm, a) == "InService" for a in split["apps"].values())
    assert schedules(aws) == [] and drain(aws, split["queue"]) == []


def test_a_continuation_past_the_next_full_sweep_is_not_dropped_for_its_age(aws, sm, split):
    # Given part 2 of a sweep that started 20 minutes ago, with a sweep every 15 (and no other chain recorded)
    app = load_function("studio_app")
    old = (datetime.now(UTC) - timedelta(minutes=20)).strftime("%Y-%m-%dT%H:%M:%SZ")
    late = event("studio-app-continuation.json")
    late["detail"] = {**late["detail"], "sweep_started": old, "after": ""}
    result = app.handler(late, roomy())
    # Then it goes on and reaches every resource (the scheduled sweeps meanwhile defer to it: test_sweep_chain.py)
    assert "dropped" not in result and "continues" not in result
    assert split["seen"] == split["all"] and sorted(result["acted"]) == idle_ids(split)
    assert "20 min ago; sweeps every 15 m" in result["outlasted_schedule"]


def test_when_the_next_part_cannot_be_arranged_the_rest_is_said_once_as_not_reached(aws, sm, split, monkeypatch):
    # Given two swept regions and a Scheduler that refuses (throttled)
    monkeypatch.setenv("REAPER_REGIONS", "us-east-1,us-west-2")
    app = load_function("studio_app")
    throttle(monkeypatch, app.RUNTIME.clients()("scheduler"), "create_schedule")
    # When the sweep runs short of time
    result = app.handler(event("studio-app-schedule.json"), short())
    # Then nothing is arranged, and one notice names how many were not reached, and the region not started
    assert result["continues"].startswith("not arranged") and schedules(aws) == []
    left = len(split["all"]) - result["resources"]
    notices = [m for m in drain(aws, split["queue"]) if m.get("type") == "notice"]
    assert len(notices) == 1
    assert f"{left} resource(s) not reached" in notices[0]["title"]
    assert "us-west-2 not started" in notices[0]["text"] and "ThrottlingException" in notices[0]["text"]


def test_a_part_that_handles_nothing_ends_the_chain_with_one_error(aws, sm, split):
    # Given part 2 of a sweep that finds its time gone before the first resource
    app = load_function("studio_app")
    cont = event("studio-app-continuation.json")
    cont["detail"] = {**cont["detail"], "sweep_started": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "after": ""}
    # When it is delivered, twice
    results = [app.handler(cont, TickingContext(31)) for _ in range(2)]
    # Then no part 3 is arranged, and one error is recorded and posted, not one per delivery
    assert all(r["resources"] == 1 and r["verdicts"]["error"] == 1 for r in results)
    assert schedules(aws) == []
    errors = [m for m in drain(aws, split["queue"]) if m.get("verdict") == "error"]
    assert len(errors) == 1 and "handled no resource" in errors[0]["reason"] and errors[0]["id"] == "*"
    assert all(studio.status(sm, a) == "InService" for a in split["apps"].values())


def test_a_chain_past_its_part_limit_ends_with_one_error(aws, sm, split):
    # Given the last allowed part, which again runs short of time
    app = load_function("studio_app")
    cont = event("studio-app-continuation.json")
    cont["detail"] = {**cont["detail"], "sweep_started": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "after": "", "part": MAX_PARTS}
    result = app.handler(cont, short())
    # Then it handled its chunk, arranged nothing, and said so once
    assert result["verdicts"]["error"] == 1 and schedules(aws) == []
    errors = [m for m in drain(aws, split["queue"]) if m.get("verdict") == "error"]
    assert len(errors) == 1 and f"limit of {MAX_PARTS} parts" in errors[0]["reason"]


def test_schedule_names_are_the_same_for_the_same_part_and_fit_scheduler():
    from reaper.sweep.continuation import Cursor

    started = datetime(2026, 12, 2, 3, 15, tzinfo=UTC)
    a = Cursor("studio-app", "us-east-1", "x", started, 2, "e" * 200)
    assert schedule_name(a) == schedule_name(Cursor("studio-app", "us-east-1", "y", started, 2, "e" * 200))
    assert schedule_name(a) != schedule_name(Cursor("studio-app", "us-east-1", "x", started, 3, "e" * 200))
    assert len(schedule_name(a)) <= 64


def test_a_continuation_goes_on_into_the_regions_not_started(aws, sm, split, monkeypatch):
    # Given two swept regions, each with Studio apps, and a first part with time for one chunk
    import boto3

    monkeypatch.setenv("REAPER_REGIONS", "us-east-1,us-west-2")
    west = boto3.session.Session(region_name="us-west-2")
    fleet.seed(west, datetime.now(UTC))
    west_ids = sorted(
        a["DomainId"] + "/" + (a.get("SpaceName") or a.get("UserProfileName", "")) + f"/{a['AppType']}/{a['AppName']}"
        for a in west.client("sagemaker").list_apps()["Apps"]
    )
    app = load_function("studio_app")
    first = app.handler(event("studio-app-schedule.json"), short())
    cont = next_event(aws, 2)
    # Then part 2 starts in the region where part 1 stopped, and goes on into the next one
    assert cont["detail"]["region"] == "us-east-1"
    second = app.handler(cont, roomy())
    assert "continues" not in second
    east, rest = split["seen"][: len(split["all"])], split["seen"][len(split["all"]) :]
    assert east == split["all"] and first["resources"] + second["resources"] == len(split["seen"])
    # (the seed names its domains alike in both regions: each region's ids are unique, handled once)
    assert set(west_ids) <= set(rest) and len(set(rest)) == len(rest) == len(split["all"])
