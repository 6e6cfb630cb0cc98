"""Evidence for the endpoint kind: traffic for every live endpoint in one GetMetricData batch, and
details for the endpoints that may be acted on.

Configurations, models and component copy counts have no batch API: they are read only for the
endpoints that may be acted on, and each configuration or model once per sweep however many
endpoints name it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from reaper import pricing
from reaper.aws import AwsError, is_not_found, short
from reaper.clients import Clients
from reaper.kinds.endpoint.model import (
    ASYNC,
    CLASSIC,
    COMPONENTS,
    IN_SERVICE,
    KIND,
    LOOKBACK_MINUTES,
    NAMESPACE,
    SERVERLESS,
    Component,
    EndpointDetails,
    EndpointFacts,
    EndpointSignal,
    VariantSpec,
)
from reaper.kinds.endpoint.rules import may_act
from reaper.metrics import MetricQuery, fetch
from reaper.model import Resource
from reaper.policy import is_dev, read_tags
from reaper.settings import Settings
from reaper.timeutil import as_utc


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, EndpointSignal]:
    """Traffic for every live endpoint in one batch; details only for those that may be acted on.

    Details also complete the resource (its facts, instance type, hourly cost) for the message.
    """
    live = [r for r in resources if r.state == IN_SERVICE and not r.facts_as(EndpointFacts).serverless]
    if not live:
        return {}
    end = as_utc(now)
    longest = max([settings.idle_for(KIND)] + [read_tags(r.tags, settings).idle_minutes or 0 for r in live])
    lookback = timedelta(minutes=max(longest, LOOKBACK_MINUTES))
    start = _floor5(end - lookback)
    traffic = fetch(clients("cloudwatch"), [q for r in live for q in traffic_queries(r)], start, end)
    reader = DetailReader(clients)
    out: dict[str, EndpointSignal] = {}
    for r in live:
        sig = EndpointSignal(start=start, end=end, traffic=traffic.get(r.id, []))
        if may_act(r, sig, settings, now):
            try:
                details = reader.details(r, check_models=is_dev(read_tags(r.tags, settings), settings))
            except AwsError as exc:
                sig = replace(sig, problem=short(exc))
            else:
                sig = replace(sig, details=details)
                _complete(r, details)
        out[r.id] = sig
    async_ones = [r for r in live if (d := out[r.id].details) is not None and d.type == ASYNC]
    if async_ones:
        series = fetch(clients("cloudwatch"), [q for r in async_ones for q in async_queries(r)], start, end)
        for r in async_ones:
            out[r.id] = replace(out[r.id], traffic=series.get(f"{r.id}|processed", []), backlog=series.get(f"{r.id}|backlog", []))
    return out


def traffic_queries(r: Resource) -> list[MetricQuery]:
    """Invocations, summed over every variant of the endpoint, or over every component of an
    endpoint that hosts components (AWS publishes those per component, without EndpointName)."""
    facts = r.facts_as(EndpointFacts)
    if facts.components:
        return [MetricQuery(r.id, NAMESPACE, "Invocations", (("InferenceComponentName", c),), stat="Sum", period=300) for c in facts.components]
    return [
        MetricQuery(r.id, NAMESPACE, "Invocations", (("EndpointName", r.id), ("VariantName", v.name)), stat="Sum", period=300)
        for v in facts.variants
    ]


def async_queries(r: Resource) -> list[MetricQuery]:
    queries = [
        MetricQuery(f"{r.id}|processed", NAMESPACE, "InvocationsProcessed", (("EndpointName", r.id), ("VariantName", v.name)), stat="Sum", period=300)
        for v in r.facts_as(EndpointFacts).variants
    ]
    queries.append(MetricQuery(f"{r.id}|backlog", NAMESPACE, "ApproximateBacklogSize", (("EndpointName", r.id),), stat="Maximum", period=300))
    return queries


class DetailReader:
    """Configurations and models, each read once per sweep."""

    def __init__(self, clients: Clients) -> None:
        self.sm = clients("sagemaker")
        self._configs: dict[str, dict[str, Any] | None] = {}
        self._models: dict[str, bool] = {}

    def config(self, name: str) -> dict[str, Any] | None:
        if name not in self._configs:
            try:
                self._configs[name] = self.sm.describe_endpoint_config(EndpointConfigName=name)
            except ClientError as exc:
                if not is_not_found(exc):
                    raise
                self._configs[name] = None
        return self._configs[name]

    def model_exists(self, name: str) -> bool:
        if name not in self._models:
            try:
                self.sm.describe_model(ModelName=name)
                self._models[name] = True
            except ClientError as exc:
                if not is_not_found(exc):
                    raise
                self._models[name] = False
        return self._models[name]

    def components(self, names: list[str]) -> tuple[Component, ...]:
        out: list[Component] = []
        for name in names:
            try:
                ic = self.sm.describe_inference_component(InferenceComponentName=name)
            except ClientError as exc:
                if is_not_found(exc):
                    continue  # deleted since the listing
                raise
            copies = (ic.get("RuntimeConfig") or {}).get("DesiredCopyCount", 0)
            out.append(Component(name=name, variant=ic.get("VariantName", ""), copies=int(copies or 0)))
        return tuple(out)

    def details(self, r: Resource, check_models: bool = True) -> EndpointDetails:
        """Type, variants and components; whether the models exist only where a delete may follow."""
        facts = r.facts_as(EndpointFacts)
        config_name = facts.config or ""
        config = self.config(config_name) if config_name else None
        specs = tuple(_spec(v) for v in (config or {}).get("ProductionVariants", []))
        component_names = list(facts.components)
        if component_names or any(not s.model and not s.serverless for s in specs):
            kind = COMPONENTS
        elif config and config.get("AsyncInferenceConfig"):
            kind = ASYNC
        elif facts.serverless or (specs and all(s.serverless for s in specs)):
            kind = SERVERLESS
        else:
            kind = CLASSIC
        missing: tuple[str, ...] = ()
        if kind == CLASSIC and config is not None and check_models:
            missing = tuple(sorted({s.model for s in specs if s.model and not self.model_exists(s.model)}))
        components = self.components(component_names) if kind == COMPONENTS else ()
        return EndpointDetails(
            type=kind,
            config_name=config_name,
            config_exists=config is not None,
            variants=specs,
            models_missing=missing,
            components=components,
        )


def _spec(variant: dict[str, Any]) -> VariantSpec:
    scaling = variant.get("ManagedInstanceScaling") or {}
    managed_min = int(scaling.get("MinInstanceCount", 1)) if scaling.get("Status") == "ENABLED" else None
    return VariantSpec(
        name=variant["VariantName"],
        instance_type=variant.get("InstanceType"),
        initial_count=int(variant.get("InitialInstanceCount") or 0),
        model=variant.get("ModelName"),
        managed_min=managed_min,
        serverless=bool(variant.get("ServerlessConfig")),
    )


def _complete(r: Resource, details: EndpointDetails) -> None:
    """The resource as the message shows it: its details, instance types and what it costs an hour."""
    facts = r.facts_as(EndpointFacts)
    r.facts = replace(facts, details=details)
    current = {v.name: v.current for v in facts.variants}
    types = [v.instance_type for v in details.variants if v.instance_type]
    r.instance_type = " + ".join(sorted(set(types))) or None
    prices = [pricing.hourly(pricing.HOSTING, r.region, v.instance_type, current.get(v.name, 0)) for v in details.variants if v.instance_type]
    r.hourly_usd = None if not prices or any(p is None for p in prices) else round(sum(p for p in prices if p is not None), 4)


def _floor5(t: datetime) -> datetime:
    return t.replace(minute=t.minute - t.minute % 5, second=0, microsecond=0)
