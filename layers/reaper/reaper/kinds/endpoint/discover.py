"""Every endpoint in the region, in bulk: one paginated Search (100 endpoints a page, with their
variants and tags) and one paginated ListInferenceComponents for the region (optional: a failure
there is kept on each endpoint's facts, not raised)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, is_not_found, short
from reaper.aws.sagemaker_shapes import Endpoint, ManagedInstanceScaling, ProductionVariantSummary
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.kinds.endpoint.model import IN_SERVICE, KIND, EndpointFacts, VariantSummary
from reaper.kinds.endpoint.shapes import component_summaries, described

PAGE = 100


def discover(clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
    # Optional for most endpoints: if it fails, only the endpoints that turn out to host components
    # are left undecided (signals.py); the rest of the kind is swept.
    components_problem: str | None = None
    try:
        components = components_by_endpoint(clients)
    except AwsError as exc:
        components, components_problem = {}, short(exc)
    out: list[Resource] = []
    for ep in search_endpoints(clients):
        name = ep["EndpointName"]
        variants = tuple(_variant(v) for v in variant_summaries(clients, ep))
        out.append(
            Resource(
                kind=KIND,
                id=name,
                arn=ep.get("EndpointArn") or "",
                region=clients.region,
                state=ep.get("EndpointStatus", "Unknown"),
                tags={t["Key"]: t["Value"] for t in ep.get("Tags", []) or []},
                instance_count=sum(v.current for v in variants),
                created_at=ep.get("CreationTime"),
                changed_at=ep.get("LastModifiedTime"),
                facts=EndpointFacts(
                    config=ep.get("EndpointConfigName"),
                    variants=variants,
                    components=tuple(components.get(name, [])),
                    components_problem=components_problem,
                    serverless=bool(variants) and all(v.serverless for v in variants),
                    table=settings.table,
                ),
            )
        )
    return out


def search_endpoints(clients: Clients) -> Iterator[Endpoint]:
    paginator = clients("sagemaker").get_paginator("search")
    for page in paginator.paginate(Resource="Endpoint", PaginationConfig={"PageSize": PAGE}):
        for item in page.get("Results", []):  # SearchRecord: its Endpoint (API_SearchRecord.html)
            endpoint: Endpoint | None = item.get("Endpoint")
            if endpoint:
                yield endpoint


def components_by_endpoint(clients: Clients) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    paginator = clients("sagemaker").get_paginator("list_inference_components")
    for page in paginator.paginate(PaginationConfig={"PageSize": PAGE}):
        for ic in component_summaries(page):
            out.setdefault(ic["EndpointName"], []).append(ic["InferenceComponentName"])
    return out


def variant_summaries(clients: Clients, endpoint: Endpoint) -> list[ProductionVariantSummary]:
    """The variants Search returned; DescribeEndpoint only if Search left them out."""
    variants = endpoint.get("ProductionVariants") or []
    if variants or endpoint.get("EndpointStatus") != IN_SERVICE:
        return variants
    try:
        desc = described(clients("sagemaker"), endpoint["EndpointName"]).get("ProductionVariants", [])
    except ClientError as exc:
        if is_not_found(exc):
            return []
        raise
    return desc


def _variant(summary: ProductionVariantSummary) -> VariantSummary:
    scaling = summary.get("ManagedInstanceScaling") or ManagedInstanceScaling()
    return VariantSummary(
        name=summary["VariantName"],
        current=int(summary.get("CurrentInstanceCount") or 0),
        desired=int(summary.get("DesiredInstanceCount") or 0),
        serverless=bool(summary.get("CurrentServerlessConfig") or summary.get("DesiredServerlessConfig")),
        managed_min=int(scaling.get("MinInstanceCount", 1)) if scaling.get("Status") == "ENABLED" else None,
    )
