"""The capacity decision, pure: (reservation or plan, evidence, tags, settings, now) -> Decision.

An ODCR is cancelled only when all of these hold: active; `open` (a `targeted` one is named by launch
templates or clusters the reaper cannot see); no commitment in force (CommitmentInfo.CommitmentEndDate
past or absent: AWS refuses to cancel before it); not part of a Capacity Reservation Fleet; nothing
running in it now (AvailableInstanceCount = TotalInstanceCount); reserved for at least the idle
window; and UsedInstanceCount 0 in every hour of the window, with no hour missing (unknown is not
idle). Capacity Blocks ("You can't modify or cancel a Capacity Block"), committed or targeted
reservations and training plans are kept and reported while idle, with the jobs waiting for capacity.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from reaper.core.model import Decision, Resource, Verdict
from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.core.timeutil import human_duration, iso
from reaper.kinds.capacity import ActionName
from reaper.kinds.capacity.model import KIND, PERIOD, CapacityFacts, CapacitySignal, WaitingJob, window_end

SHOWN_JOBS = 5


def idle_window(view: TagView, settings: Settings) -> int:
    return view.idle_minutes or settings.idle_for(KIND)


def decide(resource: Resource, signal: CapacitySignal | None, view: TagView, settings: Settings, now: datetime) -> Decision:
    facts = resource.facts_as(CapacityFacts)
    if resource.state != "active":
        return Decision(Verdict.KEEP, f"not active ({resource.state})")
    if facts.source == "training-plan":
        return _plan(resource, facts, signal)
    if facts.source == "capacity-block":
        return _block(resource, facts, signal, view, settings, now)
    if facts.used > 0:
        return Decision(
            Verdict.KEEP, f"in use: {facts.used} of {facts.total} reserved instances running in it now", evidence=_counts(facts)
        )
    blocked = not_cancellable(facts, now)
    evidence = _idle_evidence(resource, facts, signal, view, settings, now)
    if isinstance(evidence, Decision):
        return evidence
    if blocked:
        return _report(resource, facts, signal, f"{blocked}: reported, never cancelled by the reaper", evidence)
    hours = evidence["idle_instance_hours"]
    cost = _usd(evidence.get("idle_usd"))
    return Decision(
        Verdict.ACT,
        f"0 of {facts.total} reserved instances used in every hour of the last "
        f"{human_duration(timedelta(minutes=evidence['idle_window_minutes']))}"
        f" ({hours:g} idle instance-hours{cost}); open, no commitment: cancelling releases it and stops the charge",
        action=ActionName.CANCEL,
        evidence=evidence,
    )


def not_cancellable(facts: CapacityFacts, now: datetime) -> str | None:
    """Why AWS, or the reaper's caution, keeps this ODCR whatever its use (None: it may be cancelled)."""
    if facts.committed(now):
        assert facts.commitment_end is not None
        # https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-reservations-release.html: "active and
        # there is no commitment duration or the commitment duration has elapsed"
        return f"committed until {iso(facts.commitment_end)} (AWS does not cancel it before)"
    if facts.fleet_id:
        return f"part of Capacity Reservation Fleet {facts.fleet_id} (the fleet manages it)"
    if facts.match_criteria == "targeted":
        return "targeted: launch templates or clusters may name it, which the reaper cannot see"
    return None


def _idle_evidence(
    resource: Resource, facts: CapacityFacts, signal: CapacitySignal | None, view: TagView, settings: Settings, now: datetime
) -> dict[str, Any] | Decision:
    window = idle_window(view, settings)
    end = signal.window_end if signal else window_end(now)
    start = end - timedelta(minutes=window)
    evidence: dict[str, Any] = {**_counts(facts), "idle_window_minutes": window}
    since = facts.starts_at or resource.created_at
    if since is not None and since > start:
        return Decision(
            Verdict.KEEP,
            f"reserved {human_duration(max(now - since, timedelta(0)))} ago: not yet {window} min of evidence",
            evidence={**evidence, "reserved_at": since},
        )
    used = [(ts, v) for ts, v in (signal.used if signal else []) if ts >= start - PERIOD]
    busy = [ts for ts, v in used if v > 0 and ts >= start]
    if busy:
        ago = human_duration(max(now - (max(busy) + PERIOD), timedelta(0)))
        return Decision(
            Verdict.KEEP, f"used {ago} ago (UsedInstanceCount > 0; idle window {window} min)", evidence={**evidence, "last_used": max(busy)}
        )
    slots = [end - PERIOD * (k + 1) for k in range(math.ceil(window / 60))]
    have = {ts.replace(minute=0, second=0, microsecond=0) for ts, _ in used}
    missing = sum(1 for s in slots if s not in have)
    if missing:
        what = (
            "no UsedInstanceCount data"
            if missing == len(slots)
            else f"gap in UsedInstanceCount data ({missing} of {len(slots)} hours missing)"
        )
        return Decision(
            Verdict.KEEP, f"{what} in the last {window} min: unknown is not idle", evidence={**evidence, "missing_periods": missing}
        )
    hours = round(facts.total * window / 60, 1)
    evidence["idle_instance_hours"] = hours
    if facts.on_demand_hourly_usd is not None:
        evidence["idle_usd"] = round(facts.on_demand_hourly_usd * window / 60, 2)
    return evidence


def _block(
    resource: Resource, facts: CapacityFacts, signal: CapacitySignal | None, view: TagView, settings: Settings, now: datetime
) -> Decision:
    if signal and signal.running_instances and facts.ends_at is not None:
        who = ", ".join(f"{iid} ({owner or 'no ml:owner'})" for iid, owner in signal.running_instances)
        return Decision(
            Verdict.KEEP,
            f"Capacity Block ends {iso(facts.ends_at)} (in {human_duration(max(facts.ends_at - now, timedelta(0)))}); EC2 starts "
            "terminating "
            f"its instances 30 minutes before the end: checkpoint now. Running on it: {who}",
            evidence={**_counts(facts), "ends_at": facts.ends_at, "instances": [i for i, _ in signal.running_instances]},
            notify=True,
            notify_key=f"capacity-block-ending:{resource.id}:{iso(facts.ends_at)}",  # once per block
        )
    if facts.available == 0:
        return Decision(Verdict.KEEP, f"in use: all {facts.total} instances of the Capacity Block running", evidence=_counts(facts))
    evidence = _block_idle(facts, signal, view, settings)
    return _report(resource, facts, signal, "a Capacity Block cannot be cancelled (AWS)", evidence)


def _block_idle(facts: CapacityFacts, signal: CapacitySignal | None, view: TagView, settings: Settings) -> dict[str, Any]:
    window = idle_window(view, settings)
    end = signal.window_end if signal else None
    series = signal.used if signal else []
    start = (end - timedelta(minutes=window)) if end else None
    if facts.starts_at is not None and start is not None:
        start = max(start, facts.starts_at)
    hours = sum(max(facts.total - v, 0) for ts, v in series if start is None or ts >= start)
    evidence: dict[str, Any] = {**_counts(facts), "idle_window_minutes": window, "idle_instance_hours": round(hours, 1)}
    if facts.on_demand_hourly_usd is not None and facts.total:
        evidence["idle_usd_at_on_demand"] = round(hours * facts.on_demand_hourly_usd / facts.total, 2)
    return evidence


def _plan(resource: Resource, facts: CapacityFacts, signal: CapacitySignal | None) -> Decision:
    if facts.available == 0:
        return Decision(Verdict.KEEP, f"in use: {facts.used} of {facts.total} plan instances", evidence=_counts(facts))
    evidence: dict[str, Any] = {**_counts(facts)}
    if resource.hourly_usd is not None and facts.total:
        evidence["idle_usd_per_hour"] = round(resource.hourly_usd * facts.available / facts.total, 2)
    return _report(resource, facts, signal, "a training plan is paid upfront and cannot be cancelled", evidence)


def _report(resource: Resource, facts: CapacityFacts, signal: CapacitySignal | None, why_kept: str, evidence: dict[str, Any]) -> Decision:
    """Idle capacity that only its owner can put to use: said once a day, with the work that could use it."""
    jobs = signal.waiting_jobs if signal else ()
    parts = [f"{facts.available} of {facts.total} reserved instances idle now"]
    if "idle_instance_hours" in evidence:
        usd = evidence.get("idle_usd", evidence.get("idle_usd_at_on_demand"))
        label = " at the On-Demand list price" if "idle_usd_at_on_demand" in evidence else ""
        parts.append(
            f"{evidence['idle_instance_hours']:g} idle instance-hours in the last "
            f"{human_duration(timedelta(minutes=evidence['idle_window_minutes']))}{_usd(usd)}{label}"
        )
    if "idle_usd_per_hour" in evidence:
        parts.append(f"${evidence['idle_usd_per_hour']:,.2f}/h of its upfront fee idle")
    parts.append(f"{why_kept}; {_jobs_text(jobs)}")
    return Decision(
        Verdict.KEEP,
        "; ".join(parts),
        evidence={**evidence, "waiting_jobs": [j.name for j in jobs]},
        notify=True,
        notify_key=f"capacity-idle:{resource.id}:{iso(signal.window_end)[:10] if signal else '-'}",  # once a day
    )


def _jobs_text(jobs: tuple[WaitingJob, ...]) -> str:
    if not jobs:
        return "no training job in this region is waiting for capacity"
    shown = ", ".join(f"{j.name} ({j.secondary_status})" for j in jobs[:SHOWN_JOBS])
    more = f" and {len(jobs) - SHOWN_JOBS} more" if len(jobs) > SHOWN_JOBS else ""
    return f"training jobs waiting for capacity that could use it: {shown}{more}"


def _counts(facts: CapacityFacts) -> dict[str, Any]:
    return {"source": facts.source, "total_instances": facts.total, "available_instances": facts.available}


def _usd(value: Any) -> str:
    return f", ≈ ${value:,.2f}" if isinstance(value, (int, float)) else ""


def kill_decision(
    resource: Resource, signal: CapacitySignal | None, view: TagView, settings: Settings, now: datetime, reason: str
) -> Decision | None:
    """Past its kill date: cancelled only where a sweep could cancel it (an open ODCR, uncommitted, empty now)."""
    facts = resource.facts_as(CapacityFacts)
    if resource.state != "active" or facts.source != "odcr" or facts.used > 0 or not_cancellable(facts, now):
        return None
    return Decision(Verdict.ACT, reason, action=ActionName.CANCEL)
