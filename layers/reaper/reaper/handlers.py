"""What the Lambda functions call: parse the event, run the core, return a summary.

Functions in functions/<name>/app.py stay thin: decorators plus one call into here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from reaper import kinds as kind_registry
from reaper import wiring
from reaper.aws.faults import AwsError, short
from reaper.core.errors import BadEventError
from reaper.core.events import SCHEDULE_SOURCES, SCHEDULED, is_sns, parse_eventbridge, parse_sns
from reaper.core.model import Outcome, Verdict
from reaper.core.observability import MetricUnit, logger, metrics
from reaper.core.settings import Settings
from reaper.core.timeutil import human_duration, iso
from reaper.record.runtime import Runtime
from reaper.slack.buttons import STOP_DETAIL_TYPE, STOP_SOURCE
from reaper.sweep import chain, continuation, pipeline
from reaper.sweep.deadline import Deadline


def build_runtime(*kind_names: str) -> Runtime:
    """Validated once at cold start: a bad configuration fails the deployment's first call loudly.

    The named kinds are imported now, in the init phase, rather than on the first event.
    """
    for name in kind_names:
        kind_registry.get(name)
    return wiring.build_runtime(Settings.from_env())


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
        return sweep_in_parts(rt, kind_name, now, cursor.event_id, context, cursor)
    if ev.source == STOP_SOURCE and ev.detail_type == STOP_DETAIL_TYPE:  # invoked by the interactions function only
        from reaper.slack.stop import stop_now

        result = stop_now(rt, kind_registry.get(kind_name), ev.id, ev.detail, now)
        logger.info("stop now (Slack)", extra={"kind": kind_name, **result})
        return result
    handler = kind_registry.get(kind_name).event_handler(ev.source, ev.detail_type)
    if handler is not None:
        result = handler(rt, ev, now)
        logger.info("event handled", extra={"kind": kind_name, "detail_type": ev.detail_type, **result})
        if result.get("sweep_now"):  # the event found something to act on now: a sweep, through the same gate
            result["sweep"] = sweep_in_parts(rt, kind_name, now, ev.id, context)
        return result
    raise BadEventError(f"{kind_name} function does not handle {ev.detail_type!r} events from {ev.source!r}")


def sweep_in_parts(
    rt: Runtime, kind_name: str, now: datetime, event_id: str, context: Any, resume: continuation.Cursor | None = None
) -> dict[str, Any]:
    """A sweep (or its part after `resume`); when time runs short, its next part is arranged to
    invoke this function again (reaper.sweep.continuation), and the chain record says so (reaper.sweep.chain).

    A full sweep defers to a live chain; a continuation of a superseded chain is dropped. Without
    an action log there is no chain record (and every sweep goes on as it comes).
    """
    # unqualified: the continuation role may invoke the function itself (template.yaml), not an alias
    target = ":".join(str(getattr(context, "invoked_function_arn", "") or "").split(":")[:7])
    home = rt.home_region  # the chain record's key: one per kind per stack
    this_part = resume.part if resume else 1
    wrote = resume is not None  # whether the chain record may be this sweep's (to close it)
    preface: list[Outcome] = []
    unreadable: str | None = None
    if rt.log is not None:
        record, unreadable = _read_chain(rt, kind_name, home, event_id)
        if resume is not None and record is not None and record.event_id != resume.event_id:
            why = f"superseded: the chain record names {record.describe()} ({record.status})"
            logger.warning("continuation dropped", extra={"kind": kind_name, "part": resume.part, "event_id": event_id, "why": why})
            metrics.add_metric(name="ContinuationDropped", unit=MetricUnit.Count, value=1)
            return {"event_id": event_id, "part": resume.part, "dropped": why}
        if resume is None and record is not None and record.status == chain.RUNNING:
            if record.alive(now) or not _take_over(rt, kind_name, home, record, event_id, now):
                why = f"deferred to the chain in progress: {record.describe()}"
                logger.info("sweep deferred", extra={"kind": kind_name, "event_id": event_id, "chain": record.event_id, "why": why})
                metrics.add_metric(name="SweepDeferred", unit=MetricUnit.Count, value=1)
                return {"event_id": event_id, "part": 1, "deferred": why}
            wrote = True
            reason = (
                f"the {kind_name} sweep {record.event_id or '(unnamed)'} started {_when(record.started)} died: its part {record.part}"
                f" (due {_when(record.due or record.started)}) never ran, or never finished; this sweep starts again from the top"
            )
            logger.error(reason)
            preface.append(pipeline.sweep_error(kind_name, home, rt.settings, reason, f"chain-dead:{record.event_id}"))

    def arrange(cursor: continuation.Cursor, elapsed: float) -> str:
        nonlocal wrote
        at = now + timedelta(seconds=elapsed) + continuation.DELAY
        if rt.log is not None:
            if not chain.arranging(rt.log, home, cursor, at, now + timedelta(seconds=elapsed)):
                raise continuation.Superseded(f"the chain record names another sweep, or this one finished or went past part {cursor.part}")
            wrote = True
        return continuation.arrange(rt.clients()("scheduler"), rt.settings, cursor, target, at)

    run = pipeline.sweep_run(
        rt, [kind_name], now, event_id, deadline=Deadline.from_lambda(context), resume=resume, continue_with=arrange, preface=preface
    )
    summary = summarize(event_id, run.outcomes)
    summary["part"] = this_part
    if unreadable is not None:
        summary["chain"] = unreadable
    if run.next_part is not None:
        summary["continues"] = run.arranged or f"not arranged: {run.superseded or f'{run.unreached} not reached'}"
        summary["after"] = run.next_part.after
    started = resume.sweep_started if resume else now
    if rt.log is not None and wrote and (run.next_part is None or (run.arranged is None and run.superseded is None)):
        status, why = (chain.FINISHED, "every part done") if run.next_part is None else (chain.ENDED, run.ended or summary["continues"])
        part = run.next_part.part if run.next_part is not None else this_part
        _close_chain(rt, kind_name, home, event_id, started, part, status, why, now)
    every = continuation.interval(rt.settings.sweep_schedule)
    if run.next_part is None and resume is not None and every is not None and now - started > every:
        # the chain outlasted the schedule: the full sweeps in between deferred to it (reaper.sweep.chain)
        summary["outlasted_schedule"] = (
            f"started {iso(started)}, {int((now - started).total_seconds() // 60)} min ago; sweeps every {human_duration(every)}"
        )
        logger.warning("sweep chain longer than its schedule", extra={"kind": kind_name, "event_id": event_id, "parts": this_part})
        metrics.add_metric(name="SweepOutlastedSchedule", unit=MetricUnit.Count, value=1)
    for verdict, n in summary["verdicts"].items():
        metrics.add_metric(name=f"Verdict_{verdict}", unit=MetricUnit.Count, value=n)
    logger.info("sweep done" if run.next_part is None else "sweep part done", extra={"kind": kind_name, **summary})
    return summary


def _when(at: datetime | None) -> str:
    return iso(at) if at is not None else "at an unknown time (the chain record is not this version's)"


def _read_chain(rt: Runtime, kind_name: str, home: str, event_id: str) -> tuple[chain.ChainRecord | None, str | None]:
    """The chain record, or None when the table cannot be read: the sweep then goes on (never skipped
    for want of it, and loudly: an error line and a metric). No second chain can come of it: the
    conditional write before a next part is arranged refuses while another live chain holds the record."""
    assert rt.log is not None
    try:
        return chain.read(rt.log, kind_name, home), None
    except AwsError as exc:
        why = f"chain record unreadable ({short(exc)}): swept anyway"
        logger.error(why, extra={"kind": kind_name, "event_id": event_id})
        metrics.add_metric(name="ChainRecordUnreadable", unit=MetricUnit.Count, value=1)
        return None, why


def _take_over(rt: Runtime, kind_name: str, home: str, dead: chain.ChainRecord, event_id: str, now: datetime) -> bool:
    """Name this sweep in a dead chain's record. A failed write is no reason to stay idle: the first
    part's own conditional write also replaces a dead record."""
    assert rt.log is not None
    try:
        return chain.take_over(rt.log, kind_name, home, dead, event_id, now)
    except AwsError as exc:
        logger.error("dead chain record not taken over: sweeping anyway", extra={"kind": kind_name, "error": short(exc)})
        return True


def _close_chain(
    rt: Runtime, kind: str, home: str, event_id: str, started: datetime, part: int, status: str, why: str, now: datetime
) -> None:
    assert rt.log is not None
    try:
        if not chain.close(rt.log, kind, home, event_id, started, part, status, why, now):
            logger.info("chain record not closed: it names another sweep or a later part", extra={"kind": kind, "event_id": event_id})
    except AwsError as exc:  # left running: the next full sweep defers for a WINDOW, then says the chain died
        logger.error("chain record not closed", extra={"kind": kind, "event_id": event_id, "error": short(exc)})


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
