"""The endpoint decision, pure: (endpoint, traffic and details, tags, settings, now) -> Decision."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from reaper.core.model import Decision, Mode, Resource, Verdict
from reaper.core.policy import TagView, in_working_hours, is_dev, is_production, off_hours_reason, read_tags, screen
from reaper.core.rhythm import Rhythm, parse_pinned
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc, human_duration, iso
from reaper.kinds.endpoint import ActionName
from reaper.kinds.endpoint.grace import once_per_rhythm
from reaper.kinds.endpoint.model import (
    ASYNC,
    CLASSIC,
    COMPONENTS,
    IN_SERVICE,
    KIND,
    PERIOD,
    SERVERLESS,
    EndpointDetails,
    EndpointFacts,
    EndpointSignal,
    Told,
    in_service_since,
    quiet_text,
    traffic_in_window,
)
from reaper.kinds.endpoint.settings import EndpointSettings

BURST_TAIL = timedelta(minutes=15)  # quiet this long past its usual burst's end (three periods: Invocations land late)
WAKE_MARGIN_MINUTES = 5  # the schedule fires within its minute, then the restore function runs
MIN_LEAD_MINUTES = 10


def decide(resource: Resource, signal: EndpointSignal | None, view: TagView, settings: Settings, now: datetime) -> Decision:
    r = resource
    if r.state != IN_SERVICE:
        return Decision(Verdict.KEEP, f"not InService ({r.state}): looked at again on a later sweep")
    facts = r.facts_as(EndpointFacts)
    if facts.serverless:
        return Decision(Verdict.KEEP, "serverless: it already scales to zero and bills nothing while idle")
    sig = signal
    if sig is None:
        return Decision(Verdict.KEEP, "no traffic reading (unknown is not idle)", unknown="not-read")
    if sig.problem:
        return Decision(Verdict.ERROR, f"{sig.problem}, so nothing was decided")
    dev, prod = is_dev(view, settings), is_production(view, settings)
    window = view.idle_minutes or settings.idle_for(KIND)
    window_start = as_utc(now) - timedelta(minutes=window)
    since = in_service_since(r.created_at, r.changed_at)
    details = sig.details
    is_async = details is not None and details.type == ASYNC
    what = "requests processed" if is_async else "invocations"
    used = traffic_in_window(sig.traffic, window_start)
    queued = max((v for ts, v in sig.backlog if ts + PERIOD > window_start), default=0.0)
    # the figures behind the reason (Decision.evidence): free-form by design, written here and shown as JSON
    evidence: dict[str, object] = {
        "idle_window_minutes": window,
        "requests": used,
        "in_service_since": since,
        "type": details.type if details else None,
    }
    off_hours = settings.off_hours.enabled and dev and not in_working_hours(settings, now)
    rhythm = wake_rhythm(sig, view, settings, now) if dev else None
    over = burst_over(rhythm, sig, view, since, settings, now) if rhythm is not None and not off_hours else None
    if not off_hours and over is None:
        in_use = _in_use(used, queued, what, window, since, now, evidence)
        if in_use is not None:
            return in_use
    quiet = over or quiet_text(what, now, sig.traffic, sig.start, since) + (", nothing queued" if is_async else "")
    reason = _why_zero(off_hours, over is not None, quiet, rhythm, sig, settings, evidence, now)
    if isinstance(reason, Decision):  # kept through its usual burst
        return reason
    if details is None and sig.told is not None and told_stands(view, settings):
        return told_decision(sig.told, reason, evidence)
    if details is None and (dev or prod):
        return Decision(Verdict.KEEP, "its configuration was not read (unknown is not idle)", evidence=evidence, unknown="not-read")
    if not dev and not prod:
        return Decision(
            Verdict.KEEP,
            f"{quiet}, but ml:stage is {view.stage or 'not set'}: only dev stages ({', '.join(settings.dev_stages)}) are taken to zero. "
            "Tag it ml:stage=dev to let the reaper do it, or delete it if it is not needed",
            evidence=evidence,
            notify=True,
            notify_key=f"idle-not-dev:{iso(since) if since else '-'}",
        )
    assert details is not None  # read for dev and production stages (signals.py)
    picked = _by_type(r, facts, details, reason, evidence, prod)
    if rhythm is None or settings.mode_for(KIND) is not Mode.ENFORCE:
        return picked
    return once_per_rhythm(picked, rhythm, sig.woken, view, since, settings.grace_for(KIND), BURST_TAIL, now)


def _why_zero(
    off_hours: bool,
    burst_over: bool,
    quiet: str,
    rhythm: Rhythm | None,
    sig: EndpointSignal,
    settings: Settings,
    evidence: dict[str, object],
    now: datetime,
) -> str | Decision:
    """Why it may go to zero (off-hours, its burst over, or quiet), with when it comes back where it has a
    rhythm; or the Decision that keeps it because its next burst is too near to save anything."""
    if off_hours:
        evidence["policy"] = "off-hours"
        return off_hours_reason(settings)
    evidence["policy"] = "burst-over" if burst_over else "idle"
    if rhythm is None:
        return quiet
    lead, lead_source = wake_lead(sig, settings)
    kept = keep_for_rhythm(rhythm, quiet, evidence, lead, now)
    if kept is not None:
        return kept
    return wake_reason(rhythm, quiet, evidence, (lead, lead_source), now)


def _in_use(
    used: float, queued: float, what: str, window: int, since: datetime | None, now: datetime, evidence: dict[str, object]
) -> Decision | None:
    """Traffic, a queue, or too short a time InService to prove idleness keeps it (outside off-hours)."""
    if used > 0:
        return Decision(Verdict.KEEP, f"{used:g} {what} in the last {human_duration(window)}", evidence=evidence)
    if queued > 0:
        return Decision(Verdict.KEEP, f"{queued:g} requests queued in the last {human_duration(window)}", evidence=evidence)
    if since is None or since > as_utc(now) - timedelta(minutes=window):
        age = f"since {iso(since)} ({human_duration(now - since)})" if since else "for an unknown time"
        return Decision(
            Verdict.KEEP,
            f"InService only {age}, less than the {window} min idle window: no data is not yet evidence of no traffic",
            evidence=evidence,
        )
    return None


def _by_type(r: Resource, facts: EndpointFacts, details: EndpointDetails, reason: str, evidence: dict[str, object], prod: bool) -> Decision:
    if details.type == SERVERLESS:
        return Decision(Verdict.KEEP, "serverless: it already scales to zero and bills nothing while idle", evidence=evidence)
    if details.type == COMPONENTS:
        if not details.components:
            return Decision(Verdict.KEEP, f"{reason}, but it hosts no inference components: nothing to scale to zero", evidence=evidence)
        if all(c.copies == 0 for c in details.components):
            return Decision(Verdict.KEEP, "already at zero: every inference component has 0 copies", evidence=evidence)
        summary_min = {v.name: v.managed_min for v in facts.variants}
        blocked = details.zero_blocked_by(summary_min)
        if blocked:
            return Decision(
                Verdict.KEEP,
                f"{reason}, but {blocked}: copies at 0 would save nothing. Set ManagedInstanceScaling "
                "MinInstanceCount=0 in its endpoint configuration to let the reaper scale it to zero",
                evidence=evidence,
                notify=True,
                notify_key=f"zero-blocked:{details.config_name}",
            )
        copies = ", ".join(f"{c.name} × {c.copies}" for c in details.components if c.copies)
        return Decision(
            Verdict.ACT, f"{reason}; inference components {copies} go to 0 copies", action=ActionName.SCALE_TO_ZERO, evidence=evidence
        )
    if details.type == ASYNC:
        if r.instance_count == 0:
            return Decision(Verdict.KEEP, "already at zero: no instances behind it", evidence=evidence)
        return Decision(
            Verdict.ACT,
            f"{reason}; asynchronous: autoscaling minimum to 0, woken by its backlog",
            action=ActionName.SCALE_TO_ZERO,
            evidence=evidence,
        )
    assert details.type == CLASSIC
    problem = details.cannot_recreate()
    if problem and prod:
        return Decision(Verdict.ACT, f"{reason} (and it could not be recreated: {problem})", action=ActionName.DELETE, evidence=evidence)
    if problem:
        return Decision(
            Verdict.ERROR,
            f"refused to delete: {problem}, so it could not be brought back. {reason}. Nothing was changed; "
            "recreate what is missing, or exempt the endpoint",
            action=ActionName.DELETE,
            evidence={**evidence, "cannot_recreate": problem},
        )
    return Decision(
        Verdict.ACT, f"{reason}; config {details.config_name} and its models are kept", action=ActionName.DELETE, evidence=evidence
    )


def wake_rhythm(sig: EndpointSignal, view: TagView, settings: Settings, now: datetime) -> Rhythm | None:
    """Its usual hours: pinned by its wake tag (whatever REAPER_ENDPOINT_LEARNED_WAKE says), else learned."""
    if view.wake:
        return parse_pinned(view.wake, settings.off_hours.timezone, now)
    return sig.rhythm if settings.of(EndpointSettings).endpoint_learned_wake else None


def wake_lead(sig: EndpointSignal, settings: Settings) -> tuple[int, str]:
    """How long before its usual traffic a wake brings it back, in minutes, and why: its measured start-up
    (the reaper's own restore, CreateEndpoint to InService, from its restore record) with a quarter more
    and WAKE_MARGIN for the schedule and the restore function, in whole 5 minutes; unmeasured, the
    configured lead (REAPER_ENDPOINT_WAKE_LEAD_MINUTES). docs/kinds/endpoint.md, "Learned wake"."""
    if sig.startup is None:
        return settings.of(EndpointSettings).endpoint_wake_lead_minutes, "the configured lead"
    minutes = sig.startup.total_seconds() / 60 * 1.25 + WAKE_MARGIN_MINUTES
    lead = min(max(5 * math.ceil(minutes / 5), MIN_LEAD_MINUTES), 720)
    return lead, f"its measured start-up of {human_duration(sig.startup)}"


def burst_over(rhythm: Rhythm, sig: EndpointSignal, view: TagView, since: datetime | None, settings: Settings, now: datetime) -> str | None:
    """Its usual burst is over: the reason to take it to zero now rather than after the whole idle window
    (the account's window: an owner's reaper:idle-minutes stands). Every call in the window fell in the
    latest usual burst, that burst ended at least BURST_TAIL ago, nothing was called or queued since, and
    it was InService all that while (no data over a time it was not up is not evidence). Else None."""
    if view.idle_minutes or rhythm.needed_at(now) or any(v > 0 for _ts, v in sig.backlog):
        return None
    burst = rhythm.last_burst(now)
    calls = [ts for ts, v in sig.traffic if v > 0]
    if burst is None or not calls:
        return None
    start, end = burst
    window_start = as_utc(now) - timedelta(minutes=settings.idle_for(KIND))
    last_call = max(calls) + PERIOD
    in_window = [ts for ts in calls if ts + PERIOD > window_start]
    if now - max(end, last_call) < BURST_TAIL or any(ts + PERIOD <= start - BURST_TAIL or ts >= end + BURST_TAIL for ts in in_window):
        return None
    if since is None or since > as_utc(now) - BURST_TAIL:
        return None
    return f"0 invocations since {last_call:%H:%M} UTC: its usual burst ({start:%H:%M}-{end:%H:%M} UTC, {rhythm.source}) is over"


def keep_for_rhythm(rhythm: Rhythm, reason: str, evidence: dict[str, object], lead: int, now: datetime) -> Decision | None:
    """Kept through its usual burst, and when the next one starts within twice the lead: its wake would
    come within one lead of now, so at zero it would be brought back before it saved anything."""
    if not rhythm.needed_within(now, timedelta(minutes=2 * lead)):
        return None
    start = rhythm.next_start(now)
    when = "now" if rhythm.needed_at(now) or start is None else f"from {start:%a %H:%M} UTC"
    return Decision(
        Verdict.KEEP,
        f"{reason}, but it is usually needed {when} ({rhythm.source}): kept through its usual burst",
        evidence={**evidence, "rhythm": rhythm.source},
    )


def wake_reason(rhythm: Rhythm, reason: str, evidence: dict[str, object], lead: tuple[int, str], now: datetime) -> str:
    """Outside its usual bursts: when it comes back (the lead before the next one), in the reason and the evidence."""
    start = rhythm.next_start(now)
    evidence["rhythm"] = rhythm.source
    if start is None:
        return f"{reason}; no usual hours of traffic ({rhythm.source}): it stays at zero until restored"
    minutes, why = lead
    back = start - timedelta(minutes=minutes)
    evidence.update(wake_at=iso(back), usual_start=iso(start), prewarm_minutes=minutes, lead_from=why)
    return (
        f"{reason}; back at {back:%a %Y-%m-%d %H:%M} UTC, {minutes} min before its usual traffic from {start:%H:%M} "
        f"({rhythm.source}; lead from {why})"
    )


def may_act(r: Resource, sig: EndpointSignal, settings: Settings, now: datetime) -> bool:
    """Worth reading details for: not exempt, and quiet for the window (or off-hours for dev, or past its kill date)."""
    view = read_tags(r.tags, settings)
    if screen(view, settings, now) is not None:
        return False
    if view.kill_after is not None and now >= view.kill_after:
        return True  # past its kill date: reaped whatever its traffic, so its details are needed
    if settings.off_hours.enabled and is_dev(view, settings) and not in_working_hours(settings, now):
        return True
    window_start = as_utc(now) - timedelta(minutes=view.idle_minutes or settings.idle_for(KIND))
    since = in_service_since(r.created_at, r.changed_at)
    if since is not None and since <= window_start and traffic_in_window(sig.traffic, window_start) == 0:
        return True
    rhythm = wake_rhythm(sig, view, settings, now) if is_dev(view, settings) else None
    return rhythm is not None and burst_over(rhythm, sig, view, since, settings, now) is not None


def told_stands(view: TagView, settings: Settings) -> bool:
    """Whose daily message may stand in for its configuration: endpoints nothing is done to, only
    told once a day — production stages (notify-only), and dev stages while the kind is in dry-run.
    In enforce a dev endpoint may be acted on, so its configuration is always read."""
    return is_production(view, settings) or (is_dev(view, settings) and settings.mode_for(KIND) is Mode.DRY_RUN)


def told_decision(told: Told, reason: str, evidence: dict[str, object]) -> Decision:
    """An endpoint told today already (told_stands): what that message said would be done, again.

    Nothing is done to it: production is notify-only (policy.production_guard makes this `exempt`,
    and the pipeline re-reads protection before any change) and dry-run changes nothing; the day's
    message claim is taken, so nothing is posted. Its configuration is read again when its next
    message is due (signals.py, told.py)."""
    return Decision(
        Verdict.ACT,
        f"{reason}; as told at {told.at:%H:%M} UTC today (its configuration is read again when its next daily message is due)",
        action=ActionName(told.action),
        evidence={**evidence, "told_at": iso(told.at)},
    )


def kill_decision(
    r: Resource, signal: EndpointSignal | None, view: TagView, settings: Settings, now: datetime, reason: str
) -> Decision | None:
    """Past its kill date: to zero by the endpoint's type (classic: deleted, restorable), as for an idle one."""
    if r.state == IN_SERVICE and signal is not None and signal.details is None and signal.told is not None and told_stands(view, settings):
        return told_decision(signal.told, reason, {})
    if r.state != IN_SERVICE or signal is None or signal.problem or signal.details is None:
        return None  # not live, or its configuration was not read: nothing can be chosen safely
    facts = r.facts_as(EndpointFacts)
    if facts.serverless:
        return None
    picked = _by_type(r, facts, signal.details, reason, {"type": signal.details.type}, is_production(view, settings))
    return picked if picked.verdict is not Verdict.KEEP else None
