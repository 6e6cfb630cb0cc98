"""What the Lambda functions call: parse the event, run the core, return a summary.

Functions in functions/<name>/app.py stay thin: their runtime built at cold start (reaper.wiring),
then decorators plus one call into here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from reaper import kinds
from reaper.core.errors import BadEventError
from reaper.core.events import SCHEDULE_SOURCES, SCHEDULED, EventBridgeEvent, is_sns, parse_eventbridge, parse_sns, parse_stop_now
from reaper.core.observability import logger
from reaper.core.results import EventResult, HandlerResult
from reaper.kinds.base import Kind
from reaper.record.runtime import Runtime
from reaper.slack.buttons import STOP_DETAIL_TYPE, STOP_SOURCE
from reaper.sweep import continuation, org_modes, pipeline
from reaper.sweep.in_parts import sweep_in_parts


@dataclass(frozen=True)
class SweepStart:
    """What starts a sweep: its event id, and where a continuation resumes (None: from the top)."""

    event_id: str
    resume: continuation.Cursor | None = None
    budget: bool = False  # started by an AWS Budgets notification


def handle_kind_event(event: Any, kind_name: str, rt: Runtime, now: datetime | None = None, context: Any = None) -> HandlerResult:
    """A sweep of one kind (scheduled, its next part, or after a budget notification), or an event the
    kind knows (state change, API call, Stop now).

    The event is parsed and checked first (a malformed one is a BadEventError before anything is read);
    then the runtime follows the organisation's modes, once; every path that sweeps ends in the one
    call below. With the Lambda context, the sweep knows its deadline and starts no change in its last seconds.
    """
    now = now or datetime.now(UTC)
    kind = kinds.get(kind_name)
    start = sweep_start(event, kind, rt, now)
    rt = org_modes.follow(rt, now)  # the organisation's modes for this account, when it takes them
    handled: EventResult | None = None
    if isinstance(start, EventBridgeEvent):
        ev = start
        if ev.source == STOP_SOURCE and ev.detail_type == STOP_DETAIL_TYPE:  # invoked by the interactions function only
            from reaper.slack.stop import stop_now

            # parsed before anything is read or changed: a malformed detail is a BadEventError, answered nowhere
            stopped = stop_now(rt, kind, ev.id, parse_stop_now(ev.detail), now)
            logger.info("stop now (Slack)", extra={"kind": kind_name, **stopped})
            return stopped
        handler = kind.event_handler(ev.source, ev.detail_type)
        if handler is None:
            raise BadEventError(f"{kind_name} function does not handle {ev.detail_type!r} events from {ev.source!r}")
        handled = handler(rt, ev, now, pipeline.check)  # the one door for the resources an event names
        logger.info("event handled", extra={"kind": kind_name, "detail_type": ev.detail_type, **handled})
        if not handled.get("sweep_now"):
            return handled
        start = SweepStart(ev.id)  # the event found something to act on now: a sweep, through the same gate
    summary = sweep_in_parts(rt, kind_name, now, start.event_id, context, start.resume)
    if handled is not None:
        handled["sweep"] = summary
        return handled
    if start.budget:
        logger.info("budget notification handled", extra={"kind": kind_name, **summary})
    return summary


def sweep_start(event: Any, kind: Kind, rt: Runtime, now: datetime) -> SweepStart | EventBridgeEvent:
    """The sweep an event starts, checked against this stack's own regions and budget topic (which central
    settings never change); else the EventBridge event itself, for the kind or Stop now.

    An AWS Budgets notification (through the reaper's SNS topic) is only the trigger: its text is not
    parsed. The sweep reads every mlreaper budget's figures from the Budgets API, as each scheduled
    sweep does, so a late, repeated or forged message changes nothing that the budgets themselves do not say.
    """
    if is_sns(event):
        sns = parse_sns(event)
        topic = rt.settings.budget_topic_arn
        for record in sns.Records:
            if topic is None or record.Sns.TopicArn != topic:
                raise BadEventError(f"SNS message from {record.Sns.TopicArn!r}, not the budget topic ({topic or 'none configured'})")
        if not kind.declaration.budgeted:
            raise BadEventError(f"{kind.name} function does not take budget notifications")
        return SweepStart(f"budget:{sns.Records[0].Sns.MessageId}", budget=True)
    ev = parse_eventbridge(event)
    if ev.detail_type in SCHEDULED and ev.source in SCHEDULE_SOURCES:
        return SweepStart(ev.id)
    if ev.source == continuation.SOURCE and ev.detail_type == continuation.DETAIL_TYPE:
        cursor = continuation.parse(ev.detail, kind.name, rt.regions, now)
        return SweepStart(cursor.event_id, cursor)
    return ev
