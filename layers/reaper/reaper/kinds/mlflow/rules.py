"""The mlflow decision, pure: (tracking server, signal, tags, settings, now) -> Decision.

In order: not running (transitional or failed: reported, never acted on; stopped: nothing to do);
running, MlflowReads off: unknown, never idle, because AWS publishes no metric of a tracking server's use
(docs/kinds/mlflow.md). Running, MlflowReads on: judged by its reading (`judge`): a read that failed is
unknown; a RUNNING run, or a run started or ended, an experiment updated, the UI opened or the server
started within the idle window keeps it; else it is idle and the stop is proposed.
A kill date (`reaper:kill-after`) stops a running server through the
pipeline's usual warning and grace (the declaration's default action).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reaper.core.model import Decision, Resource, Verdict
from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc, human_duration
from reaper.kinds.mlflow import RUNNING, ActionName
from reaper.kinds.mlflow.model import NO_USAGE_SIGNAL, ServerFacts, ServerSignal, UsageReading
from reaper.kinds.mlflow.settings import MlflowSettings

HOURS_A_MONTH = 730
# CreatePresignedMlflowTrackingServerUrl's SessionExpirationDurationInSeconds: "Maximum value of 43200": a UI opened
# this long ago may still be in use, whatever the idle window (docs/kinds/mlflow.md)
UI_SESSION_MAX = timedelta(seconds=43_200)


def cost_text(resource: Resource) -> str:
    size = resource.facts_as(ServerFacts).size or "unknown size"
    if resource.hourly_usd is None:
        return f"{size}: unpriced (the price list the reaper ships has no MLflow tracking server rows)"
    label = f", {resource.price.label}" if resource.price is not None else ""
    return f"{size} at ${resource.hourly_usd:,.2f}/h list price{label}: ${resource.hourly_usd * HOURS_A_MONTH:,.2f} a month while it runs"


def decide(resource: Resource, signal: ServerSignal | None, view: TagView, settings: Settings, now: datetime) -> Decision:
    state = resource.state
    evidence = {"size": resource.facts_as(ServerFacts).size, "status": state, "hourly_usd": resource.hourly_usd}
    if state == "Stopped":
        return Decision(Verdict.KEEP, "stopped: not billed while stopped; its experiments are kept", evidence=evidence)
    if state.endswith("Failed"):
        return Decision(
            Verdict.KEEP,
            f"{state}: reported, never acted on (a failed server may still bill: {cost_text(resource)}); look at it in SageMaker Studio",
            evidence=evidence,
            notify=True,
            notify_key=f"mlflow-failed:{resource.arn}:{state}",
        )
    if state not in RUNNING:
        return Decision(Verdict.KEEP, f"{state}: changing now, never acted on until it settles", evidence=evidence)
    own = settings.of(MlflowSettings)
    if own.mlflow_reads:
        window = view.idle_minutes or own.mlflow_idle_hours * 60
        return judge(resource, signal.reading if signal else None, window, now, evidence)
    return Decision(
        Verdict.KEEP,
        f"running ({cost_text(resource)}), and AWS documents no evidence of a tracking server's use (no CloudWatch metric, no "
        f"record of the MLflow calls made to it): unknown, not idle, so it is not stopped. If it is not used, stop it "
        f"(`aws sagemaker stop-mlflow-tracking-server --tracking-server-name {resource.id}`; its experiments are kept), or tag "
        f"its kill date ({settings.tag('kill-after')}=YYYY-MM-DD) and the reaper stops it then",
        evidence={**evidence, "usage_evidence": None},
        unknown=NO_USAGE_SIGNAL,
        notify=True,
        notify_key=f"{NO_USAGE_SIGNAL}:{resource.arn}",
    )


def _last_use(resource: Resource, r: UsageReading) -> tuple[datetime, str] | None:
    """The newest of what shows use (or a start: a server just started is given its window), and what it was."""
    facts = resource.facts_as(ServerFacts)
    seen = [
        (facts.last_modified, "started or changed"),
        (facts.created_at, "created"),
        (r.last_run_start, "a run started"),
        (r.last_run_end, "a run ended"),
        (r.last_experiment_update, "an experiment created or updated"),
        (r.last_ui_open, "its MLflow UI opened"),
    ]
    stamps = [(as_utc(t), what) for t, what in seen if t is not None]
    return max(stamps, key=lambda s: s[0]) if stamps else None


def judge(resource: Resource, reading: UsageReading | None, window: int, now: datetime, evidence: dict[str, Any]) -> Decision:
    """MlflowReads=on: its MLflow API's runs and experiments and CloudTrail's UI opens, against the idle window."""
    if reading is None:  # not read: exempt, snoozed, mis-tagged or production (signals.py), which nothing changes
        why = f"running ({cost_text(resource)}); its MLflow API is not read for a server the reaper may not change"
        return Decision(Verdict.KEEP, why, evidence={**evidence, "source": "mlflow-api", "read": False})
    if reading.unreadable is not None:
        why, code = reading.unreadable, reading.unknown or "mlflow-api-unreachable"
        return Decision(
            Verdict.KEEP,
            f"running ({cost_text(resource)}), and its use could not be read: {why}. Unknown is not idle",
            evidence={**evidence, "source": "mlflow-api", "unknown": code},
            unknown=code,
        )
    now = as_utc(now)
    figures = {
        **evidence,
        "source": "mlflow-api+cloudtrail",
        "experiments": reading.experiments,
        "ui_opens": reading.ui_opens,
        "idle_window_minutes": window,
    }
    if reading.running_run is not None:
        since = f" since {human_duration(now - as_utc(reading.running_since))} ago" if reading.running_since else ""
        reason = f"MLflow: run {reading.running_run} is RUNNING{since}"
        return Decision(Verdict.KEEP, reason, evidence={**figures, "running_run": reading.running_run})
    if reading.last_ui_open is not None and now < as_utc(reading.last_ui_open) + UI_SESSION_MAX:
        ago = human_duration(now - as_utc(reading.last_ui_open))
        return Decision(Verdict.KEEP, f"its MLflow UI was opened {ago} ago: a UI session lasts up to 12 h", evidence=figures)
    found = _last_use(resource, reading)
    if found is None:  # no time at all to count from (AWS always gives CreationTime): never idle on nothing
        why = "its MLflow API was read but no time was given to count from"
        return Decision(Verdict.KEEP, why, evidence=figures, unknown="mlflow-api-unreadable")
    last, what = found
    figures["last_active"] = last
    if last > now - timedelta(minutes=window):
        ago = human_duration(now - last) if now > last else "0 m"
        span = human_duration(timedelta(minutes=window))
        return Decision(Verdict.KEEP, f"in use: {what} {ago} ago (idle window {span})", evidence=figures)
    return Decision(
        Verdict.ACT,
        f"no run started, ended or running, no experiment updated and its MLflow UI not opened for {human_duration(now - last)} "
        f"(last: {what}; {reading.experiments} experiment(s)); {cost_text(resource)}. Stopping keeps its experiments",
        action=ActionName.STOP,
        evidence=figures,
    )
