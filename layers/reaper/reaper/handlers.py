"""What the Lambda functions call: parse the event, run the core, return a summary.

Functions in functions/<name>/app.py stay thin: decorators plus one call into here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from reaper import continuation, pipeline
from reaper import kinds as kind_registry
from reaper.deadline import Deadline
from reaper.errors import BadEventError
from reaper.events import SCHEDULE_SOURCES, SCHEDULED, is_sns, parse_eventbridge, parse_sns
from reaper.model import Outcome, Verdict
from reaper.observability import MetricUnit, logger, metrics
from reaper.runtime import Runtime
from reaper.settings import Settings
from reaper.slack_buttons import STOP_DETAIL_TYPE, STOP_SOURCE


def build_runtime(*kind_names: str) -> Runtime:
    """Validated once at cold start: a bad configuration fails the deployment's first call loudly.

    The named kinds are imported now, in the init phase, rather than on the first event.
    """
    for name in kind_names:
        kind_registry.get(name)
    return Runtime.build(Settings.from_env())


def summarize(event_id: str, outcomes: list[Outcome]) -> dict[str, Any]:
    counts = {v.value: 0 for v in Verdict}
    for o in outcomes:
        counts[o.verdict.value] += 1
    return {
        "event_id": event_id,
        "resources": len(outcomes),
        "verdicts": counts,
        "acted": [o.resource.id for o in outcomes if o.executed],
        "errors": [f"{o.resource.kind} {o.resource.id}: {o.reason}" for o in outcomes if o.verdict is Verdict.ERROR],
    }


def handle_kind_event(event: Any, kind_name: str, rt: Runtime, now: datetime | None = None, context: Any = None) -> dict[str, Any]:
    """A scheduled sweep of one kind, or an event the kind knows (state change, API call).

    With the Lambda context, the sweep knows its deadline and starts no change in its last seconds.
    """
    now = now or datetime.now(UTC)
    if is_sns(event):
        return handle_budget_notification(event, kind_name, rt, now, context)
    ev = parse_eventbridge(event)
    if ev.detail_type in SCHEDULED and ev.source in SCHEDULE_SOURCES:
        return sweep_in_parts(rt, kind_name, now, ev.id, context)
    if ev.source == continuation.SOURCE and ev.detail_type == continuation.DETAIL_TYPE:
        cursor = continuation.parse(ev.detail, kind_name, rt.regions, now)
        why = continuation.stale(cursor, rt.settings, now)
        if why is not None:
            logger.warning("continuation dropped", extra={"kind": kind_name, "part": cursor.part, "event_id": cursor.event_id, "why": why})
            return {"event_id": cursor.event_id, "part": cursor.part, "dropped": why}
        return sweep_in_parts(rt, kind_name, now, cursor.event_id, context, cursor)
    if ev.source == STOP_SOURCE and ev.detail_type == STOP_DETAIL_TYPE:  # invoked by the interactions function only
        from reaper.slack_stop import stop_now

        result = stop_now(rt, kind_registry.get(kind_name), ev.id, ev.detail, now)
        logger.info("stop now (Slack)", extra={"kind": kind_name, **result})
        return result
    handler = kind_registry.get(kind_name).event_handler(ev.source, ev.detail_type)
    if handler is not None:
        result = handler(rt, ev, now)
        logger.info("event handled", extra={"kind": kind_name, "detail_type": ev.detail_type, **result})
        return result
    raise BadEventError(f"{kind_name} function does not handle {ev.detail_type!r} events from {ev.source!r}")


def sweep_in_parts(
    rt: Runtime, kind_name: str, now: datetime, event_id: str, context: Any, resume: continuation.Cursor | None = None
) -> dict[str, Any]:
    """A sweep (or its part after `resume`); when time runs short, its next part is arranged to
    invoke this function again (reaper.continuation)."""
    # unqualified: the continuation role may invoke the function itself (template.yaml), not an alias
    target = ":".join(str(getattr(context, "invoked_function_arn", "") or "").split(":")[:7])

    def arrange(cursor: continuation.Cursor, elapsed: float) -> str:
        at = now + timedelta(seconds=elapsed) + continuation.DELAY
        return continuation.arrange(rt.clients()("scheduler"), rt.settings, cursor, target, at)

    run = pipeline.sweep_run(rt, [kind_name], now, event_id, deadline=Deadline.from_lambda(context), resume=resume, continue_with=arrange)
    summary = summarize(event_id, run.outcomes)
    summary["part"] = resume.part if resume else 1
    if run.next_part is not None:
        summary["continues"] = run.arranged or f"not arranged: {run.unreached} not reached"
        summary["after"] = run.next_part.after
    for verdict, n in summary["verdicts"].items():
        metrics.add_metric(name=f"Verdict_{verdict}", unit=MetricUnit.Count, value=n)
    logger.info("sweep done" if run.next_part is None else "sweep part done", extra={"kind": kind_name, **summary})
    return summary


def handle_budget_notification(event: Any, kind_name: str, rt: Runtime, now: datetime, context: Any = None) -> dict[str, Any]:
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
