"""Acting at the price of reading: a change costs the gate's re-read, one conditional write that is
lease, claim and write-ahead record at once, and its settlement riding along with the next change's
write; messages are queued ten at a time. The safety of each part is held by test_safety.py and
test_contract_crash.py; here, what it costs and that nothing is left behind.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from reaper.handlers import handle_kind_event
from reaper.record.actionlog import ActionLog, Begun, Settlement
from reaper_devkit import seed
from reaper_devkit.calls import recording
from tests.conftest import drain, event, load_function

IDLE = [0] * 36
ARN = "arn:aws:sagemaker:us-east-1:123456789012:notebook-instance/nb"


def all_items(aws: Any, table: str) -> list[dict[str, Any]]:
    return list(aws.client("dynamodb").scan(TableName=table)["Items"])


def test_stopping_idle_notebooks_costs_at_most_four_calls_per_stop_beyond_the_dry_runs_reads(aws, sm, cw, deployed_env, monkeypatch):
    # Given 23 idle notebooks, swept once in dry-run (the reads) and then in enforce on the same account
    now = datetime.now(UTC)
    names = [f"nb-{i:02d}" for i in range(23)]
    for name in names:
        seed.notebook(sm, name, {"ml:owner": "ana@example.com", "ml:stage": "dev"})
        seed.activity(cw, name, now, IDLE)
    app = load_function("notebook")
    with recording() as dry:
        handle_kind_event(event("notebook-schedule.json", id="dry"), "notebook", app.RUNTIME, now=now)
    drain(aws, deployed_env["REAPER_QUEUE_URL"])
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    app = load_function("notebook")
    # When the enforce sweep stops them all (at the same instant: a minute later can cross a 5-minute period
    # the seeded activity does not reach, and an unknown period is never idle)
    with recording() as live:
        handle_kind_event(event("notebook-schedule.json", id="live"), "notebook", app.RUNTIME, now=now)
    # Then beyond the dry run's calls and the stops, at most 4 calls per stop: the gate's 2 reads, one
    # write ahead (which also settles the one before), and the batched queue, record and unposted writes
    stops = live.calls["sagemaker:StopNotebookInstance"]
    assert stops == len(names)
    extra = live.total() - dry.total() - stops
    assert extra <= 4 * stops, live.by_operation()
    assert live.calls["dynamodb:TransactWriteItems"] <= stops + 1
    assert live.calls["dynamodb:PutItem"] <= dry.calls["dynamodb:PutItem"], live.by_operation()  # nothing per stop
    # and each stop was posted once
    executed = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("executed")]
    assert sorted(m["id"] for m in executed) == names


def test_a_finished_sweep_leaves_no_lease_no_unconfirmed_record_and_nothing_unposted(aws, sm, cw, enforce, lambda_context):
    # Given 12 idle notebooks in enforce
    now = datetime.now(UTC)
    for i in range(12):
        seed.notebook(sm, f"nb-{i:02d}", {"ml:owner": "ana@example.com", "ml:stage": "dev"})
        seed.activity(cw, f"nb-{i:02d}", now, IDLE)
    # When the sweep runs to its end
    result = load_function("notebook").handler(event("notebook-schedule.json"), lambda_context)
    # Then every stop is logged once, confirmed; every lease given back; nothing waits to be posted
    assert len(result["acted"]) == 12
    log = ActionLog(aws.client("dynamodb"), enforce["REAPER_TABLE"])
    entries = [e for e in log.stored_entries(now - timedelta(days=1), now + timedelta(days=1)) if e.get("executed")]
    assert sorted(e["id"] for e in entries) == sorted(result["acted"])
    assert not any(e.get("unconfirmed") for e in entries)
    assert not [i for i in all_items(aws, enforce["REAPER_TABLE"]) if i["pk"]["S"].startswith("LEASE#")]
    assert log.unposted(now + timedelta(days=1)) == []


def begun(log: ActionLog, arn: str, holder: str, claim: str, now: datetime, settle: list[Settlement] | None = None) -> Begun:
    return log.begin(arn, holder, claim, {"kind": "notebook", "id": arn[-2:], "verdict": "act"}, now, holder, settle=settle)


def test_begin_says_who_holds_the_resource_and_what_was_handled(aws, table):
    # Given a change begun by one sweep
    log, now = ActionLog(aws.client("dynamodb"), table), datetime.now(UTC)
    assert begun(log, ARN, "sweep-a", "nb|act|stop|event:a", now) is Begun.BEGUN
    # When another sweep, then a re-delivery of the same decision, try to begin it
    other = begun(log, ARN, "sweep-b", "nb|act|stop|event:b", now)
    again = begun(log, ARN, "sweep-a", "nb|act|stop|event:a", now)
    # Then the first finds it leased, the second finds it claimed; and neither wrote anything
    assert (other, again) == (Begun.LEASED, Begun.CLAIMED)
    assert len([i for i in all_items(aws, table) if i["pk"]["S"].startswith("LOG#")]) == 1


def test_a_settlement_that_cannot_ride_along_stays_for_the_courier_and_the_change_still_begins(aws, table):
    # Given a begun change whose lease another sweep took over after it lapsed
    log, now = ActionLog(aws.client("dynamodb"), table), datetime.now(UTC)
    assert begun(log, ARN + "-1", "sweep-a", "one", now) is Begun.BEGUN
    assert log.lease(ARN + "-1", "sweep-b", now + timedelta(minutes=20))
    settle = [Settlement(ARN + "-1", "sweep-a", "notebook", "-1", {"kind": "notebook", "id": "-1", "verdict": "act"}, now, "sweep-a")]
    # When the next change begins with it
    result = begun(log, ARN + "-2", "sweep-a", "two", now, settle)
    # Then the next change began alone, the settlement is still to do, and the other sweep keeps its lease
    assert result is Begun.BEGUN and len(settle) == 1
    assert not log.lease(ARN + "-1", "sweep-c", now + timedelta(minutes=21))
    # and settled apart, it replaces the record and leaves the other sweep's lease alone
    log.settle_apart(settle[0])
    assert not log.lease(ARN + "-1", "sweep-c", now + timedelta(minutes=21))


def test_settlements_ride_along_and_are_written_with_the_next_change(aws, table):
    # Given a begun change, settled as done
    log, now = ActionLog(aws.client("dynamodb"), table), datetime.now(UTC)
    assert begun(log, ARN + "-1", "sweep-a", "one", now) is Begun.BEGUN
    done = {"kind": "notebook", "id": "-1", "verdict": "act", "executed": True}
    settle = [Settlement(ARN + "-1", "sweep-a", "notebook", "-1", done, now, "sweep-a")]
    # When the next change begins with it
    assert begun(log, ARN + "-2", "sweep-a", "two", now, settle) is Begun.BEGUN
    # Then it was written: the list is empty, its record says done, and its lease is free for others
    assert settle == []
    entries = [e for e in log.stored_entries(now - timedelta(days=1), now + timedelta(days=1)) if e.get("id") == "-1"]
    assert len(entries) == 1 and entries[0]["executed"] is True
    assert log.lease(ARN + "-1", "sweep-b", now)
