"""The chain record as the action log keeps it, read into a typed value (reaper.sweep.chain says what
a chain is and how its record is written).

A record written by another version of the reaper (or edited by hand) is read field by field: a
field that is missing or does not parse is unknown, never an exception that would fail every
scheduled sweep. A running record whose `arranged_at` is unknown cannot show a live chain, so it
is dead.

WINDOW = 2 x (DELAY + the Lambda maximum timeout, 15 min) = 32 min. The next part is due DELAY
after it is arranged and writes the record again before it ends, at most a function timeout
later; twice that leaves room for Scheduler's retries (MaximumEventAgeInSeconds 900) and for a
part that waits while another invocation holds the function's single reserved slot. It uses the
Lambda maximum, not the function's configured Timeout, so a raised Timeout never makes a live
chain look dead: a dead chain is noticed later, never a live one declared dead.
https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from reaper.core.timeutil import as_utc, iso, parse_instant

DELAY = timedelta(minutes=1)  # a next part is due this long after it is arranged, so the function (reserved concurrency 1) is free
LAMBDA_MAX_TIMEOUT = timedelta(minutes=15)
WINDOW = 2 * (DELAY + LAMBDA_MAX_TIMEOUT)
RUNNING, FINISHED, ENDED = "running", "finished", "ended"
SKEW = timedelta(minutes=5)  # a record arranged later than now + SKEW was not written by a live chain's clock


@dataclass(frozen=True)
class ChainRecord:
    event_id: str
    started: datetime | None  # None: missing or unreadable (another version's record)
    part: int  # the part arranged next (or the last that ran, once finished); 0 when unreadable
    status: str
    arranged_at: datetime | None = None
    due: datetime | None = None
    raw_arranged_at: str | None = None  # as stored (the take-over's condition); None: absent

    def alive(self, now: datetime) -> bool:
        """Running, and its next part arranged within WINDOW (and not in the future: a record arranged
        "in 2099" would otherwise make every sweep defer to it for ever)."""
        if self.status != RUNNING or self.arranged_at is None:
            return False
        return -SKEW <= as_utc(now) - self.arranged_at <= WINDOW

    def describe(self) -> str:
        due = f", part {self.part} due {iso(self.due)}" if self.due is not None else ""
        started = iso(self.started) if self.started is not None else "at an unknown time"
        return f"the sweep {self.event_id or '(unnamed)'} started {started}{due}"


def parse(item: Mapping[str, object]) -> ChainRecord:
    """The record from its stored fields; what is missing or does not parse is unknown."""
    raw = item.get("arranged_at")
    return ChainRecord(
        event_id=_text(item.get("event_id")),
        status=_text(item.get("status")),
        part=_number(item.get("part")),
        raw_arranged_at=raw if isinstance(raw, str) else None,
        started=_instant(item.get("started")),
        arranged_at=_instant(raw),
        due=_instant(item.get("due")),
    )


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _instant(value: object) -> datetime | None:
    """A time this version writes (ISO 8601 with its offset); anything else is unknown."""
    if not isinstance(value, str):
        return None
    try:
        return parse_instant(value)
    except (ValueError, OverflowError):
        return None


def _number(value: object) -> int:
    try:
        return int(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else 0
    except ValueError:
        return 0
