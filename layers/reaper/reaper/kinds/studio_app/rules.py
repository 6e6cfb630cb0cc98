"""The studio-app decision, pure: (app or domain, activity, tags, settings, now) -> Decision."""

from __future__ import annotations

from datetime import datetime, timedelta

from reaper.core.jupyter_verdict import JupyterReading, judge
from reaper.core.model import Decision, Resource, Verdict
from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc, human_duration, iso
from reaper.kinds.studio_app import ActionName
from reaper.kinds.studio_app.model import (
    CANVAS,
    CANVAS_METRIC,
    CLASSIC_NO_SIGNAL,
    CLASSIC_SERVER_NO_SIGNAL,
    IDLE_SHUTDOWN_MARGIN,
    IDLE_SHUTDOWN_ON,
    IDLE_SHUTDOWN_TYPES,
    IDLE_SHUTDOWN_UNVERIFIED,
    JUPYTERLAB_IDLE_SHUTDOWN_UNVERIFIED,
    JUPYTERLAB_NO_SIGNAL,
    JUPYTERLAB_OLD_IMAGE,
    JUPYTERLAB_PROFILE_IDLE_OFF,
    JUPYTERLAB_SHARED_IDLE_OFF,
    JUPYTERLAB_UNSUPPORTED_IMAGE,
    KIND,
    NO_ACTIVITY_SIGNAL,
    NO_CANVAS_METRIC,
    NOT_READ,
    OLD_IMAGE,
    PROFILE_IDLE_OFF,
    SHARED_IDLE_OFF,
    UNSUPPORTED_IMAGE,
    AppActivity,
    AppFacts,
    DomainFacts,
)
from reaper.kinds.studio_app.settings import StudioAppSettings

OPEN_WORK = "the space and its storage volume stay: saved files are kept, unsaved notebook edits and kernel state are lost"


def idle_window(view: TagView, settings: Settings) -> int:
    return view.idle_minutes or settings.idle_for(KIND)


def decide(resource: Resource, signal: AppActivity | JupyterReading | None, view: TagView, settings: Settings, now: datetime) -> Decision:
    if isinstance(resource.facts, DomainFacts):
        return decide_domain(resource.facts, settings)
    facts = resource.facts_as(AppFacts)
    if resource.state != "InService":
        return Decision(Verdict.KEEP, f"not running ({resource.state})")
    window = idle_window(view, settings)
    evidence: dict[str, object] = {"idle_window_minutes": window, "app_type": facts.app_type}
    judged_by_reading = facts.app_type == CANVAS or (settings.jupyter_reads and facts.jupyter_readable)
    now = as_utc(now)
    if judged_by_reading and resource.created_at is not None and now - as_utc(resource.created_at) < timedelta(minutes=window):
        return Decision(
            Verdict.KEEP,
            f"running for {human_duration(now - as_utc(resource.created_at))}, less than the idle window ({window} min)",
            evidence=evidence,
        )
    if isinstance(signal, JupyterReading) and facts.covered_by_aws:
        return _verify(facts, signal, now, evidence, settings, resource.created_at)
    if isinstance(signal, JupyterReading):
        return _from_jupyter(facts, signal, window, now, evidence)
    if facts.app_type in IDLE_SHUTDOWN_TYPES:
        due = facts.verify_from(resource.created_at)
        if due is not None and now >= due:  # covered by AWS, and running past its timeout plus the margin: unread
            return _unverified(facts, evidence, settings, due, "")
        return _no_signal(facts, evidence, settings)
    if facts.app_type != CANVAS:
        return Decision(
            Verdict.KEEP,
            f"AWS records no user activity for classic {facts.app_type} apps: unknown is not idle (fix: move the user to "
            f"JupyterLab{_readable(facts, settings)}){_not_opened(facts, settings)}",
            evidence={**evidence, "activity_recorded": False},
            unknown=CLASSIC_SERVER_NO_SIGNAL if facts.jupyter_readable else CLASSIC_NO_SIGNAL,
        )
    return _canvas(facts, signal if isinstance(signal, AppActivity) else None, window, evidence)


def _from_jupyter(facts: AppFacts, reading: JupyterReading, window: int, now: datetime, evidence: dict[str, object]) -> Decision:
    """JupyterReads=on: the app's own Jupyter server, judged as a notebook's is (reaper.core.jupyter_verdict.judge)."""
    why = _why_read(facts)
    blind = f"AWS records no user activity for {facts.app_type} apps ({why})"
    decision = judge(reading, window, now, action=ActionName.DELETE, blind=blind, evidence=dict(evidence))
    return decision.with_(reason=f"{decision.reason}; {OPEN_WORK}") if decision.verdict is Verdict.ACT else decision


def _verify(
    facts: AppFacts, reading: JupyterReading, now: datetime, evidence: dict[str, object], settings: Settings, created: datetime | None
) -> Decision:
    """Trust, then verify: an app SageMaker's idle shutdown should stop, past its timeout plus the margin, read through
    its Jupyter server. Idle for longer than that means the shutdown did not fire (an open kernel session keeps the
    app alive): delete the app, its space and storage kept. In use: covered, verified. Unreadable: unverified."""
    timeout = facts.idle_shutdown_minutes or 0
    window = timeout + int(IDLE_SHUTDOWN_MARGIN.total_seconds() // 60)
    evidence = {**evidence, "idle_shutdown_minutes": timeout}
    blind = f"SageMaker's built-in idle shutdown ({timeout} min) should stop this {facts.app_type} app when idle"
    decision = judge(reading, window, now, action=ActionName.DELETE, blind=blind, evidence=dict(evidence))
    if decision.verdict is Verdict.ACT:
        return decision.with_(
            reason=f"SageMaker's built-in idle shutdown ({timeout} min) did not fire: {decision.reason} "
            f"(its timeout plus {window - timeout} min); {OPEN_WORK}",
            evidence={**decision.evidence, "idle_shutdown_missed": True},
        )
    if decision.unknown is not None:
        due = facts.verify_from(created) or now
        return _unverified(facts, evidence, settings, due, f"; its Jupyter server could not be read: {reading.unreadable or 'no reading'}")
    return decision.with_(
        reason=f"{decision.reason}; SageMaker's idle shutdown ({timeout} min) covers it (verified through its Jupyter server)"
    )


def _unverified(facts: AppFacts, evidence: dict[str, object], settings: Settings, due: datetime, read: str) -> Decision:
    """Covered by AWS, still running past its timeout plus the margin, and nothing read says it is in use."""
    if facts.verifiable:
        fix = "turn on JupyterReads to verify it" if not settings.jupyter_reads else "see why its Jupyter server could not be read"
    elif facts.app_type == "JupyterLab" and facts.auth_mode not in (None, "IAM"):
        fix = f"its domain signs in through IAM Identity Center ({facts.auth_mode}): JupyterReads cannot open it; look at the space"
    elif facts.app_type == "JupyterLab":
        fix = "no user profile to sign in as: JupyterReads cannot open it; look at the space"
    else:
        fix = "a Code Editor app is not Jupyter: nothing the reaper can read verifies it; look at the space"
    return Decision(
        Verdict.KEEP,
        f"covered by AWS, unverified since {iso(due)}: {_covered_by(facts)}, and it has run longer than that plus "
        f"{int(IDLE_SHUTDOWN_MARGIN.total_seconds() // 60)} min"
        f"{read}: unknown is not idle ({fix})",
        evidence={**evidence, "idle_shutdown_minutes": facts.idle_shutdown_minutes, "unverified_since": iso(due)},
        unknown=JUPYTERLAB_IDLE_SHUTDOWN_UNVERIFIED if facts.verifiable else IDLE_SHUTDOWN_UNVERIFIED,
    )


def _why_read(facts: AppFacts) -> str:
    if facts.custom_image:
        return "a custom image"
    if facts.old_image:
        return "SageMaker Distribution older than 2.0, or a version it does not say"
    if facts.app_type != "JupyterLab":
        return "Studio Classic"
    if facts.profile_idle_off:
        return "its user profile turned idle shutdown off"
    if facts.shared:
        return "a shared space, and its domain's DefaultSpaceSettings leave idle shutdown off"
    return "its user profile's idle settings not read" if facts.profile_unread else "idle shutdown off"


def _readable(facts: AppFacts, settings: Settings) -> str:
    """', or JupyterReads' in a fix, where JupyterReads (off) would read this app."""
    return ", or JupyterReads" if facts.jupyter_readable and not settings.jupyter_reads else ""


def _not_opened(facts: AppFacts, settings: Settings) -> str:
    """Why JupyterReads, on, did not open this app, when the reason is the domain's sign-in mode."""
    if settings.jupyter_reads and facts.auth_mode not in (None, "IAM"):
        return (
            f"; JupyterReads cannot open it: its domain signs in through IAM Identity Center ({facts.auth_mode}), "
            "and CreatePresignedDomainUrl works only for IAM domains"
        )
    return ""


def _image(facts: AppFacts, evidence: dict[str, object], settings: Settings) -> Decision | None:
    """An image built-in idle shutdown is not known to run on: "Idle shutdown requires the usage of the
    SageMaker-distribution (SMD) image with v2.0 or newer"; a custom image only if built on SMD 2.0+ or carrying
    jupyter-activity-monitor-extension >= 0.3.1, which no API says (docs/aws-assumptions.md, issue 33)."""
    if facts.custom_image:
        return Decision(
            Verdict.KEEP,
            f"AWS records no user activity for this {facts.app_type} app, and it runs the custom image {facts.custom_image}: "
            "built-in idle shutdown runs on it only if it is built on SageMaker Distribution 2.0 or newer or carries "
            "jupyter-activity-monitor-extension 0.3.1 or newer, which the API does not say (use the SageMaker Distribution "
            f"image 2.0+, or an idle-shutdown lifecycle configuration{_readable(facts, settings)}): unknown is not idle"
            f"{_not_opened(facts, settings)}",
            evidence={**evidence, "image": facts.custom_image},
            unknown=JUPYTERLAB_UNSUPPORTED_IMAGE if facts.jupyter_readable else UNSUPPORTED_IMAGE,
        )
    if facts.old_image:
        version = f"SageMaker Distribution {facts.smd_version}" if facts.smd_version else "an image whose version the app does not say"
        return Decision(
            Verdict.KEEP,
            f"AWS records no user activity for this {facts.app_type} app, and it runs {version}: built-in idle shutdown "
            "needs SageMaker Distribution 2.0 or newer, so nothing stops it when idle (fix: choose SageMaker Distribution "
            f"2.0 or newer for the space's image{_readable(facts, settings)}): unknown is not idle{_not_opened(facts, settings)}",
            evidence={**evidence, "image_version": facts.smd_version},
            unknown=JUPYTERLAB_OLD_IMAGE if facts.jupyter_readable else OLD_IMAGE,
        )
    return None


def _no_signal(facts: AppFacts, evidence: dict[str, object], settings: Settings) -> Decision:
    """JupyterLab and Code Editor: AWS publishes no user activity the reaper can read; its idle shutdown can stop them."""
    on_image = _image(facts, evidence, settings)
    if on_image is not None:
        return on_image
    if facts.profile_unread:
        return Decision(
            Verdict.KEEP,
            f"its domain's built-in idle shutdown is on, but whether its user profile {facts.sign_in_as} turned it off was "
            f"not read (DescribeUserProfile: {facts.profile_unread}): unknown is not idle (the next sweep reads it again)",
            evidence={**evidence, "user_profile_read": facts.profile_unread},
            unknown=NOT_READ,
        )
    if facts.idle_shutdown_minutes is not None:
        return Decision(
            Verdict.KEEP,
            f"{_covered_by(facts)} (AWS records no user activity the reaper can read)",
            evidence={**evidence, "idle_shutdown_minutes": facts.idle_shutdown_minutes},
            unknown=IDLE_SHUTDOWN_ON,
        )
    if facts.profile_idle_off:
        return _profile_off(facts, evidence, settings)
    if facts.shared:
        return _shared_off(facts, evidence, settings)
    return Decision(
        Verdict.KEEP,
        f"AWS records no user activity for {facts.app_type} apps (DescribeApp's last activity follows the health checks) "
        "and the domain's built-in idle shutdown is off: unknown is not idle (fix: StudioEnforceIdleShutdownMinutes"
        f"{_readable(facts, settings)}){_not_opened(facts, settings)}",
        evidence=evidence,
        unknown=JUPYTERLAB_NO_SIGNAL if facts.jupyter_readable else NO_ACTIVITY_SIGNAL,
    )


def _covered_by(facts: AppFacts) -> str:
    """Whose built-in idle shutdown stops this app, and after how long."""
    whose = (
        "its user profile's" if facts.profile_timeout else "its shared space's (DefaultSpaceSettings)" if facts.shared else "SageMaker's"
    )
    after = f"after {facts.idle_shutdown_minutes} min idle" if facts.idle_shutdown_minutes else "when idle"
    return f"{whose} built-in idle shutdown stops this {facts.app_type} app {after}"


def _profile_off(facts: AppFacts, evidence: dict[str, object], settings: Settings) -> Decision:
    """Its domain has idle shutdown on, its user profile turned it off: SageMaker never stops the app."""
    return Decision(
        Verdict.KEEP,
        f"its user profile {facts.sign_in_as} turned SageMaker's built-in idle shutdown off for {facts.app_type} apps "
        "(its domain has it on, and a user profile's setting wins), and AWS records no user activity the reaper can read: "
        f"unknown is not idle (fix: the profile's owner or an admin turns its idle shutdown back on; the reaper never changes "
        f"a user profile{_readable(facts, settings)}){_not_opened(facts, settings)}",
        evidence={**evidence, "user_profile": facts.sign_in_as, "profile_idle_shutdown": "DISABLED"},
        unknown=JUPYTERLAB_PROFILE_IDLE_OFF if facts.jupyter_readable else PROFILE_IDLE_OFF,
    )


def _shared_off(facts: AppFacts, evidence: dict[str, object], settings: Settings) -> Decision:
    """A shared space: its owner's and the domain's user settings do not apply; DefaultSpaceSettings leave it off."""
    if facts.app_type == "JupyterLab":
        why = "its domain's DefaultSpaceSettings (what shared spaces take) leave built-in idle shutdown off"
        fix = "StudioEnforceIdleShutdownMinutes turns it on there"
    else:
        why = "AWS documents no idle-shutdown setting for Code Editor in shared spaces (DefaultSpaceSettings has none)"
        fix = "an idle-shutdown lifecycle configuration, or move the work to a private space"
    return Decision(
        Verdict.KEEP,
        f"this {facts.app_type} app runs in the shared space {facts.space}, where user profile settings do not apply, and "
        f"{why}; AWS records no user activity the reaper can read: unknown is not idle (fix: {fix}"
        f"{_readable(facts, settings)}){_not_opened(facts, settings)}",
        evidence={**evidence, "space_sharing": "Shared"},
        unknown=JUPYTERLAB_SHARED_IDLE_OFF if facts.jupyter_readable else SHARED_IDLE_OFF,
    )


def _canvas(facts: AppFacts, signal: AppActivity | None, window: int, evidence: dict[str, object]) -> Decision:
    if signal is None:
        return Decision(
            Verdict.KEEP,
            f"no {CANVAS_METRIC} data for this Canvas app in the last hour: unknown is not idle",
            evidence=evidence,
            unknown=NO_CANVAS_METRIC,
        )
    inactive = timedelta(seconds=signal.inactive_seconds)
    evidence.update(inactive_seconds=signal.inactive_seconds, measured_at=as_utc(signal.at))
    if inactive < timedelta(minutes=window):
        return Decision(Verdict.KEEP, f"Canvas user active {human_duration(inactive)} ago (idle window {window} min)", evidence=evidence)
    return Decision(
        Verdict.ACT,
        f"no Canvas activity by {facts.user_profile} for {human_duration(inactive)} ({CANVAS_METRIC} at {iso(as_utc(signal.at))}); "
        "models and datasets stay, a Quick build in progress is cancelled",
        action=ActionName.DELETE,
        evidence=evidence,
    )


def decide_domain(facts: DomainFacts, settings: Settings) -> Decision:
    """Report a domain whose built-in idle shutdown is off, for private spaces (DefaultUserSettings) or shared ones
    (DefaultSpaceSettings); turn it on in both when the admin chose a timeout."""
    on = [f"{s.app_type} {s.timeout_minutes} min" for s in facts.idle if s.enabled]
    on += [f"{s.app_type} in shared spaces {s.timeout_minutes} min" for s in facts.shared_idle if s.enabled]
    evidence = {"idle_shutdown_off": list(facts.off), "shared_idle_shutdown_off": list(facts.shared_off), "idle_shutdown_on": on}
    if not facts.off and not facts.shared_off:
        return Decision(Verdict.KEEP, f"domain {facts.domain_name}: built-in idle shutdown on ({', '.join(on)})", evidence=evidence)
    off = " and ".join([*facts.off, *(f"{t} in shared spaces" for t in facts.shared_off)])
    minutes = settings.of(StudioAppSettings).enforce_idle_shutdown_minutes
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
        action=ActionName.ENABLE_IDLE_SHUTDOWN,
        evidence={**evidence, "timeout_minutes": minutes, "previous": facts.previous, "previous_shared": facts.previous_shared},
        skip_grace=True,  # the admin asked for it; it stops nothing by itself
    )


def kill_decision(
    resource: Resource, signal: AppActivity | JupyterReading | None, view: TagView, settings: Settings, now: datetime, reason: str
) -> Decision | None:
    """Past its kill date: the app is deleted (its space and storage stay); a domain is never touched."""
    if not isinstance(resource.facts, AppFacts) or resource.state != "InService":
        return None
    return Decision(Verdict.ACT, f"{reason}; {OPEN_WORK}", action=ActionName.DELETE)
