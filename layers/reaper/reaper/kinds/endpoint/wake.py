"""Off-hours: bring endpoints back at the start of working hours, with no process left running.

An EventBridge Scheduler one-off schedule per restore, `at(<local start>)` in the working-hours
timezone, invokes the restore function with {"name": ..., "wake": <schedule name>} and deletes
itself afterwards. The schedule is made before the endpoint goes to zero, so a failure leaves the
endpoint as it was. The wake restores only what is still the reaper's to restore (wakeup.py), and
the schedule is deleted as soon as the restore record closes, by whatever path (restore.py).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from botocore.exceptions import ClientError

from reaper.aws.faults import create_one_off_schedule, is_not_found
from reaper.core.errors import ActionRefused
from reaper.core.model import Decision, Resource
from reaper.core.settings import DAY_NAMES, Settings
from reaper.core.timeutil import parse_instant
from reaper.kinds.base import ActContext
from reaper.kinds.endpoint.settings import EndpointSettings


def next_work_start(settings: Settings, now: datetime) -> datetime | None:
    """The next start of working hours after `now`, in the working-hours timezone."""
    oh = settings.off_hours
    tz = ZoneInfo(oh.timezone)
    local = now.astimezone(tz)
    for add in range(8):
        day = (local + timedelta(days=add)).date()
        if DAY_NAMES[day.weekday()] not in oh.days:
            continue
        start = datetime.combine(day, oh.start, tzinfo=tz)
        if start > local:
            return start
    return None


def schedule_name(endpoint: str, at: datetime) -> str:
    """Unique per endpoint and time, within the 64 characters Scheduler allows."""
    digest = hashlib.sha256(endpoint.encode()).hexdigest()[:6]
    return f"mlr-wake-{endpoint[:35]}-{digest}-{at:%Y%m%d%H%M}"


def wanted(ctx: ActContext, decision: Decision) -> bool:
    if decision.evidence.get("wake_at"):  # learned wake, or hours pinned by its wake tag (rules.wake_reason)
        return True
    return decision.evidence.get("policy") == "off-hours" and ctx.settings.of(EndpointSettings).endpoint_off_hours_restore


def learned_at(ctx: ActContext, decision: Decision) -> datetime | None:
    """When a learned (or pinned) wake brings it back, in the working-hours timezone; None for off-hours."""
    raw = decision.evidence.get("wake_at")
    return parse_instant(str(raw)).astimezone(ZoneInfo(ctx.settings.off_hours.timezone)) if raw else None


def schedule_restore(ctx: ActContext, resource: Resource, at: datetime | None = None) -> tuple[str, datetime]:
    """Create the schedule (idempotent: a duplicate delivery finds it made) at `at`, or else at the next
    start of working hours. Returns (name, local time)."""
    settings = ctx.settings
    reason = "before its usual traffic" if at is not None else "start of working hours"
    at = at or next_work_start(settings, ctx.now)
    if at is None:
        raise ActionRefused(
            "CreateSchedule", "no working day is configured (REAPER_WORK_DAYS), so there is no start of working hours to come back at"
        )
    own = settings.of(EndpointSettings)
    target, role = own.restore_function_arn, own.scheduler_role_arn
    if not (target and role):  # EndpointSettings refuses off-hours restore without them: never reached from a sweep
        raise ActionRefused("CreateSchedule", "REAPER_RESTORE_FUNCTION_ARN and REAPER_SCHEDULER_ROLE_ARN must be set to schedule a restore")
    name = schedule_name(resource.id, at)
    create_one_off_schedule(
        ctx.clients("scheduler"),
        name=name,
        group=settings.schedule_group,
        at=at,
        timezone=settings.off_hours.timezone,
        target_arn=target,
        role_arn=role,
        payload={"name": resource.id, "reason": reason, "wake": name},
        description=f"mlreaper: restore endpoint {resource.id} {'at the ' if reason.startswith('start') else ''}{reason}",
        retry={"MaximumRetryAttempts": 10, "MaximumEventAgeInSeconds": 3600},
    )
    return name, at


def describe(name: str, at: datetime) -> str:
    return f"back at {at:%a %Y-%m-%d %H:%M} {at.tzinfo} (schedule {name})"


def delete_schedule(scheduler: Any, name: str, group: str) -> None:
    """Delete a wake's schedule; one already gone (it ran and deleted itself, or was deleted) is fine."""
    try:
        scheduler.delete_schedule(Name=name, GroupName=group)
    except ClientError as exc:
        if not is_not_found(exc):
            raise
