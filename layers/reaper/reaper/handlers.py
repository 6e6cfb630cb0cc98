"""What the Lambda functions call: parse the event, run the core, return a summary.

Functions in functions/<name>/app.py stay thin: their runtime built at cold start (reaper.wiring),
then decorators plus one call into here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from reaper import kinds as kind_registry
from reaper.core.errors import BadEventError
from reaper.core.events import SCHEDULE_SOURCES, SCHEDULED, is_sns, parse_eventbridge, parse_sns, parse_stop_now
from reaper.core.observability import logger
from reaper.core.results import HandlerResult, SweepSummary
from reaper.record.runtime import Runtime
from reaper.slack.buttons import STOP_DETAIL_TYPE, STOP_SOURCE
from reaper.sweep import continuation, org_modes, pipeline
from reaper.sweep.in_parts import sweep_in_parts


def handle_kind_event(event: Any, kind_name: str, rt: Runtime, now: datetime | None = None, context: Any = None) -> HandlerResult:
    """A scheduled sweep of one kind, or an event the kind knows (state change, API call).

    With the Lambda context, the sweep knows its deadline and starts no change in its last seconds.
    """
    now = now or datetime.now(UTC)
    rt = org_modes.follow(rt, now)  # the organisation's modes for this account, when it takes them
    if is_sns(event):
        return handle_budget_notification(event, kind_name, rt, now, context)
    ev = parse_eventbridge(event)
    if ev.detail_type in SCHEDULED and ev.source in SCHEDULE_SOURCES:
        return sweep_in_parts(rt, kind_name, now, ev.id, context)
    if ev.source == continuation.SOURCE and ev.detail_type == continuation.DETAIL_TYPE:
        cursor = continuation.parse(ev.detail, kind_name, rt.regions, now)
        return sweep_in_parts(rt, kind_name, now, cursor.event_id, context, cursor)
    if ev.source == STOP_SOURCE and ev.detail_type == STOP_DETAIL_TYPE:  # invoked by the interactions function only
        from reaper.slack.stop import stop_now

        # parsed before anything is read or changed: a malformed detail is a BadEventError, answered nowhere
        stopped = stop_now(rt, kind_registry.get(kind_name), ev.id, parse_stop_now(ev.detail), now)
        logger.info("stop now (Slack)", extra={"kind": kind_name, **stopped})
        return stopped
    handler = kind_registry.get(kind_name).event_handler(ev.source, ev.detail_type)
    if handler is not None:
        result = handler(rt, ev, now, pipeline.check)  # the one door for the resources an event names
        logger.info("event handled", extra={"kind": kind_name, "detail_type": ev.detail_type, **result})
        if result.get("sweep_now"):  # the event found something to act on now: a sweep, through the same gate
            result["sweep"] = sweep_in_parts(rt, kind_name, now, ev.id, context)
        return result
    raise BadEventError(f"{kind_name} function does not handle {ev.detail_type!r} events from {ev.source!r}")


def handle_budget_notification(event: Any, kind_name: str, rt: Runtime, now: datetime, context: Any = None) -> SweepSummary:
    """An AWS Budgets notification (through the reaper's SNS topic): sweep the kind now.

    The message is only the trigger: its text is not parsed. The sweep reads every mlreaper budget's
    figures from the Budgets API, as each scheduled sweep does, so a late, repeated or forged
    message changes nothing that the budgets themselves do not say.
    """
    sns = parse_sns(event)
    topic = rt.settings.budget_topic_arn
    for record in sns.Records:
        if topic is None or record.Sns.TopicArn != topic:
            raise BadEventError(f"SNS message from {record.Sns.TopicArn!r}, not the budget topic ({topic or 'none configured'})")
    if not kind_registry.get(kind_name).declaration.budgeted:
        raise BadEventError(f"{kind_name} function does not take budget notifications")
    summary = sweep_in_parts(rt, kind_name, now, f"budget:{sns.Records[0].Sns.MessageId}", context)
    logger.info("budget notification handled", extra={"kind": kind_name, **summary})
    return summary
