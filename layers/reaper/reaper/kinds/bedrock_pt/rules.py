"""The bedrock-pt decision, pure: (Provisioned Throughput, invocations, tags, settings, now) -> Decision.

In order: not InService; committed (never deleted: reported with its idle cost, and once per term
before it renews); InService and unchanged for less than the window (unknown, kept); invocations
in the window (kept); no invocations, but its own series never listed (unknown: its owner is told,
never deleted); else delete.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reaper.core.model import Decision, Resource, Verdict
from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.core.timeutil import human_duration, iso
from reaper.kinds.bedrock_pt import ActionName
from reaper.kinds.bedrock_pt.model import DIMENSION, KIND, METRIC, NAMESPACE, NEVER_SEEN, RENEWAL_NOTICE, PtFacts, PtSignal

# https://docs.aws.amazon.com/bedrock/latest/userguide/prov-thru-delete.html
RENEWAL_DOC = "https://docs.aws.amazon.com/bedrock/latest/userguide/prov-thru-delete.html"


def idle_window(view: TagView, settings: Settings) -> int:
    return view.idle_minutes or settings.idle_for(KIND)


def decide(resource: Resource, signal: PtSignal | None, view: TagView, settings: Settings, now: datetime) -> Decision:
    facts = resource.facts_as(PtFacts)
    if resource.state != "InService":
        return Decision(Verdict.KEEP, f"not in service ({resource.state})")
    window = idle_window(view, settings)
    start = now - timedelta(minutes=window)
    calls = sum(v for ts, v in (signal.invocations if signal else []) if ts >= start)
    evidence: dict[str, Any] = {
        "idle_window_minutes": window,
        "invocations": calls,
        "model_units": facts.model_units,
        "desired_model_units": facts.desired_model_units,
        "unit_hourly_usd": facts.unit_hourly_usd,
        "price_source": None if resource.price is None else resource.price.label,  # the admin's override, or unpriced
    }
    if facts.commitment:
        return _committed(resource, facts, signal, calls, evidence, now)
    since = max(facts.created_at, facts.last_modified)
    if since > start:
        return Decision(
            Verdict.KEEP,
            f"in service unchanged for {human_duration(max(now - since, timedelta(0)))}: not yet "
            f"{human_duration(timedelta(minutes=window))} "
            "of evidence (AWS publishes Invocations only when there are requests, and no data is not idleness)",
            evidence={**evidence, "in_service_since": since},
        )
    if signal is None:
        return Decision(Verdict.KEEP, "invocations could not be read: unknown is not idle", evidence=evidence)
    if calls > 0:
        return Decision(
            Verdict.KEEP, f"{calls:,.0f} invocations in the last {human_duration(timedelta(minutes=window))}", evidence=evidence
        )
    idle_hours = window / 60
    evidence.update(idle_hours=idle_hours, idle_usd=_usd(resource.hourly_usd, idle_hours))
    if not signal.seen:
        return _never_seen(resource, window, evidence, settings.tag("kill-after"))
    return Decision(
        Verdict.ACT,
        f"0 invocations in {human_duration(timedelta(minutes=window))} while in service, no commitment; "
        f"{facts.model_units} model unit{'s' if facts.model_units != 1 else ''}{_cost(resource.hourly_usd, idle_hours)}",
        action=ActionName.DELETE,
        evidence=evidence,
    )


def _never_seen(resource: Resource, window: int, evidence: dict[str, Any], kill_tag: str) -> Decision:
    """No data, and CloudWatch lists no series of its own (none ever, or none with data in two weeks):
    AWS does not document which ModelId its traffic carries, so no data is unknown, never idle. Its
    owner is told (once), it is never deleted on this evidence (docs/kinds/bedrock-pt.md)."""
    return Decision(
        Verdict.KEEP,
        f"no {METRIC} data in {human_duration(timedelta(minutes=window))}, and CloudWatch lists no {NAMESPACE} {METRIC} series "
        f"with {DIMENSION} = its ARN (never seen, or none with data in the past two weeks): AWS does not document which "
        f"{DIMENSION} a Provisioned Throughput's traffic carries, so no data is unknown, not idle, and it is not deleted"
        f"{_cost(resource.hourly_usd, evidence['idle_hours'])}. If it is not used, delete it, or tag its kill date ({kill_tag}); "
        "one request with its ARN as modelId makes its series appear",
        evidence={**evidence, "series_seen": False},
        unknown=NEVER_SEEN,
        notify=True,
        notify_key=f"{NEVER_SEEN}:{resource.arn}",
    )


def _usd(hourly: float | None, hours: float) -> float | None:
    return None if hourly is None else round(hourly * hours, 2)


def _cost(hourly: float | None, hours: float) -> str:
    if hourly is None:
        return ""
    return f" at ${hourly:,.2f}/h (the admin's price per model-unit hour): ${hourly * hours:,.2f} idle over {hours:,.0f} h"


def _committed(
    resource: Resource, facts: PtFacts, signal: PtSignal | None, calls: float, evidence: dict[str, Any], now: datetime
) -> Decision:
    expires = facts.commitment_expires
    window_hours = evidence["idle_window_minutes"] / 60
    idle = signal is not None and calls == 0 and max(facts.created_at, facts.last_modified) <= now - timedelta(hours=window_hours)
    use = (
        f"idle: 0 invocations in {window_hours:,.0f} h{_cost(resource.hourly_usd, window_hours)}"
        if idle
        else f"{calls:,.0f} invocations in {window_hours:,.0f} h"
    )
    evidence.update(commitment=facts.commitment, commitment_expires=expires, idle=idle)
    if idle:
        evidence.update(idle_hours=window_hours, idle_usd=_usd(resource.hourly_usd, window_hours))
    never = (
        f"committed ({facts.commitment}) until {iso(expires) if expires else 'an unknown date'}: AWS refuses to delete it before the "
        "term ends, so the reaper never does"
    )
    if expires is not None and now < expires <= now + RENEWAL_NOTICE:
        return Decision(
            Verdict.KEEP,
            f"{never}. It renews automatically at the end of the term in {human_duration(expires - now)} "
            f"({RENEWAL_DOC}): if it is not needed, plan its deletion for when the term ends; {use}",
            evidence={**evidence, "renewal_notice": True},
            notify=True,
            notify_key=f"bedrock-pt-renewal:{resource.arn}:{iso(expires)}",  # once per term
        )
    return Decision(
        Verdict.KEEP,
        f"{never}; {use}",
        evidence=evidence,
        notify=idle,
        notify_key=f"bedrock-pt-committed-idle:{resource.arn}:{iso(expires) if expires else '-'}" if idle else None,
    )


def kill_decision(
    resource: Resource, signal: PtSignal | None, view: TagView, settings: Settings, now: datetime, reason: str
) -> Decision | None:
    """Past its kill date: deleted if nothing is committed; a committed one cannot be."""
    facts = resource.facts_as(PtFacts)
    if resource.state != "InService" or facts.commitment:
        return None
    return Decision(Verdict.ACT, reason, action=ActionName.DELETE)
