"""The mlflow decision, pure: (tracking server, signal, tags, settings, now) -> Decision.

In order: not running (transitional or failed: reported, never acted on; stopped: nothing to do);
running: unknown, never idle, because AWS documents no evidence of a tracking server's use
(docs/kinds/mlflow.md). A kill date (`reaper:kill-after`) stops a running server through the
pipeline's usual warning and grace (the declaration's default action).
"""

from __future__ import annotations

from datetime import datetime

from reaper.core.model import Decision, Resource, Verdict
from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.kinds.mlflow import RUNNING
from reaper.kinds.mlflow.model import NO_USAGE_SIGNAL, ServerFacts, ServerSignal

HOURS_A_MONTH = 730


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
