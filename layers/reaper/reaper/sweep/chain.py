"""The chain record: which sweep of a kind is going on in parts, so two chains never run together.

One item per kind and home region in the action log (pk CHAIN#<kind>#<region>). A part that
arranges the next part writes it first, conditionally: the chain's event id, when it started, the
next part's number, when it was arranged and when the next part is due. The last part marks it
`finished`; a chain that stops on an error (a part that handled nothing, the part limit, a next
part that could not be arranged) marks it `ended`; the error itself was posted by then.

A scheduled full sweep reads it first (strongly consistent):
- `running`, arranged within WINDOW: the chain is alive. The sweep defers to it: it changes
  nothing, logs one line and counts `SweepDeferred`. The chain reaches every resource, however
  long it takes against the schedule; the sweep after it starts from the top again.
- `running`, arranged longer ago than WINDOW: its next part never ran (Scheduler failed, the
  function was deleted or throttled for longer than that). The sweep takes the record over
  (conditional on it being unchanged), posts one error naming the dead chain, and starts fresh.
- absent, `finished` or `ended`: the sweep starts fresh.
A continuation whose chain is no longer the one the record names (superseded by a fresh sweep
after its own was declared dead) is dropped with a log line, changing nothing.

The record is read into a typed ChainRecord by the action log itself (reaper.record.chain_record:
a field that is missing or does not parse is unknown, never an exception; WINDOW and why it is 32
minutes). A running record whose `arranged_at` is unknown cannot show a live chain, so it is dead:
the sweep takes it over (conditional on the raw value it read) and says so once.

Every write is a conditional PutItem and every read a Query (what actionlog.RECORD_PERMISSIONS
grant already); a write whose condition fails changes nothing:
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
"""

from __future__ import annotations

from datetime import datetime

from reaper.core.timeutil import as_utc, iso
from reaper.record.actionlog import CLAIM_TTL, ActionLog
from reaper.record.chain_record import RUNNING, SKEW, WINDOW, ChainRecord
from reaper.sweep.continuation import Cursor


def take_over(log: ActionLog, kind: str, region: str, dead: ChainRecord, event_id: str, now: datetime) -> bool:
    """Replace a dead chain's record with this sweep's (part 1 running now), if nobody changed it since
    it was read (its event id, status and `arranged_at` as stored, or still absent)."""
    condition = "#status = :running AND " + ("event_id = :dead" if dead.event_id else "attribute_not_exists(event_id)")
    values: dict[str, str | int] = {"running": RUNNING}
    if dead.event_id:
        values["dead"] = dead.event_id
    if dead.raw_arranged_at is not None:
        condition += " AND arranged_at = :seen"
        values["seen"] = dead.raw_arranged_at
    else:
        condition += " AND attribute_not_exists(arranged_at)"
    return log.put_chain(kind, region, _running(event_id, now, 1, now, now, now), condition, values)


def arranging(log: ActionLog, region: str, cursor: Cursor, at: datetime, now: datetime) -> bool:
    """Record that `cursor` (the next part) is being arranged for `at`. False: another chain holds the
    record, or this chain has finished or gone past this part (a late duplicate delivery): do not arrange.

    The first part may replace its own record (taken over) or another chain's that is not running or
    is dead (arranged longer than WINDOW ago: also when this sweep could not read or take it over
    at its start); a later part only its own chain's, while running and not past this part.
    """
    if cursor.part == 2:
        condition = (
            "attribute_not_exists(pk) OR event_id = :me OR #status <> :running OR attribute_not_exists(arranged_at)"
            " OR arranged_at < :dead_before OR arranged_at > :future"
        )
        values: dict[str, str | int] = {
            "me": cursor.event_id,
            "running": RUNNING,
            "dead_before": iso(as_utc(now) - WINDOW),
            "future": iso(as_utc(now) + SKEW),
        }
    else:
        condition = "attribute_not_exists(pk) OR (event_id = :me AND #status = :running AND #part <= :part)"
        values = {"me": cursor.event_id, "running": RUNNING, "part": cursor.part}
    return log.put_chain(cursor.kind, region, _running(cursor.event_id, cursor.sweep_started, cursor.part, now, at, now), condition, values)


def close(
    log: ActionLog, kind: str, region: str, event_id: str, started: datetime, part: int, status: str, why: str, now: datetime
) -> bool:
    """Mark the chain finished (or ended on an error) if the record is still this chain's and not past `part`."""
    fields: dict[str, str | int] = {
        "event_id": event_id,
        "started": iso(started),
        "part": part,
        "status": status,
        "closed_at": iso(now),
        "why": why[:1000],
        "expires_at": int((as_utc(now) + CLAIM_TTL).timestamp()),
    }
    return log.put_chain(kind, region, fields, "event_id = :me AND #part <= :part", {"me": event_id, "part": part})


def _running(event_id: str, started: datetime, part: int, arranged_at: datetime, due: datetime, now: datetime) -> dict[str, str | int]:
    return {
        "event_id": event_id,
        "started": iso(started),
        "part": part,
        "status": RUNNING,
        "arranged_at": iso(arranged_at),
        "due": iso(due),
        "expires_at": int((as_utc(now) + CLAIM_TTL).timestamp()),
    }
