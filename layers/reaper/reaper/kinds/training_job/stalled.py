"""The stalled-job rule, pure: a running job with no progress (no new log event, no CPU or GPU use)
for `StalledMinutes` is told to its owner; with `StalledJobAction=stop` it is warned, then stopped
once the stack's grace (GraceMinutes) has passed since the warning, unless it progresses meanwhile
(the next sweep then keeps it and the warning is cleared).

The warning and its grace are the rule's own: the training-job kind's grace is 0 by default so that
ceilings act at once, but a stall is a judgement on evidence, and the owner gets time to answer it.
Unknown progress (no log stream and no metric) is never a stall.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from reaper.core.model import Decision, KindAction, Verdict
from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.core.timeutil import iso
from reaper.kinds.training_job import ActionName
from reaper.kinds.training_job.model import WHAT, JobFacts, Progress
from reaper.kinds.training_job.settings import TrainingJobSettings


def stall_evidence(progress: Progress) -> dict[str, object]:
    return {
        "minutes": progress.minutes,
        "stalled": progress.stalled,
        "log_streams": progress.log_streams,
        "newest_log": iso(progress.newest_log) if progress.newest_log else None,
        "busiest_percent": progress.busiest_percent,
        "metric_hosts": progress.metric_hosts,
        "parent": progress.parent,
        "unknown": progress.error,
    }


def stall_note(facts: JobFacts, progress: Progress, settings: Settings) -> tuple[str, str] | None:
    """The notify-only finding (StalledJobAction=notify), or None when not stalled or held by a parent."""
    if not progress.stalled or progress.parent:
        return None
    return (
        "stalled",
        f"the {WHAT[facts.job_type]} looks stalled: {progress.text()}. Told only (StalledJobAction=notify): it bills until it ends; "
        f"stop it yourself if it hangs, or tag it {settings.tag('exempt')}=true if it is slow on purpose",
    )


def stall_decision(
    facts: JobFacts, progress: Progress, evidence: dict[str, object], view: TagView, settings: Settings, now: datetime
) -> Decision | None:
    """With StalledJobAction=stop: warn a stalled job, then stop it after the grace; None otherwise."""
    if not progress.stalled:
        return None
    evidence = {**evidence, "stalled": stall_evidence(progress)}
    if progress.parent:
        return Decision(
            Verdict.KEEP,
            f"no progress for {progress.minutes} min, as its parent {progress.parent}: judged and stopped with it",
            evidence=evidence,
        )
    if settings.of(TrainingJobSettings).stalled_job_action != "stop":
        return None
    reason = f"the {WHAT[facts.job_type]} is stalled: {progress.text()}"
    return warned_first(reason, ActionName.STOP, "unless it logs or computes again", evidence, view, settings.grace_minutes, now)


def warned_first(
    reason: str,
    action: KindAction,
    unless: str,
    evidence: dict[str, object],
    view: TagView,
    grace: int,
    now: datetime,
    always: bool = False,
) -> Decision:
    """The rule's own warning and grace: warn first (reaper:warned-at), act `grace` minutes after the
    warning; a grace of 0 acts at once (docs/tags.md, Modes, grace and verdicts), unless `always`: then the action waits for a
    later sweep than the warning's."""
    warned = view.warned_at
    if warned is None and (grace > 0 or always):
        when = f"in {grace} min" if grace > 0 else "at the next sweep"
        return Decision(
            Verdict.WARN,
            f"{reason}; will {action} {when} {unless}",
            action=action,
            evidence={**evidence, "grace_minutes": grace},
            newly_warned=True,
        )
    due = warned + timedelta(minutes=grace) if warned is not None else now
    if warned is not None and now < due:
        return Decision(
            Verdict.WARN, f"{reason}; warned at {iso(warned)}, will {action} after {iso(due)}", action=action, evidence=evidence, quiet=True
        )
    return Decision(Verdict.ACT, reason, action=action, evidence=evidence)
