"""SageMaker endpoints: take idle dev endpoints to zero; `reaper restore NAME` brings them back.

Signal: requests over the idle window (default 120 min; `reaper:idle-minutes` overrides),
summed over every variant and component, in one batched GetMetricData for every endpoint.
AWS publishes these metrics only when there are requests, so no data counts as no traffic
only when the endpoint has been InService (not created or changed) for the whole window.
Which metric depends on the endpoint type: see endpoint_facts.py.

Only dev stages (`ml:stage` in REAPER_DEV_STAGES) are taken to zero; production stages get
the notify-only message; other endpoints are kept, and an idle one is reported once.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from reaper import pricing
from reaper.clients import Clients
from reaper.kinds import endpoint_restore  # noqa: F401  (registers `reaper restore` for endpoints)
from reaper.kinds.base import Action, Kind
from reaper.kinds.endpoint_actions import ACTIONS
from reaper.kinds.endpoint_facts import (
    ASYNC,
    CLASSIC,
    COMPONENTS,
    IN_SERVICE,
    LOOKBACK_MINUTES,
    PERIOD,
    SERVERLESS,
    EndpointDetails,
    EndpointSignal,
    comeback_note,
    in_service_since,
    quiet_text,
    traffic_in_window,
)
from reaper.kinds.endpoint_read import (
    DetailReader,
    async_queries,
    components_by_endpoint,
    is_missing,
    search_endpoints,
    traffic_queries,
    variant_summaries,
)
from reaper.kinds.endpoint_restore import EVENT_PERMISSIONS, restore_command
from reaper.metrics import fetch
from reaper.model import Decision, Resource, Verdict
from reaper.policy import TagView, in_working_hours, is_dev, is_production, read_tags, screen
from reaper.settings import Settings
from reaper.timeutil import as_utc, human_duration, iso


class EndpointKind(Kind):
    name = "endpoint"
    tag_resource_types = ("sagemaker:endpoint",)
    tag_service = "sagemaker"
    read_permissions = (
        "sagemaker:Search",
        "sagemaker:ListInferenceComponents",
        "sagemaker:DescribeEndpoint",
        "sagemaker:DescribeEndpointConfig",
        "sagemaker:DescribeModel",
        "sagemaker:DescribeInferenceComponent",
        "cloudwatch:GetMetricData",
    )
    actions: Mapping[str, Action] = ACTIONS

    @staticmethod
    def event_route(rt: Any, ev: Any, now: datetime) -> dict[str, Any] | None:
        from reaper.kinds.endpoint_events import route

        return route(rt, ev, now)

    def permissions(self) -> set[str]:
        # the state-change route finishes restores and checks tags of new endpoints
        return super().permissions() | set(EVENT_PERMISSIONS)

    # -- discover -------------------------------------------------------------------------
    def discover(self, clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
        components = components_by_endpoint(clients)
        out: list[Resource] = []
        for ep in search_endpoints(clients):
            name = ep["EndpointName"]
            variants = [_variant(v) for v in variant_summaries(clients, ep)]
            out.append(
                Resource(
                    kind=self.name,
                    id=name,
                    arn=ep.get("EndpointArn") or "",
                    region=clients.region,
                    state=ep.get("EndpointStatus", "Unknown"),
                    tags={t["Key"]: t["Value"] for t in ep.get("Tags", []) or []},
                    instance_count=sum(v["current"] for v in variants),
                    created_at=ep.get("CreationTime"),
                    changed_at=ep.get("LastModifiedTime"),
                    attrs={
                        "config": ep.get("EndpointConfigName"),
                        "variants": variants,
                        "components": components.get(name, []),
                        "serverless": bool(variants) and all(v["serverless"] for v in variants),
                        "table": settings.table,
                    },
                )
            )
        return out

    # -- signals --------------------------------------------------------------------------
    def signals(self, clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, Any]:
        """Traffic for every live endpoint in one batch; details only for those that may be acted on.

        Details also complete the resource (instance type, hourly cost) for the message.
        """
        live = [r for r in resources if r.state == IN_SERVICE and not r.attrs.get("serverless")]
        if not live:
            return {}
        end = as_utc(now)
        longest = max([settings.idle_for(self.name)] + [_idle_tag(r, settings) for r in live])
        lookback = timedelta(minutes=max(longest, LOOKBACK_MINUTES))
        start = _floor5(end - lookback)
        traffic = fetch(clients("cloudwatch"), [q for r in live for q in traffic_queries(r)], start, end)
        reader = DetailReader(clients)
        signals: dict[str, EndpointSignal] = {}
        for r in live:
            sig = EndpointSignal(start=start, end=end, traffic=traffic.get(r.id, []))
            if _may_act(r, sig, settings, now):
                try:
                    details = reader.details(r, check_models=is_dev(read_tags(r.tags, settings), settings))
                except (ClientError, BotoCoreError) as exc:
                    sig = EndpointSignal(start=start, end=end, traffic=sig.traffic, problem=_short(exc))
                else:
                    sig = EndpointSignal(start=start, end=end, traffic=sig.traffic, details=details)
                    _complete(r, details)
            signals[r.id] = sig
        async_ones = [r for r in live if (d := signals[r.id].details) is not None and d.type == ASYNC]
        if async_ones:
            series = fetch(clients("cloudwatch"), [q for r in async_ones for q in async_queries(r)], start, end)
            for r in async_ones:
                old = signals[r.id]
                signals[r.id] = EndpointSignal(
                    start=start, end=end, traffic=series.get(f"{r.id}|processed", []), backlog=series.get(f"{r.id}|backlog", []), details=old.details
                )
        return signals

    # -- decide (pure) --------------------------------------------------------------------
    def decide(self, resource: Resource, signal: Any, view: TagView, settings: Settings, now: datetime) -> Decision:
        r = resource
        if r.state != IN_SERVICE:
            return Decision(Verdict.KEEP, f"not InService ({r.state}): looked at again on a later sweep")
        if r.attrs.get("serverless"):
            return Decision(Verdict.KEEP, "serverless: it already scales to zero and bills nothing while idle")
        sig: EndpointSignal | None = signal
        if sig is None:
            return Decision(Verdict.KEEP, "no traffic reading (unknown is not idle)")
        if sig.problem:
            return Decision(Verdict.ERROR, f"could not read its configuration, so nothing was decided: {sig.problem}")
        dev, prod = is_dev(view, settings), is_production(view, settings)
        window = view.idle_minutes or settings.idle_for(self.name)
        window_start = as_utc(now) - timedelta(minutes=window)
        since = in_service_since(r.created_at, r.changed_at)
        details = sig.details
        is_async = details is not None and details.type == ASYNC
        what = "requests processed" if is_async else "invocations"
        used = traffic_in_window(sig.traffic, window_start)
        queued = max((v for ts, v in sig.backlog if ts + PERIOD > window_start), default=0.0)
        evidence: dict[str, Any] = {
            "idle_window_minutes": window,
            "requests": used,
            "in_service_since": since,
            "type": details.type if details else None,
        }
        off_hours = settings.off_hours.enabled and dev and not in_working_hours(settings, now)
        if not off_hours:
            if used > 0:
                return Decision(Verdict.KEEP, f"{used:g} {what} in the last {human_duration(window)}", evidence=evidence)
            if queued > 0:
                return Decision(Verdict.KEEP, f"{queued:g} requests queued in the last {human_duration(window)}", evidence=evidence)
            if since is None or since > window_start:
                age = f"since {iso(since)} ({human_duration(now - since)})" if since else "for an unknown time"
                return Decision(
                    Verdict.KEEP,
                    f"InService only {age}, less than the {window} min idle window: no data is not yet evidence of no traffic",
                    evidence=evidence,
                )
        if details is None:
            return Decision(Verdict.KEEP, "its configuration was not read (unknown is not idle)", evidence=evidence)
        quiet = quiet_text(what, now, sig.traffic, sig.start, since) + (", nothing queued" if is_async else "")
        if off_hours:
            oh = settings.off_hours
            reason = f"outside working hours ({','.join(oh.days)} {oh.start:%H:%M}-{oh.end:%H:%M} {oh.timezone})"
            evidence["policy"] = "off-hours"
        else:
            reason = quiet
            evidence["policy"] = "idle"
        if not dev and not prod:
            return Decision(
                Verdict.KEEP,
                f"{quiet}, but ml:stage is {view.stage or 'not set'}: only dev stages ({', '.join(settings.dev_stages)}) are taken to zero. "
                "Tag it ml:stage=dev to let the reaper do it, or delete it if it is not needed",
                evidence=evidence,
                notify=True,
                notify_key=f"idle-not-dev:{iso(since) if since else '-'}",
            )
        return _by_type(r, details, reason, evidence, prod)

    # -- act ------------------------------------------------------------------------------
    def current_state(self, clients: Clients, resource: Resource) -> str | None:
        try:
            desc = clients("sagemaker").describe_endpoint(EndpointName=resource.id)
        except ClientError as exc:
            if is_missing(exc):
                return None
            raise
        state: str = desc.get("EndpointStatus", "Unknown")
        return state

    def undo_hint(self, resource: Resource, action: str | None) -> str | None:
        if action not in self.actions:
            return None
        details: EndpointDetails | None = resource.attrs.get("details")
        types = details.instance_types if details else ()
        lines = [f"{restore_command(resource.id, resource.attrs.get('table'))}   # {comeback_note(types)}"]
        if action == "scale-to-zero" and details is not None and details.type == COMPONENTS:
            lines += [
                f"or: aws sagemaker update-inference-component-runtime-config --inference-component-name {c.name} "
                f"--desired-runtime-config CopyCount={c.copies} --region {resource.region}"
                for c in details.components
                if c.copies > 0
            ]
        if action == "scale-to-zero" and details is not None and details.type == ASYNC:
            lines += [
                f"or: aws sagemaker update-endpoint-weights-and-capacities --endpoint-name {resource.id} "
                f"--desired-weights-and-capacities VariantName={v['name']},DesiredInstanceCount={v['desired'] or 1} --region {resource.region}"
                "   # and set the autoscaling minimum back"
                for v in resource.attrs.get("variants", [])
            ]
        return "\n".join(lines)


def _by_type(r: Resource, details: EndpointDetails, reason: str, evidence: dict[str, Any], prod: bool) -> Decision:
    if details.type == SERVERLESS:
        return Decision(Verdict.KEEP, "serverless: it already scales to zero and bills nothing while idle", evidence=evidence)
    if details.type == COMPONENTS:
        if not details.components:
            return Decision(Verdict.KEEP, f"{reason}, but it hosts no inference components: nothing to scale to zero", evidence=evidence)
        if all(c.copies == 0 for c in details.components):
            return Decision(Verdict.KEEP, "already at zero: every inference component has 0 copies", evidence=evidence)
        summary_min = {v["name"]: v.get("managed_min") for v in r.attrs.get("variants", [])}
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
        return Decision(Verdict.ACT, f"{reason}; inference components {copies} go to 0 copies", action="scale-to-zero", evidence=evidence)
    if details.type == ASYNC:
        if r.instance_count == 0:
            return Decision(Verdict.KEEP, "already at zero: no instances behind it", evidence=evidence)
        return Decision(
            Verdict.ACT,
            f"{reason}; asynchronous: autoscaling minimum to 0, woken by its backlog",
            action="scale-to-zero",
            evidence=evidence,
        )
    assert details.type == CLASSIC
    problem = details.cannot_recreate()
    if problem and prod:
        return Decision(Verdict.ACT, f"{reason} (and it could not be recreated: {problem})", action="delete", evidence=evidence)
    if problem:
        return Decision(
            Verdict.ERROR,
            f"refused to delete: {problem}, so it could not be brought back. {reason}. Nothing was changed; "
            "recreate what is missing, or exempt the endpoint",
            action="delete",
            evidence={**evidence, "cannot_recreate": problem},
        )
    return Decision(Verdict.ACT, f"{reason}; config {details.config_name} and its models are kept", action="delete", evidence=evidence)


def _variant(summary: dict[str, Any]) -> dict[str, Any]:
    scaling = summary.get("ManagedInstanceScaling") or {}
    return {
        "name": summary["VariantName"],
        "current": int(summary.get("CurrentInstanceCount") or 0),
        "desired": int(summary.get("DesiredInstanceCount") or 0),
        "serverless": bool(summary.get("CurrentServerlessConfig") or summary.get("DesiredServerlessConfig")),
        "managed_min": int(scaling.get("MinInstanceCount", 1)) if scaling.get("Status") == "ENABLED" else None,
    }


def _may_act(r: Resource, sig: EndpointSignal, settings: Settings, now: datetime) -> bool:
    """Worth reading details for: not exempt, and quiet for the window (or off-hours for dev)."""
    view = read_tags(r.tags, settings)
    if screen(view, settings, now) is not None:
        return False
    if settings.off_hours.enabled and is_dev(view, settings) and not in_working_hours(settings, now):
        return True
    window_start = as_utc(now) - timedelta(minutes=view.idle_minutes or settings.idle_for("endpoint"))
    since = in_service_since(r.created_at, r.changed_at)
    return since is not None and since <= window_start and traffic_in_window(sig.traffic, window_start) == 0


def _complete(r: Resource, details: EndpointDetails) -> None:
    r.attrs["details"] = details
    current = {v["name"]: v["current"] for v in r.attrs.get("variants", [])}
    types = [v.instance_type for v in details.variants if v.instance_type]
    r.instance_type = " + ".join(sorted(set(types))) or None
    prices = [pricing.hourly(pricing.HOSTING, r.region, v.instance_type, current.get(v.name, 0)) for v in details.variants if v.instance_type]
    r.hourly_usd = None if not prices or any(p is None for p in prices) else round(sum(p for p in prices if p is not None), 4)


def _idle_tag(r: Resource, settings: Settings) -> int:
    return read_tags(r.tags, settings).idle_minutes or 0


def _floor5(t: datetime) -> datetime:
    return t.replace(minute=t.minute - t.minute % 5, second=0, microsecond=0)


def _short(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        return f"{err.get('Code', 'Error')}: {err.get('Message', '')}".strip()
    return str(exc)
