"""The FSx for Lustre decision, pure: (file system, signal, tags, settings, now) -> Decision.

Finished = available, in scope, no training job running on it, the last one ended at least the
idle window ago, and zero client I/O in every period of the window. A finished file system is
deleted in two phases, one sweep apart at least:
  phase 1  back it up (persistent) or export it to its S3 repository (linked scratch);
  phase 2  delete it, only once that backup is AVAILABLE / that export SUCCEEDED with no failed
           file, and only if nothing used it since phase 1 began.
Anything else keeps it, with the reason; a failed or stuck backup or export is an error, said once.
Zero I/O is `judge`d here too, from the series signals.py read.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

from reaper.aws.metrics import Series
from reaper.core.model import HOURS_PER_MONTH, Decision, Resource, Verdict
from reaper.core.policy import TagView, is_dev
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc, human_duration, iso
from reaper.kinds.fsx import ActionName
from reaper.kinds.fsx.model import (
    BACKUP_TAG,
    EXCUSABLE,
    EXPORT_TAG,
    KIND,
    METRICS,
    READ_LAG,
    Artifact,
    FsxFacts,
    FsxSignal,
    IoFinding,
    JobRef,
    Phase,
)
from reaper.kinds.fsx.settings import FsxSettings


def idle_window(view: TagView, settings: Settings) -> int:
    return view.idle_minutes or settings.idle_for(KIND)


def monthly(resource: Resource) -> str:
    return "cost unknown" if resource.hourly_usd is None else f"${resource.hourly_usd * HOURS_PER_MONTH:,.0f}/month"


def _window_text(minutes: int) -> str:
    return human_duration(timedelta(minutes=minutes))


def _days(days: float) -> str:
    return f"{days:g} d" if days == int(days) else human_duration(timedelta(days=days))


def _label(art: Artifact | None, phase: Phase | None) -> str:
    if art is not None:
        return f"{'backup' if art.kind == 'backup' else 'export task'} {art.id}"
    if phase is not None:
        return f"{'backup' if phase[0] == 'backup' else 'export task'} {phase[1]}"
    return ""


def decide(resource: Resource, signal: FsxSignal | None, view: TagView, settings: Settings, now: datetime) -> Decision:
    facts = resource.facts_as(FsxFacts)
    sig = signal if signal is not None else FsxSignal()
    phase = facts.phase
    art = sig.artifact
    window = idle_window(view, settings)
    evidence = _evidence(resource, facts, art, window)
    kept = f"; {_label(art, phase)} is kept and nothing is deleted" if phase else ""

    def keep(reason: str, unknown: str | None = None, **more: Any) -> Decision:
        return Decision(Verdict.KEEP, reason + kept, evidence={**evidence, **more}, unknown=unknown)

    if resource.state != "AVAILABLE":
        return keep(f"{resource.state}: only AVAILABLE file systems are candidates")
    jobs = sig.jobs
    if not is_dev(view, settings) and not jobs:
        stage = f"ml:stage is {view.stage!r}" if view.stage else "no ml:stage tag"
        return keep(
            f"not an ML dev file system ({stage}, and no SageMaker training job used it in the last "
            f"{_days(sig.jobs_lookback_days)}): never touched"
        )
    running = [j for j in jobs if j.running]
    if running:
        names = ", ".join(f"{j.name} ({j.status})" for j in running[:3]) + (f" and {len(running) - 3} more" if len(running) > 3 else "")
        return keep(f"in use by training job {names}", jobs_running=[j.name for j in running])
    last = _last_job(jobs)
    if last is not None and last.ended_at is not None and now - last.ended_at < timedelta(minutes=window):
        return keep(
            f"training job {last.name} ended {human_duration(now - last.ended_at)} ago, within the idle window ({_window_text(window)})",
            last_job=last.name,
            last_job_ended=iso(last.ended_at),
        )
    if resource.created_at is not None and now - resource.created_at < timedelta(minutes=window):
        return keep(f"created {human_duration(now - resource.created_at)} ago, within the idle window ({_window_text(window)})")
    if sig.io is None or sig.window_end is None:
        return keep("no AWS/FSx I/O data was read: unknown is not idle", unknown="not-read")
    excuse = (art.started_at, art.ended_at or now) if art is not None and art.kind == "export" and art.started_at else None
    io = judge(sig.io, sig.window_end, window, sig.period, excuse)
    evidence.update({"periods": io.periods, "missing_periods": io.missing, "io_totals": io.totals})
    if io.last_active is not None:
        ago = human_duration(now - io.last_active) if now > io.last_active else "0 m"
        return keep(f"in use: I/O {ago} ago ({describe_totals(io.totals)} in the last {_window_text(window)})", last_io=iso(io.last_active))
    if io.missing:
        return keep(_missing_text(io, window, sig.period), unknown="fsx-metric-gap")

    since_job = (
        f"last training job {last.name} ended {human_duration(now - last.ended_at)} ago"
        if last is not None and last.ended_at is not None
        else f"no training job used it in the last {_days(sig.jobs_lookback_days)}"
    )
    finished = (
        f"finished: {since_job}, no I/O for {_window_text(window)} ({facts.deployment}, {facts.capacity_gib or '?'} GiB, "
        f"{monthly(resource)})"
    )
    if last is not None and last.ended_at is not None:
        evidence.update({"last_job": last.name, "last_job_ended": iso(last.ended_at)})
    proof_start = sig.window_end - timedelta(minutes=window)
    # phase 1 carries on with a backup of its own only if it began inside this proof (actions.earlier_backup)
    evidence["idle_proof_from"] = iso(proof_start)
    return _phases(resource, view, settings, now, evidence, finished, phase, art, proof_start)


def _missing_text(io: IoFinding, window: int, period: int) -> str:
    """Why missing AWS/FSx data keeps it: FSx emits a datapoint every minute, idle or not (docs/aws-assumptions.md,
    FSX-1), so a gap is missing data. The newest gap is out of the window read once the window's end (CloudWatch's
    lag behind the clock) has moved a whole window past it."""
    if io.missing == io.periods or io.newest_missing is None:
        return f"no AWS/FSx I/O data in the last {_window_text(window)} (FSx publishes it every minute): unknown is not idle"
    leaves = io.newest_missing + timedelta(seconds=period) * io.periods + READ_LAG
    return (
        f"AWS/FSx I/O data missing for {io.missing} of {io.periods} periods in the last {_window_text(window)} (FSx publishes "
        f"it every minute, so a gap is missing data): unknown is not idle; the gap leaves the window at {iso(leaves)}"
    )


def _evidence(resource: Resource, facts: FsxFacts, art: Artifact | None, window: int) -> dict[str, Any]:
    """What every FSx verdict shows: size, cost, how its data is kept, and the phase it is in."""
    phase = facts.phase
    evidence: dict[str, Any] = {
        "deployment": facts.deployment,
        "capacity_gib": facts.capacity_gib,
        "monthly_usd": None if resource.hourly_usd is None else round(resource.hourly_usd * HOURS_PER_MONTH, 2),
        "idle_window_minutes": window,
        "protection": facts.protection.method,
        "data_kept_in": facts.protection.where() if facts.protection.method == "export" else None,
    }
    if phase:
        evidence.update({"phase": phase[0], f"{'backup_id' if phase[0] == 'backup' else 'export_task_id'}": phase[1]})
        if art is not None:
            evidence["phase_lifecycle"] = art.lifecycle
    return evidence


def _last_job(jobs: tuple[JobRef, ...]) -> JobRef | None:
    ended = [j for j in jobs if j.ended_at is not None]
    return max(ended, key=lambda j: j.ended_at or datetime.min) if ended else None


def _phases(
    resource: Resource,
    view: TagView,
    settings: Settings,
    now: datetime,
    evidence: dict[str, Any],
    finished: str,
    phase: Phase | None,
    art: Artifact | None,
    proof_start: datetime,
) -> Decision:
    restore = f"reaper restore {resource.id}"
    if phase is None:
        return _phase_one(resource, view, settings, evidence, finished, "")
    label = _label(art, phase)
    if art is None or not art.found or art.lifecycle == "DELETED":
        return _phase_one(resource, view, settings, evidence, finished, f"{label} no longer exists, so a new one is needed; ")
    fresh = art.started_at is not None and art.started_at >= proof_start
    if art.done:
        if not fresh:
            when = iso(art.started_at) if art.started_at else "an unknown time"
            return _phase_one(resource, view, settings, evidence, finished, f"{label} (from {when}) is older than the idle proof; ")
        where = (
            f"backup {art.id} is AVAILABLE" if art.kind == "backup" else f"export {art.id} SUCCEEDED ({art.total_files} files, none failed)"
        )
        return Decision(
            Verdict.ACT,
            f"{finished}; {where}, so it is deleted — {restore}",
            action=ActionName.DELETE,
            evidence=evidence,
            skip_grace=True,  # the owner was warned before phase 1, and it stayed unused since
        )
    age = now - art.started_at if art.started_at else timedelta(0)
    if art.running:
        if age > timedelta(hours=settings.of(FsxSettings).stuck_hours):
            return Decision(
                Verdict.ERROR,
                f"{finished}; but {label} is still {art.lifecycle} after {human_duration(age)}: nothing is deleted, and the reaper "
                f"starts no other. Look at it in the FSx console; remove tag {settings.tag(_phase_tag(art))} to start over",
                action=ActionName.DELETE,
                evidence=evidence,
                notify_key=f"stuck:{art.id}",
            )
        progress = f" {art.progress}%" if art.progress is not None else ""
        return Decision(
            Verdict.KEEP,
            f"in progress: {label} {art.lifecycle}{progress} since {iso(art.started_at) if art.started_at else '?'}; "
            f"deleted at a later sweep once it is {'AVAILABLE' if art.kind == 'backup' else 'SUCCEEDED'} ({finished})",
            evidence={**evidence, "in_progress": True},
        )
    return _failed(settings, evidence, finished, label, art)


def _failed(settings: Settings, evidence: dict[str, Any], finished: str, label: str, art: Artifact) -> Decision:
    """The backup or export ended without a usable copy: an error the owner sees, never a retry on its own."""
    if art.kind == "export" and art.lifecycle == "SUCCEEDED":
        problem = f"{art.failed_files} of {art.total_files} files failed to export (report under {art.report_path or 'the repository'})"
    else:
        problem = f"{art.lifecycle}{': ' + art.failure if art.failure else ''}"
    return Decision(
        Verdict.ERROR,
        f"{label} {problem}: nothing is deleted and the reaper will not retry on its own. Remove tag "
        f"{settings.tag(_phase_tag(art))} to try again, or tag {settings.tag('exempt')}=true to keep it ({finished})",
        action=ActionName.DELETE,
        evidence=evidence,
        notify_key=f"failed:{art.id}",
    )


def _phase_tag(art: Artifact) -> str:
    return BACKUP_TAG if art.kind == "backup" else EXPORT_TAG


def _phase_one(resource: Resource, view: TagView, settings: Settings, evidence: dict[str, Any], finished: str, note: str) -> Decision:
    p = resource.facts_as(FsxFacts).protection
    restore = f"reaper restore {resource.id}"
    disposable = settings.tag("disposable") + "=true"
    if p.method == "backup":
        return Decision(
            Verdict.ACT,
            f"{finished}; {note}it is backed up first and deleted at a later sweep once the backup is AVAILABLE — {restore}",
            action=ActionName.BACKUP,
            evidence=evidence,
        )
    if p.method == "export" and p.coverage == "full":
        return Decision(
            Verdict.ACT,
            f"{finished}; {note}its data is exported to {p.where()} first and it is deleted at a later sweep once the export "
            f"SUCCEEDED with no failed file",
            action=ActionName.EXPORT,
            evidence=evidence,
        )
    if p.method == "export" and view.disposable:
        return Decision(
            Verdict.ACT,
            f"{finished}; {note}{p.where()} is exported first, then it is deleted; files outside the linked paths are not "
            f"exported and will be GONE (tagged {disposable})",
            action=ActionName.EXPORT,
            evidence={**evidence, "data_outside_links_lost": True},
        )
    if p.method == "none" and view.disposable:
        return Decision(
            Verdict.ACT,
            f"{finished}; {p.why}, and it is tagged {disposable}: it is deleted with no backup and its data is GONE for good",
            action=ActionName.DISCARD,
            evidence={**evidence, "data_lost": True},
        )
    why = p.why if p.method == "none" else f"{p.why}: an export would leave the rest behind"
    return Decision(
        Verdict.KEEP,
        f"{finished}; but {why}, so the reaper will not delete it. To let it delete the file system WITH ITS DATA "
        f"(gone for good{', except what is under the linked paths' if p.method == 'export' else ''}), tag {disposable}",
        evidence={**evidence, "refused": True},
        notify=True,
        notify_key=f"unprotected:{p.method}:{p.coverage}",
    )


# -- client I/O, judged over the whole idle window (read in signals.py) ------------------------


def judge(
    io: dict[str, Series], end: datetime, window_minutes: int, period: int, excuse: tuple[datetime, datetime] | None = None
) -> IoFinding:
    """Zero I/O in every period of the window, on every metric? Pure.

    `excuse` is our own export's run: the export reads every file and updates metadata, so reads
    and metadata operations inside it are not use. Writes are never excused.
    """
    step = timedelta(seconds=period)
    n = max(1, math.ceil(window_minutes * 60 / period))
    slots = [end - step * (k + 1) for k in range(n)]
    missing: set[datetime] = set()
    active: list[datetime] = []
    excused: set[datetime] = set()
    totals: dict[str, float] = {}
    for metric in METRICS:
        by_slot: dict[datetime, float] = {}
        for ts, value in io.get(metric, []):
            t = as_utc(ts)
            aligned = datetime.fromtimestamp(int(t.timestamp()) - int(t.timestamp()) % period, tz=UTC)
            by_slot[aligned] = by_slot.get(aligned, 0.0) + value
        total = 0.0
        for slot in slots:
            if slot not in by_slot:
                missing.add(slot)
                continue
            value = by_slot[slot]
            if value <= 0:
                continue
            if excuse and metric in EXCUSABLE and excuse[0] - step <= slot <= excuse[1]:
                excused.add(slot)
                continue
            total += value
            active.append(slot + step)
        totals[metric] = total
    return IoFinding(
        periods=n,
        missing=len(missing),
        last_active=max(active) if active else None,
        totals=totals,
        excused=len(excused),
        newest_missing=max(missing) + step if missing else None,
    )


def describe_totals(totals: dict[str, float]) -> str:
    read, write, meta = (totals.get(m, 0.0) for m in METRICS)
    return f"{_bytes(read)} read, {_bytes(write)} written, {meta:,.0f} metadata operations"


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} TB"


def kill_decision(
    resource: Resource, signal: FsxSignal | None, view: TagView, settings: Settings, now: datetime, reason: str
) -> Decision | None:
    """Past its kill date: phase 1 (backup, export, or discard when disposable), as for a finished one.

    Once a phase has started, the kind's own rule carries it on (its decision is not a plain keep).
    """
    if resource.state != "AVAILABLE" or resource.facts_as(FsxFacts).phase is not None:
        return None
    return _phase_one(resource, view, settings, {}, reason, "")
