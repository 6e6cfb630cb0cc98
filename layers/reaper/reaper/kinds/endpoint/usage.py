"""A week of use for every classic endpoint of a region, in one GetMetricData batch, and the advice
rightsize.py draws from it (docs/kinds/endpoint.md#right-size-advice). Reads only; never an action.

Per variant (dimensions EndpointName, VariantName), hourly: Invocations (Sum) and ModelLatency (Average,
microseconds) in AWS/SageMaker; CPUUtilization, MemoryUtilization, GPUUtilization and GPUMemoryUtilization
(Average) in /aws/sagemaker/Endpoints.
https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html
An endpoint's instance type comes from its configuration, read only for the endpoints whose week suggests
advice (sparse, or CPU under a quarter busy): one DescribeEndpointConfig each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from reaper.aws import pricing
from reaper.aws.clients import Clients
from reaper.aws.metrics import MetricQuery, Series, fetch
from reaper.core.model import Resource
from reaper.core.price import Price
from reaper.core.timeutil import as_utc
from reaper.kinds.endpoint import rightsize
from reaper.kinds.endpoint.model import CLASSIC, IN_SERVICE, NAMESPACE, EndpointFacts
from reaper.kinds.endpoint.rightsize import Advice, Usage

INSTANCE_NAMESPACE = "/aws/sagemaker/Endpoints"
HOUR = 3600
WEEK = timedelta(hours=rightsize.WEEK_HOURS)
_METRICS = (  # (key suffix, namespace, metric, statistic)
    ("calls", NAMESPACE, "Invocations", "Sum"),
    ("latency", NAMESPACE, "ModelLatency", "Average"),
    ("cpu", INSTANCE_NAMESPACE, "CPUUtilization", "Average"),
    ("memory", INSTANCE_NAMESPACE, "MemoryUtilization", "Average"),
    ("gpu", INSTANCE_NAMESPACE, "GPUUtilization", "Average"),
    ("gpu_memory", INSTANCE_NAMESPACE, "GPUMemoryUtilization", "Average"),
)


@dataclass(frozen=True)
class Target:
    """A classic endpoint in service: its name, configuration and variants (name, instances now)."""

    name: str
    region: str
    config: str
    variants: tuple[tuple[str, int], ...]
    types: tuple[tuple[str, str | None], ...] | None = None  # (variant, instance type), when the sweep read its configuration


def targets(resources: Iterable[Resource], now: datetime) -> list[Target]:
    """The sweep's endpoints worth advising: classic (no components), not serverless, in service the whole week."""
    out = []
    for r in resources:
        facts = r.facts_as(EndpointFacts)
        since = max((as_utc(t) for t in (r.created_at, r.changed_at) if t is not None), default=None)
        if r.state != IN_SERVICE or facts.serverless or facts.components or not facts.config:
            continue
        if since is None or since > as_utc(now) - WEEK:  # not a whole week of evidence
            continue
        known = None if facts.details is None or facts.details.type != CLASSIC else facts.details.variants
        types = None if known is None else tuple((v.name, v.instance_type) for v in known)
        out.append(Target(r.id, r.region, facts.config, tuple((v.name, v.current) for v in facts.variants), types))
    return out


def queries(t: Target) -> list[MetricQuery]:
    """Six hourly series per variant, merged per endpoint (their keys are the endpoint's)."""
    return [
        MetricQuery(f"{t.name}|{key}", namespace, metric, (("EndpointName", t.name), ("VariantName", v)), stat=stat, period=HOUR)
        for v, _count in t.variants
        for key, namespace, metric, stat in _METRICS
    ]


def usage_of(name: str, series: dict[str, Series]) -> Usage:
    calls: dict[datetime, float] = {}
    for at, value in series.get(f"{name}|calls", []):
        calls[at] = calls.get(at, 0.0) + value
    latency = [v for _at, v in series.get(f"{name}|latency", [])]

    def peak(key: str) -> float | None:
        values = [v for _at, v in series.get(f"{name}|{key}", [])]
        return max(values) if values else None

    return Usage(
        invocations=sum(calls.values()),
        active_hours=sum(1 for v in calls.values() if v > 0),
        latency_ms=sum(latency) / len(latency) / 1000.0 if latency else None,
        cpu_peak=peak("cpu"),
        memory_peak=peak("memory"),
        gpu_peak=peak("gpu"),
        gpu_memory_peak=peak("gpu_memory"),
    )


def _worth_a_look(u: Usage) -> bool:
    """Whether the week may give advice, before its instance type is read: sparse, or memory under half used (a
    smaller size needs that whatever the type; rightsize decides the rest)."""
    sparse = u.active_hours <= rightsize.SPARSE_SHARE * rightsize.WEEK_HOURS
    roomy = u.cpu_peak is not None and u.memory_peak is not None and u.memory_peak < rightsize.MEMORY_SHARE
    return u.invocations > 0 and (sparse or roomy)


def advise_region(clients: Clients, found: list[Target], now: datetime) -> list[Advice]:
    """One GetMetricData batch (500 queries a call) for every target of the region, then each advice."""
    if not found:
        return []
    end = as_utc(now).replace(minute=0, second=0, microsecond=0)
    series = fetch(clients("cloudwatch"), [q for t in found for q in queries(t)], end - WEEK, end)
    sm = clients("sagemaker")
    out = []
    for t in found:
        u = usage_of(t.name, series)
        if not _worth_a_look(u):
            continue
        instance_type = _instance_type(sm, t)
        if instance_type is None:
            continue
        count = sum(c for _v, c in t.variants)
        advice = rightsize.advise(t.name, t.region, instance_type, count, u, _pricer(clients, t.region))
        if advice is not None:
            out.append(advice)
    return out


def _instance_type(sm: Any, t: Target) -> str | None:
    """The one instance type of a real-time endpoint's variants: from the sweep's read, else its configuration."""
    if t.types is not None:
        types = dict(t.types)
    else:
        try:
            config = sm.describe_endpoint_config(EndpointConfigName=t.config)
        except ClientError:  # a configuration gone or unreadable gives no advice, never a failed plan
            return None
        variants = config.get("ProductionVariants", [])
        if config.get("AsyncInferenceConfig") or any(not v.get("ModelName") for v in variants):  # async, or components
            return None
        types = {v["VariantName"]: v.get("InstanceType") for v in variants}
    found = {types.get(v) for v, _count in t.variants}
    return found.pop() if len(found) == 1 and None not in found else None


def _pricer(clients: Clients, region: str) -> rightsize.PriceOf:
    def price(instance_type: str, count: int) -> Price | None:
        return clients.pricer.hourly(pricing.HOSTING, region, instance_type, count)

    return price


def advise_all(resources: Iterable[Resource], clients_for: Callable[[str], Clients], now: datetime) -> dict[tuple[str, str], Advice]:
    """`reaper plan`: the advice for the sweep's endpoints, by (region, name): one batch per region."""
    by_region: dict[str, list[Target]] = {}
    for t in targets(resources, now):
        by_region.setdefault(t.region, []).append(t)
    return {
        (a.region, a.endpoint): a for region, found in sorted(by_region.items()) for a in advise_region(clients_for(region), found, now)
    }


def targets_from_search(clients: Clients, now: datetime) -> list[Target]:
    """The digest (no sweep before it): the region's endpoints from Search pages, as `targets` keeps them."""
    from reaper.kinds.endpoint.discover import search_endpoints

    out = []
    for ep in search_endpoints(clients):
        variants = ep.get("ProductionVariants") or []
        since = max((as_utc(t) for t in (ep.get("CreationTime"), ep.get("LastModifiedTime")) if t is not None), default=None)
        serverless = any(v.get("CurrentServerlessConfig") for v in variants)
        if ep.get("EndpointStatus") != IN_SERVICE or serverless or not variants or not ep.get("EndpointConfigName"):
            continue
        if since is None or since > as_utc(now) - WEEK:
            continue
        counts = tuple((str(v["VariantName"]), int(v.get("CurrentInstanceCount") or 0)) for v in variants)
        out.append(Target(str(ep["EndpointName"]), clients.region, str(ep["EndpointConfigName"]), counts))
    return out


def digest_line(found: Iterable[Advice], most: int = 3) -> str | None:
    """The digest's line: the largest monthly differences first, and how many more `reaper plan` shows."""
    ranked = sorted(found, key=lambda a: (-a.monthly_saving, a.endpoint))
    if not ranked:
        return None
    shown = [f"{a.endpoint}: {a.to} ({_short_money(a)})" for a in ranked[:most]]
    more = f"; {len(ranked) - most} more" if len(ranked) > most else ""
    return "; ".join(shown) + more + " (`reaper plan --kind endpoint`)"


def _short_money(a: Advice) -> str:
    saving = rightsize.usd(a.monthly_saving)
    if a.monthly_after is None:
        return f"up to {saving}/month less, serverless unpriced; {rightsize.usd(a.per_1k_before)} per 1,000 inferences now"
    return f"{saving}/month less; per 1,000 inferences {rightsize.usd(a.per_1k_before)} -> {rightsize.usd(a.per_1k_after)}"
