"""What the kind functions return, typed: a sweep's summary, a Stop now's answer, an event's result.

Each is what the function logs and hands back to Lambda (JSON, as before: these are TypedDicts, so the
value stays a plain JSON object and mypy checks every key the code writes or reads). Keys a result may
lack are `total=False`; the handlers (reaper.handlers) return one of them.
"""

from __future__ import annotations

from typing import TypedDict


class SweepSummary(TypedDict, total=False):
    """A sweep's part (reaper.handlers.sweep_in_parts), or why it did not run (dropped, deferred)."""

    event_id: str
    resources: int
    verdicts: dict[str, int]  # every Verdict's value: how many resources got it
    acted: list[str]  # ids of the resources changed
    errors: list[str]  # "kind id: reason"
    part: int
    unknown: int  # resources it could not judge (reaper.record.coverage_metrics)
    chain: str  # the chain record could not be read: swept anyway
    continues: str  # the next part's schedule, or why it was not arranged
    after: str  # the id the next part starts after
    outlasted_schedule: str
    dropped: str  # a continuation of a superseded chain
    deferred: str  # a full sweep while a live chain runs


class StopNowResult(TypedDict):
    """A Stop now click, carried out or refused in the kind function (reaper.slack.stop)."""

    stop_now: str  # the outcome's verdict, or refused / gone / state
    said: str  # the thread's answer


class EventResult(TypedDict, total=False):
    """What a kind's event handler did (reaper.kinds.<kind>.events; reaper.kinds.base.EventHandler)."""

    event_id: str
    checked: str | list[str] | None  # the resource(s) looked at; None: none
    skipped: str  # why nothing more was done
    problems: list[str]  # tagging problems found on a new resource
    posted: bool  # a notice went to its owner
    acted: list[str]
    errors: list[str]
    verdicts: dict[str, int] | dict[str, str]  # fsx: how many got each verdict; capacity: each reservation's verdict
    reasons: dict[str, str]  # resource id -> its outcome's reason
    told: list[str]  # owners (or the admin channel) a notice went to
    instances: list[str]
    endpoint: str
    status: str
    restore: str  # what became of a restore the event is about
    result: str
    job: str
    scheduled: dict[str, str]  # file system id -> its idle-window check
    gone: list[str]
    recorded: bool
    estimated_usd: float | None  # a training job's final cost (reaper.kinds.training_job.events.final_cost)
    sweep_now: bool  # the event found something to act on now: the handler sweeps, through the same gate
    sweep: SweepSummary


HandlerResult = SweepSummary | StopNowResult | EventResult
