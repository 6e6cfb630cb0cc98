"""A chained sweep: one part of a sweep, and the next part arranged when time runs short.

The part asks the chain record whether it may run (reaper.sweep.chain), arranges the next part to invoke
the same function again (reaper.sweep.continuation), and closes the chain record with the last part.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reaper.aws.faults import AwsError, short
from reaper.core.deadline import Deadline
from reaper.core.model import Outcome, Verdict
from reaper.core.observability import MetricUnit, logger, metrics
from reaper.core.results import SweepSummary
from reaper.core.timeutil import human_duration, interval, iso
from reaper.record import chain_record, coverage_metrics
from reaper.record.runtime import Runtime
from reaper.sweep import chain, continuation, pipeline


def summarize(event_id: str, outcomes: list[Outcome]) -> SweepSummary:
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


def sweep_in_parts(
    rt: Runtime, kind_name: str, now: datetime, event_id: str, context: Any, resume: continuation.Cursor | None = None
) -> SweepSummary:
    """A sweep (or its part after `resume`); when time runs short, its next part is arranged to
    invoke this function again (reaper.sweep.continuation), and the chain record says so (reaper.sweep.chain).

    A full sweep defers to a live chain; a continuation of a superseded chain is dropped. Without
    an action log there is no chain record (and every sweep goes on as it comes).
    """
    part = _PartSweep(rt, kind_name, now, event_id, context, resume)
    refused = part.admit()
    if refused is not None:
        return refused
    run = pipeline.sweep_run(
        rt,
        [kind_name],
        now,
        event_id,
        deadline=Deadline.from_lambda(context),
        resume=resume,
        continue_with=part.arrange,
        preface=part.preface,
    )
    summary = part.summarize(run)
    part.note_outlasted(run, summary)
    part.close(run, summary)
    # what the sweep could not judge: dashboard metrics and one log entry per kind and region
    summary["unknown"] = sum(c.unknown for c in coverage_metrics.publish(rt, run.outcomes, now, event_id))
    for verdict, n in summary["verdicts"].items():
        metrics.add_metric(name=f"Verdict_{verdict}", unit=MetricUnit.Count, value=n)
    logger.info("sweep done" if run.next_part is None else "sweep part done", extra={"kind": kind_name, **summary})
    return summary


class _PartSweep:
    """One part of a chained sweep: whether it may run (the chain record), how it arranges the next
    part, and how it closes the chain."""

    def __init__(self, rt: Runtime, kind_name: str, now: datetime, event_id: str, context: Any, resume: continuation.Cursor | None) -> None:
        self.rt, self.kind_name, self.now, self.event_id, self.resume = rt, kind_name, now, event_id, resume
        # unqualified: the continuation role may invoke the function itself (template.yaml), not an alias
        self.target = ":".join(str(getattr(context, "invoked_function_arn", "") or "").split(":")[:7])
        self.home = rt.home_region  # the chain record's key: one per kind per stack
        self.this_part = resume.part if resume else 1
        self.wrote = resume is not None  # whether the chain record may be this sweep's (to close it)
        self.preface: list[Outcome] = []
        self.unreadable: str | None = None
        self.started = resume.sweep_started if resume else now

    def admit(self) -> SweepSummary | None:
        """None when this part runs; else the summary of why it does not (superseded, or deferred)."""
        rt, kind_name, event_id, resume = self.rt, self.kind_name, self.event_id, self.resume
        if rt.log is None:
            return None
        record, self.unreadable = _read_chain(rt, kind_name, self.home, event_id)
        if resume is not None and record is not None and record.event_id != resume.event_id:
            why = f"superseded: the chain record names {record.describe()} ({record.status})"
            logger.warning("continuation dropped", extra={"kind": kind_name, "part": resume.part, "event_id": event_id, "why": why})
            metrics.add_metric(name="ContinuationDropped", unit=MetricUnit.Count, value=1)
            return {"event_id": event_id, "part": resume.part, "dropped": why}
        if resume is None and record is not None and record.status == chain_record.RUNNING:
            if record.alive(self.now) or not _take_over(rt, kind_name, self.home, record, event_id, self.now):
                why = f"deferred to the chain in progress: {record.describe()}"
                logger.info("sweep deferred", extra={"kind": kind_name, "event_id": event_id, "chain": record.event_id, "why": why})
                metrics.add_metric(name="SweepDeferred", unit=MetricUnit.Count, value=1)
                return {"event_id": event_id, "part": 1, "deferred": why}
            self.wrote = True
            reason = (
                f"the {kind_name} sweep {record.event_id or '(unnamed)'} started {_when(record.started)} died: its part {record.part}"
                f" (due {_when(record.due or record.started)}) never ran, or never finished; this sweep starts again from the top"
            )
            logger.error(reason)
            self.preface.append(pipeline.sweep_error(kind_name, self.home, rt.settings, reason, f"chain-dead:{record.event_id}"))
        return None

    def arrange(self, cursor: continuation.Cursor, elapsed: float) -> str:
        at = self.now + timedelta(seconds=elapsed) + chain_record.DELAY
        if self.rt.log is not None:
            if not chain.arranging(self.rt.log, self.home, cursor, at, self.now + timedelta(seconds=elapsed)):
                raise continuation.Superseded(f"the chain record names another sweep, or this one finished or went past part {cursor.part}")
            self.wrote = True
        return continuation.arrange(self.rt.clients()("scheduler"), self.rt.settings, cursor, self.target, at)

    def summarize(self, run: pipeline.SweepRun) -> SweepSummary:
        summary = summarize(self.event_id, run.outcomes)
        summary["part"] = self.this_part
        if self.unreadable is not None:
            summary["chain"] = self.unreadable
        if run.next_part is not None:
            summary["continues"] = run.arranged or f"not arranged: {run.superseded or f'{run.unreached} not reached'}"
            summary["after"] = run.next_part.after
        return summary

    def close(self, run: pipeline.SweepRun, summary: SweepSummary) -> None:
        """The chain record ends with the last part, or with a part that could not arrange the next."""
        if self.rt.log is None or not self.wrote:
            return
        if run.next_part is not None and (run.arranged is not None or run.superseded is not None):
            return
        if run.next_part is None:
            status, why = chain_record.FINISHED, "every part done"
        else:
            status, why = chain_record.ENDED, run.ended or summary["continues"]
        part = run.next_part.part if run.next_part is not None else self.this_part
        _close_chain(self.rt, self.kind_name, self.home, self.event_id, self.started, part, status, why, self.now)

    def note_outlasted(self, run: pipeline.SweepRun, summary: SweepSummary) -> None:
        every = interval(self.rt.settings.sweep_schedule)
        if run.next_part is not None or self.resume is None or every is None or self.now - self.started <= every:
            return
        # the chain outlasted the schedule: the full sweeps in between deferred to it (reaper.sweep.chain)
        minutes = int((self.now - self.started).total_seconds() // 60)
        summary["outlasted_schedule"] = f"started {iso(self.started)}, {minutes} min ago; sweeps every {human_duration(every)}"
        logger.warning(
            "sweep chain longer than its schedule", extra={"kind": self.kind_name, "event_id": self.event_id, "parts": self.this_part}
        )
        metrics.add_metric(name="SweepOutlastedSchedule", unit=MetricUnit.Count, value=1)


def _when(at: datetime | None) -> str:
    return iso(at) if at is not None else "at an unknown time (the chain record is not this version's)"


def _read_chain(rt: Runtime, kind_name: str, home: str, event_id: str) -> tuple[chain_record.ChainRecord | None, str | None]:
    """The chain record, or None when the table cannot be read: the sweep then goes on (never skipped
    for want of it, and loudly: an error line and a metric). No second chain can come of it: the
    conditional write before a next part is arranged refuses while another live chain holds the record."""
    assert rt.log is not None
    try:
        return rt.log.chain(kind_name, home), None
    except AwsError as exc:
        why = f"chain record unreadable ({short(exc)}): swept anyway"
        logger.error(why, extra={"kind": kind_name, "event_id": event_id})
        metrics.add_metric(name="ChainRecordUnreadable", unit=MetricUnit.Count, value=1)
        return None, why


def _take_over(rt: Runtime, kind_name: str, home: str, dead: chain_record.ChainRecord, event_id: str, now: datetime) -> bool:
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
