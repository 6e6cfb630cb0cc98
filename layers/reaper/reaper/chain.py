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

WINDOW = 2 x (DELAY + the Lambda maximum timeout, 15 min) = 32 min. The next part is due DELAY
after it is arranged and writes the record again before it ends, at most a function timeout
later; twice that leaves room for Scheduler's retries (MaximumEventAgeInSeconds 900) and for a
part that waits while another invocation holds the function's single reserved slot. It uses the
Lambda maximum, not the function's configured Timeout, so a raised Timeout never makes a live
chain look dead: a dead chain is noticed later, never a live one declared dead.
https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html

Every write is a conditional PutItem and every read a Query (what actionlog.RECORD_PERMISSIONS
grant already); a write whose condition fails changes nothing:
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from reaper.actionlog import CLAIM_TTL, ActionLog
from reaper.continuation import DELAY, Cursor
from reaper.timeutil import as_utc, iso, parse_instant

LAMBDA_MAX_TIMEOUT = timedelta(minutes=15)
WINDOW = 2 * (DELAY + LAMBDA_MAX_TIMEOUT)
RUNNING, FINISHED, ENDED = "running", "finished", "ended"


@dataclass(frozen=True)
class ChainRecord:
    event_id: str
    started: datetime
    part: int  # the part arranged next (or the last that ran, once finished)
    status: str
    arranged_at: datetime | None = None
    due: datetime | None = None

    def alive(self, now: datetime) -> bool:
        """Running, and its next part arranged within WINDOW."""
        return self.status == RUNNING and self.arranged_at is not None and as_utc(now) - self.arranged_at <= WINDOW

    def describe(self) -> str:
        due = f", part {self.part} due {iso(self.due)}" if self.due is not None else ""
        return f"the sweep {self.event_id} started {iso(self.started)}{due}"


def read(log: ActionLog, kind: str, region: str) -> ChainRecord | None:
    """The kind's chain record; raises AwsError when the table cannot be read."""
    item = log.chain(kind, region)
    if item is None:
        return None
    return ChainRecord(
        event_id=item.get("event_id", ""),
        started=parse_instant(item["started"]),
        part=int(item.get("part", "0")),
        status=item.get("status", ""),
        arranged_at=parse_instant(item["arranged_at"]) if "arranged_at" in item else None,
        due=parse_instant(item["due"]) if "due" in item else None,
    )


def take_over(log: ActionLog, kind: str, region: str, dead: ChainRecord, event_id: str, now: datetime) -> bool:
    """Replace a dead chain's record with this sweep's (part 1 running now), if nobody changed it since it was read."""
    assert dead.arranged_at is not None
    return log.put_chain(
        kind,
        region,
        _running(event_id, now, 1, now, now, now),
        "event_id = :dead AND arranged_at = :seen AND #status = :running",
        {"dead": dead.event_id, "seen": iso(dead.arranged_at), "running": RUNNING},
    )


def arranging(log: ActionLog, region: str, cursor: Cursor, at: datetime, now: datetime) -> bool:
    """Record that `cursor` (the next part) is being arranged for `at`. False: another chain holds the
    record, or this chain has finished or gone past this part (a late duplicate delivery): do not arrange.

    The first part may replace its own record (taken over) or another chain's that is not running or
    is dead (arranged longer than WINDOW ago: also when this sweep could not read or take it over
    at its start); a later part only its own chain's, while running and not past this part.
    """
    if cursor.part == 2:
        condition = "attribute_not_exists(pk) OR event_id = :me OR #status <> :running OR arranged_at < :dead_before"
        values: dict[str, str | int] = {"me": cursor.event_id, "running": RUNNING, "dead_before": iso(as_utc(now) - WINDOW)}
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
