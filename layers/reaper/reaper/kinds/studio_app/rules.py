"""The studio-app decision, pure: (app or domain, activity, tags, settings, now) -> Decision."""

from __future__ import annotations

from datetime import datetime, timedelta

from reaper.core.model import Decision, Resource, Verdict
from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc, human_duration, iso
from reaper.kinds.studio_app.model import ACTIVITY_TRACKED, KIND, AppActivity, AppFacts, DomainFacts

OPEN_WORK = "the space and its storage volume stay: saved files are kept, unsaved notebook edits and kernel state are lost"


def idle_window(view: TagView, settings: Settings) -> int:
    return view.idle_minutes or settings.idle_for(KIND)


def decide(resource: Resource, signal: AppActivity | None, view: TagView, settings: Settings, now: datetime) -> Decision:
    if isinstance(resource.facts, DomainFacts):
        return decide_domain(resource.facts, settings)
    facts = resource.facts_as(AppFacts)
    if resource.state != "InService":
        return Decision(Verdict.KEEP, f"not running ({resource.state})")
    window = idle_window(view, settings)
    evidence: dict[str, object] = {"idle_window_minutes": window, "app_type": facts.app_type}
    if facts.app_type not in ACTIVITY_TRACKED:
        return Decision(
            Verdict.KEEP,
            f"AWS records no user activity for {facts.app_type} apps (only JupyterLab and Code Editor): unknown is not idle",
            evidence={**evidence, "activity_recorded": False},
            unknown="no-activity-signal",
        )
    now = as_utc(now)
    created = signal.created if signal and signal.created else resource.created_at
    if created is not None and now - as_utc(created) < timedelta(minutes=window):
        return Decision(
            Verdict.KEEP,
            f"running for {human_duration(now - as_utc(created))}, less than the idle window ({window} min)",
            evidence=evidence,
        )
    if signal is None or signal.last_user_activity is None:
        return Decision(
            Verdict.KEEP, "no user activity recorded for this app: unknown is not idle", evidence=evidence, unknown="no-activity-signal"
        )
    if signal.status != "InService":
        return Decision(Verdict.KEEP, f"not running ({signal.status})", evidence=evidence)
    last = as_utc(signal.last_user_activity)
    evidence["last_user_activity"] = last
    if signal.last_health_check is not None:
        evidence["last_health_check"] = as_utc(signal.last_health_check)
    if now - last < timedelta(minutes=window):
        ago = human_duration(now - last) if now > last else "0 m"
        return Decision(Verdict.KEEP, f"last user activity {ago} ago (idle window {window} min)", evidence=evidence)
    return Decision(
        Verdict.ACT,
        f"no user activity in {facts.where} for {human_duration(now - last)} (last {iso(last)}); {OPEN_WORK}",
        action="delete",
        evidence=evidence,
    )


def decide_domain(facts: DomainFacts, settings: Settings) -> Decision:
    """Report a domain whose built-in idle shutdown is off; turn it on when the admin chose a timeout."""
    on = [f"{s.app_type} {s.timeout_minutes} min" for s in facts.idle if s.enabled]
    evidence = {"idle_shutdown_off": list(facts.off), "idle_shutdown_on": on}
    if not facts.off:
        return Decision(Verdict.KEEP, f"domain {facts.domain_name}: built-in idle shutdown on ({', '.join(on)})", evidence=evidence)
    off = " and ".join(facts.off)
    minutes = settings.studio_enforce_idle_shutdown_minutes
    if minutes is None:
        return Decision(
            Verdict.KEEP,
            f"domain {facts.domain_name}: built-in idle shutdown is off for {off} apps; users' idle apps run until "
            "someone stops them (set REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES to turn it on)",
            evidence=evidence,
            notify=True,
        )
    return Decision(
        Verdict.ACT,
        f"domain {facts.domain_name}: built-in idle shutdown is off for {off} apps; turning it on at {minutes} min "
        "(REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES)",
        action="enable-idle-shutdown",
        evidence={**evidence, "timeout_minutes": minutes, "previous": facts.previous},
        skip_grace=True,  # the admin asked for it; it stops nothing by itself
    )


def kill_decision(
    resource: Resource, signal: AppActivity | None, view: TagView, settings: Settings, now: datetime, reason: str
) -> Decision | None:
    """Past its kill date: the app is deleted (its space and storage stay); a domain is never touched."""
    if not isinstance(resource.facts, AppFacts) or resource.state != "InService":
        return None
    return Decision(Verdict.ACT, f"{reason}; {OPEN_WORK}", action="delete")
