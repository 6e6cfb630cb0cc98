"""Reads for the endpoint kind, in bulk where the API allows it.

Discovery is one paginated Search (100 endpoints a page, with their variants and tags) and
one paginated ListInferenceComponents for the region. Configurations, models and component
copy counts have no batch API: they are read only for the endpoints that may be acted on,
and each configuration or model once per sweep however many endpoints name it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from reaper.clients import Clients
from reaper.kinds.endpoint_facts import (
    ASYNC,
    CLASSIC,
    COMPONENTS,
    NAMESPACE,
    SERVERLESS,
    Component,
    EndpointDetails,
    VariantSpec,
)
from reaper.metrics import MetricQuery
from reaper.model import Resource

PAGE = 100


def is_missing(exc: ClientError) -> bool:
    """SageMaker says "Could not find …" (ValidationException) for a name that does not exist."""
    err = exc.response.get("Error", {})
    return err.get("Code") in ("ResourceNotFound", "ResourceNotFoundException") or (
        err.get("Code") == "ValidationException" and "could not find" in str(err.get("Message", "")).lower()
    )


def search_endpoints(clients: Clients) -> Iterator[dict[str, Any]]:
    paginator = clients("sagemaker").get_paginator("search")
    for page in paginator.paginate(Resource="Endpoint", PaginationConfig={"PageSize": PAGE}):
        for item in page.get("Results", []):
            if item.get("Endpoint"):
                yield item["Endpoint"]


def components_by_endpoint(clients: Clients) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    paginator = clients("sagemaker").get_paginator("list_inference_components")
    for page in paginator.paginate(PaginationConfig={"PageSize": PAGE}):
        for ic in page.get("InferenceComponents", []):
            out.setdefault(ic["EndpointName"], []).append(ic["InferenceComponentName"])
    return out


def variant_summaries(clients: Clients, endpoint: dict[str, Any]) -> list[dict[str, Any]]:
    """The variants Search returned; DescribeEndpoint only if Search left them out."""
    variants: list[dict[str, Any]] = endpoint.get("ProductionVariants") or []
    if variants or endpoint.get("EndpointStatus") != "InService":
        return variants
    try:
        described: list[dict[str, Any]] = clients("sagemaker").describe_endpoint(EndpointName=endpoint["EndpointName"]).get(
            "ProductionVariants", []
        )
    except ClientError as exc:
        if is_missing(exc):
            return []
        raise
    return described


def traffic_queries(r: Resource) -> list[MetricQuery]:
    """Invocations, summed over every variant of the endpoint, or over every component of an
    endpoint that hosts components (AWS publishes those per component, without EndpointName)."""
    components = r.attrs.get("components", [])
    if components:
        return [MetricQuery(r.id, NAMESPACE, "Invocations", (("InferenceComponentName", c),), stat="Sum", period=300) for c in components]
    return [
        MetricQuery(r.id, NAMESPACE, "Invocations", (("EndpointName", r.id), ("VariantName", v["name"])), stat="Sum", period=300)
        for v in r.attrs.get("variants", [])
    ]


def async_queries(r: Resource) -> list[MetricQuery]:
    queries = [
        MetricQuery(f"{r.id}|processed", NAMESPACE, "InvocationsProcessed", (("EndpointName", r.id), ("VariantName", v["name"])), stat="Sum", period=300)
        for v in r.attrs.get("variants", [])
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
                if not is_missing(exc):
                    raise
                self._configs[name] = None
        return self._configs[name]

    def model_exists(self, name: str) -> bool:
        if name not in self._models:
            try:
                self.sm.describe_model(ModelName=name)
                self._models[name] = True
            except ClientError as exc:
                if not is_missing(exc):
                    raise
                self._models[name] = False
        return self._models[name]

    def components(self, names: list[str]) -> tuple[Component, ...]:
        out: list[Component] = []
        for name in names:
            try:
                ic = self.sm.describe_inference_component(InferenceComponentName=name)
            except ClientError as exc:
                if is_missing(exc):
                    continue  # deleted since the listing
                raise
            copies = (ic.get("RuntimeConfig") or {}).get("DesiredCopyCount", 0)
            out.append(Component(name=name, variant=ic.get("VariantName", ""), copies=int(copies or 0)))
        return tuple(out)

    def details(self, r: Resource, check_models: bool = True) -> EndpointDetails:
        """Type, variants and components; whether the models exist only where a delete may follow."""
        config_name = str(r.attrs.get("config") or "")
        config = self.config(config_name) if config_name else None
        specs = tuple(_spec(v) for v in (config or {}).get("ProductionVariants", []))
        component_names = list(r.attrs.get("components", []))
        if component_names or any(not s.model and not s.serverless for s in specs):
            kind = COMPONENTS
        elif config and config.get("AsyncInferenceConfig"):
            kind = ASYNC
        elif r.attrs.get("serverless") or (specs and all(s.serverless for s in specs)):
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
