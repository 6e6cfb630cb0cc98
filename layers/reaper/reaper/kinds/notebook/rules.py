"""The notebook decision, pure: (notebook, activity, tags, settings, now) -> Decision."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from reaper.aws.metrics import Series
from reaper.core.jupyter_verdict import JupyterReading, judge
from reaper.core.model import Decision, Mode, Resource, Verdict
from reaper.core.policy import TagView, is_production, off_hours_stop
from reaper.core.settings import Settings
from reaper.core.timeutil import human_duration, iso
from reaper.kinds.notebook import ActionName
from reaper.kinds.notebook.model import KIND, METRIC, NAMESPACE, PERIOD, ActivitySignal, NotebookFacts, align
from reaper.kinds.notebook.settings import NotebookSettings
from reaper.kinds.notebook.silent import is_silent, silent_agent


def idle_window(view: TagView, settings: Settings) -> int:
    return view.idle_minutes or settings.idle_for(KIND)


def decide(resource: Resource, signal: ActivitySignal | None, view: TagView, settings: Settings, now: datetime) -> Decision:
    facts = resource.facts_as(NotebookFacts)
    has_agent = facts.lifecycle_config == settings.of(NotebookSettings).agent_lifecycle_config
    if resource.state != "InService":
        if resource.state == "Stopped" and settings.of(NotebookSettings).attach_agent and not facts.lifecycle_config:
            return Decision(
                Verdict.ACT,
                "stopped notebook without the activity agent: attaching it so idleness can be seen after the next start",
                action=ActionName.ATTACH_AGENT,
                skip_grace=True,
            )
        return Decision(Verdict.KEEP, f"not running ({resource.state})")

    off_hours = off_hours_stop(view, settings, now, ActionName.STOP)
    if off_hours is not None:
        return off_hours

    window = idle_window(view, settings)
    points = signal.series if signal else []
    if not has_agent:
        if signal is not None and signal.jupyter is not None:
            return from_jupyter(signal.jupyter, window, now)
        return _no_agent(resource, facts, len(points), settings)
    if signal is not None and signal.unreadable:
        return Decision(
            Verdict.KEEP,
            f"{signal.unreadable}: unknown is not idle",
            evidence={"unreadable": signal.unreadable},
            unknown="agent-unreadable",
        )
    window_end = signal.window_end if signal else align(now)
    if is_silent(facts, points, window_end, now):
        return silent_agent(resource, facts, settings, now)
    old_metric = signal is not None and signal.source == "metric" and settings.of(NotebookSettings).agent_channel == "logs"
    return from_agent(points, window_end, window, old_metric, view, settings, now)


def from_agent(
    points: Series, window_end: datetime, window: int, old_metric: bool, view: TagView, settings: Settings, now: datetime
) -> Decision:
    """The agent's samples judged: idle when every period of the window is there and none active; a gap
    is unknown; activity after a standing warning clears it; strong evidence warns early (warn_early)."""
    needed = math.ceil(window / 5)
    slots = [window_end - PERIOD * (k + 1) for k in range(needed)]
    by_slot = {align(ts): v for ts, v in points}
    missing = [s for s in slots if s not in by_slot]
    active = [ts for ts, v in points if v > 0]
    last_active = max(active) + PERIOD if active else None
    evidence: dict[str, Any] = {"idle_window_minutes": window, "periods": needed, "missing_periods": len(missing)}
    if old_metric:
        evidence["source"] = f"{NAMESPACE}/{METRIC} (an agent installed before the stack used Logs; until the notebook restarts)"
    if view.warned_at is not None and last_active is not None and last_active > view.warned_at:
        # docs/kinds/notebook.md: activity between the warning and the action clears the warning, even when no sweep saw it live
        ago = human_duration(now - last_active) if now > last_active else "0 m"
        return Decision(
            Verdict.KEEP,
            f"active {ago} ago, after the warning at {iso(view.warned_at)}",
            evidence={**evidence, "last_active": last_active, "active_since_warning": True},
        )
    if last_active is not None and last_active > window_end - timedelta(minutes=window):
        early = warn_early(last_active, not missing, window, window_end, view, settings, now)
        if early is not None:
            return early.with_(evidence={**evidence, **early.evidence})
        ago = human_duration(now - last_active) if now > last_active else "0 m"
        return Decision(Verdict.KEEP, f"active {ago} ago (idle window {window} min)", evidence={**evidence, "last_active": last_active})
    if missing:
        what = "no activity data" if len(missing) == needed else f"gap in activity data ({len(missing)} of {needed} periods missing)"
        return Decision(Verdict.KEEP, f"{what} in the last {window} min: unknown is not idle", evidence=evidence, unknown="agent-no-data")
    if last_active is not None:
        idle_for = f"no activity for {human_duration(now - last_active)}"
    else:
        first = points[0][0] if points else window_end
        idle_for = f"no activity for at least {human_duration(now - first)}"
    return Decision(Verdict.ACT, idle_for, action=ActionName.STOP, evidence={**evidence, "last_active": last_active})


def early_span(window: int, grace: int) -> int:
    """How long a strongly evidenced quiet must last before the warning: the threshold less the grace, so
    the grace ends at the threshold; at least one whole quiet sample of the agent (5 minutes): a warning
    never comes while the latest sample still shows activity."""
    return max(window - grace, int(PERIOD.total_seconds()) // 60)


def warn_early(
    last_active: datetime, complete: bool, window: int, window_end: datetime, view: TagView, settings: Settings, now: datetime
) -> Decision | None:
    """Strong evidence (every agent sample of the idle window present, none active for the early span):
    in enforce, the warning comes early so its grace ends at the threshold. Never on a gap, never in
    dry-run (it has no grace: a "would stop" before the threshold would be wrong), never with grace 0,
    never for a production stage (notify-only: the same). Only the warning comes early: once warned,
    the notebook stays warned (quiet) until the normal rule finds it idle for the whole threshold, so the
    stop stands on the full window whatever the sweeps' cadence."""
    grace = settings.grace_for(KIND)
    enforcing = settings.mode_for(KIND) is Mode.ENFORCE and not is_production(view, settings)
    killed = view.kill_after is not None and now >= view.kill_after  # past its kill date that rule decides, not idleness
    if not (settings.of(NotebookSettings).notebook_early_warning and complete and grace > 0 and enforcing) or killed:
        return None
    span = early_span(window, grace)
    if span >= window or last_active > window_end - timedelta(minutes=span):
        return None
    quiet = human_duration(now - last_active)
    evidence = {"last_active": last_active, "early_warning": True, "early_span_minutes": span}
    if view.warned_at is not None:
        due = max(view.warned_at + timedelta(minutes=grace), last_active + timedelta(minutes=window))
        return Decision(
            Verdict.WARN,
            f"no activity for {quiet}; warned at {iso(view.warned_at)}, will stop after {iso(due)} "
            f"(idle for the {window} min threshold and the grace over) unless that changes",
            action=ActionName.STOP,
            evidence=evidence,
            quiet=True,
        )
    return Decision(
        Verdict.ACT,
        f"no activity for {quiet}, every activity sample of the last {window} min present: warned early, "
        f"so the stop falls at the {window} min idle threshold or soon after",
        action=ActionName.STOP,
        evidence=evidence,
    )


def _no_agent(resource: Resource, facts: NotebookFacts, datapoints: int, settings: Settings) -> Decision:
    """Without the agent, activity in its name is not evidence: anyone allowed PutMetricData into
    MLReaper (or, with AgentChannel=logs, to write the log group) can publish it (docs/kinds/notebook.md: Who may publish activity)."""
    own = settings.of(NotebookSettings)
    what = "activity sample(s)" if own.agent_channel == "logs" else f"{NAMESPACE}/{METRIC} datapoint(s)"
    ignored = f"; {datapoints} {what} for it ignored: without the agent they are not trusted" if datapoints else ""
    return Decision(
        Verdict.KEEP,
        f"no activity agent: lifecycle configuration is {facts.lifecycle_config or 'none'}, not {own.agent_lifecycle_config}"
        f"{ignored}. To let the reaper see idleness, stop it and run `aws sagemaker update-notebook-instance --region "
        f"{resource.region} --notebook-instance-name {resource.id} --lifecycle-config-name {own.agent_lifecycle_config}`, "
        "then start it",
        evidence={"agent": False, "ignored_datapoints": datapoints},
        unknown="no-agent",
    )


def from_jupyter(reading: JupyterReading, window: int, now: datetime) -> Decision:
    """A notebook without the agent, judged by its Jupyter server (JupyterReads=on): the rule every
    Jupyter reading shares (reaper.core.jupyter_verdict.judge), with the notebook's stop."""
    return judge(reading, window, now, action=ActionName.STOP, blind="no activity agent", evidence={"agent": False})
