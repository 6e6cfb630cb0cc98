"""A sweep too long for one invocation goes on in the next: the cursor, its event, its schedule.

A sweep handles its resources in id order, a chunk at a time. When the rest will not fit in the
time left, it stops after the last resource it finished and hands back a Cursor; the handler
arranges the next part as a one-off EventBridge Scheduler schedule (as restores and FSx checks
are) that invokes the same function about a minute later with a `Sweep Continuation` event. The
next part lists again (list pages are cheap), skips every id up to the cursor and goes on.

Every part acts under the first part's event id, so the per-resource lease and claims hold across
parts: a continuation delivered twice acts once. The schedule's name is derived from the sweep,
the kind, the region and the part, so a second delivery that tries to arrange the same next part
finds it arranged already (ConflictException) instead of forking the chain.

Which chain is going on is kept in the action log (reaper.sweep.chain): a scheduled sweep defers to a
live chain instead of starting a second one, and a continuation of a chain that was declared dead
and superseded is dropped. A chain is never dropped for its age: it reaches every resource.

Scheduler deletes a one-time schedule once it has invoked its target (ActionAfterCompletion DELETE):
https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-delete.html
Each sweep function has reserved concurrency 1: a part that arrives while another invocation runs
is throttled, and Lambda keeps an asynchronous event and retries it for up to 6 hours; the same
page warns that an event may be delivered more than once (hence the claims):
https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reaper.aws.faults import create_one_off_schedule
from reaper.core.errors import BadEventError
from reaper.core.events import parse_model
from reaper.core.settings import KINDS, Settings
from reaper.core.timeutil import as_utc, iso

SOURCE = "mlreaper.sweep"
DETAIL_TYPE = "Sweep Continuation"
MAX_PARTS = 50  # a chain longer than this stops with one error: something is wrong, never a loop
# A next part is due reaper.record.chain_record.DELAY after this part ends (the chain record's WINDOW counts it).
# What arranging a continuation calls; iam.COMMON grants it to every sweep function.
PERMISSIONS = ("scheduler:CreateSchedule", "iam:PassRole")
_REGION = r"[a-z]{2}(-[a-z]+)+-\d{1,2}"


class Superseded(Exception):
    """The chain record names another sweep, or this chain finished or went past this part: no next part."""


class CursorJson(TypedDict):
    """A Cursor as the continuation event's detail carries it (ContinuationDetail reads it back)."""

    kind: str
    region: str
    after: str
    sweep_started: str  # ISO 8601, with its offset
    part: int
    event_id: str


# EventBridge's event shape (https://docs.aws.amazon.com/eventbridge/latest/ref/overiew-event-structure.html):
# "detail-type" is no identifier, hence the functional form
ContinuationEvent = TypedDict(
    "ContinuationEvent",
    {
        "version": str,
        "id": str,
        "detail-type": str,
        "source": str,
        "account": str,
        "time": str,
        "region": str,
        "resources": list[str],
        "detail": CursorJson,
    },
)


@dataclass(frozen=True)
class Cursor:
    """Where the next part of a sweep starts: after `after` in `region` (then the regions after it)."""

    kind: str
    region: str
    after: str  # the id of the last resource handled ("": none yet in this region); ids sort as strings
    sweep_started: datetime  # the first part's `now`
    part: int  # the part that starts here (the first part is 1)
    event_id: str  # the first part's event id: the claims and the lease use it

    def detail(self) -> CursorJson:
        return {
            "kind": self.kind,
            "region": self.region,
            "after": self.after,
            "sweep_started": iso(self.sweep_started),
            "part": self.part,
            "event_id": self.event_id,
        }


class ContinuationDetail(BaseModel):
    """The detail of a `Sweep Continuation` event: a cursor, checked field by field."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    region: str = Field(pattern=f"^{_REGION}$")
    after: str = Field(default="", max_length=1024)  # "": from the region's first resource
    sweep_started: datetime
    part: int = Field(ge=2, le=MAX_PARTS)
    event_id: str = Field(min_length=1, max_length=200, pattern=r"^[\x21-\x7e]+$")

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        if v not in KINDS:
            raise ValueError(f"unknown kind {v!r}")
        return v

    @field_validator("after")
    @classmethod
    def _printable(cls, v: str) -> str:
        if not v.isprintable():
            raise ValueError("not a resource id (unprintable characters)")
        return v

    @field_validator("sweep_started")
    @classmethod
    def _aware(cls, v: datetime) -> datetime:
        if v.tzinfo is None:
            raise ValueError("a time with its offset expected (e.g. 2026-12-02T03:15:00Z)")
        return as_utc(v)


def parse(detail: Mapping[str, object], kind: str, regions: tuple[str, ...], now: datetime) -> Cursor:
    """The cursor of a continuation for this function's `kind`; anything else is a BadEventError."""
    d = parse_model(ContinuationDetail, detail, f"a {DETAIL_TYPE} event", "detail.")
    if d.kind != kind:
        raise BadEventError(f"a {d.kind} continuation sent to the {kind} function")
    if d.region not in regions:
        raise BadEventError(f"a continuation for region {d.region!r}, which this stack does not sweep ({', '.join(regions)})")
    if d.sweep_started > as_utc(now) + timedelta(minutes=5):
        raise BadEventError(f"a continuation of a sweep that starts in the future ({iso(d.sweep_started)})")
    return Cursor(d.kind, d.region, d.after, d.sweep_started, d.part, d.event_id)


def schedule_name(cursor: Cursor) -> str:
    """≤ 64 characters of [0-9a-zA-Z-_.], the same for every attempt at the same part."""
    digest = hashlib.sha256(f"{cursor.event_id}|{cursor.kind}|{cursor.region}|{cursor.part}".encode()).hexdigest()[:20]
    return f"mlreaper-sweep-{cursor.kind}-p{cursor.part}-{digest}"


def event(cursor: Cursor, at: datetime) -> ContinuationEvent:
    """The EventBridge-shaped event the schedule delivers (events/<kind>-continuation.json)."""
    return {
        "version": "0",
        "id": schedule_name(cursor),
        "detail-type": DETAIL_TYPE,
        "source": SOURCE,
        "account": "",
        "time": iso(at),
        "region": cursor.region,
        "resources": [],
        "detail": cursor.detail(),
    }


def arrange(scheduler: Any, settings: Settings, cursor: Cursor, target_arn: str, at: datetime) -> str:
    """Create the schedule for the next part. Returns what was done; raises AwsError or ValueError."""
    if not (settings.continuation_role_arn and settings.continuation_schedule_group):
        raise ValueError("REAPER_CONTINUATION_ROLE_ARN / REAPER_CONTINUATION_SCHEDULE_GROUP are not set")
    if not target_arn:
        raise ValueError("this function's own ARN is unknown (no Lambda context)")
    name = schedule_name(cursor)
    created = create_one_off_schedule(
        scheduler,
        name=name,
        group=settings.continuation_schedule_group,
        at=as_utc(at),
        timezone="UTC",
        target_arn=target_arn,
        role_arn=settings.continuation_role_arn,
        payload=event(cursor, at),
        description=f"mlreaper: part {cursor.part} of the {cursor.kind} sweep started {iso(cursor.sweep_started)}",
        retry={"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 900},
    )
    return f"part {cursor.part} at {iso(at)} ({name})" if created else f"part {cursor.part} arranged already ({name})"
