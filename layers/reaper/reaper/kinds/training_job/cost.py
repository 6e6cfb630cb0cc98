"""What a job has cost so far, from list prices: time since it started x instances x hourly price.

Pure functions. An unknown price is never guessed: the estimate is None and callers say the
cost ceiling cannot be judged.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from reaper.aws import pricing
from reaper.aws.pricing import Pricer
from reaper.aws.sagemaker_shapes import ResourceConfig
from reaper.core.price import Price, total
from reaper.core.timeutil import as_utc
from reaper.kinds.training_job.model import Cluster, Span
from reaper.kinds.training_job.shapes import (
    HyperParameterTrainingJobDefinition,
    HyperParameterTuningResourceConfig,
    ProcessingClusterConfig,
)


def cluster(region: str, config: ResourceConfig | None, pricer: Pricer | None = None) -> Cluster:
    """From a ResourceConfig (InstanceType/InstanceCount or InstanceGroups) or a processing ClusterConfig, priced by
    the runtime's pricer (None: the shipped copy of AWS's price list alone)."""
    config = config or ResourceConfig()
    groups = config.get("InstanceGroups") or []
    if groups:
        parts = [(g.get("InstanceType"), int(g.get("InstanceCount") or 0)) for g in groups]
    else:
        parts = [(config.get("InstanceType"), int(config.get("InstanceCount") or 1))]
    return _priced(region, parts, pricer)


def one_kind(config: ProcessingClusterConfig | HyperParameterTuningResourceConfig | None) -> ResourceConfig:
    """A cluster of one instance type (a processing ClusterConfig, a tuning resource config) as a ResourceConfig."""
    out = ResourceConfig()
    if config and "InstanceType" in config:
        out["InstanceType"] = config["InstanceType"]
    if config and "InstanceCount" in config:
        out["InstanceCount"] = config["InstanceCount"]
    return out


def tuning_cluster(region: str, definition: HyperParameterTrainingJobDefinition | None, pricer: Pricer | None = None) -> Cluster:
    """A tuning job's training-job definition: ResourceConfig, or HyperParameterTuningResourceConfig."""
    definition = definition or HyperParameterTrainingJobDefinition()
    resources = definition.get("ResourceConfig")
    if resources:
        return cluster(region, resources, pricer)
    tuning = definition.get("HyperParameterTuningResourceConfig") or HyperParameterTuningResourceConfig()
    options = tuning.get("InstanceConfigs") or []
    if not options:
        return cluster(region, one_kind(tuning), pricer)
    priced = [_priced(region, [(o.get("InstanceType"), int(o.get("InstanceCount") or 1))], pricer) for o in options]
    known = [c for c in priced if c.hourly_usd is not None]
    if len(known) != len(priced):
        return Cluster(None, 0, None, unpriced=tuple(t for c in priced for t in c.unpriced))
    cheapest = min(known, key=lambda c: c.hourly_usd or 0.0)
    return Cluster(cheapest.instance_type, cheapest.count, cheapest.hourly_usd, lower_bound=len(known) > 1, price=cheapest.price)


def _priced(region: str, parts: Iterable[tuple[str | None, int]], pricer: Pricer | None) -> Cluster:
    pricer = pricer or Pricer.shipped_only()
    prices: list[Price | None] = []
    count = 0
    types: list[str] = []
    unpriced: list[str] = []
    for itype, n in parts:
        count += n
        if itype:
            types.append(itype)
        price = pricer.hourly(pricing.TRAINING, region, itype, n)
        prices.append(price)
        if price is None:
            unpriced.append(itype or "unknown instance type")
    label = "+".join(dict.fromkeys(types)) or None
    together = None if unpriced else total(prices)
    return Cluster(label, count, None if together is None else together.usd, unpriced=tuple(unpriced), price=together)


def hours(start: datetime | None, end: datetime | None, now: datetime) -> float:
    if start is None:
        return 0.0
    stop = as_utc(end) if end is not None else as_utc(now)
    return max(0.0, (stop - as_utc(start)).total_seconds() / 3600.0)


def estimate(spans: Iterable[Span], now: datetime) -> float | None:
    """Dollars so far; None when any span that ran has no price."""
    total = 0.0
    for span in spans:
        h = hours(span.start, span.end, now)
        if h == 0:
            continue
        if span.hourly_usd is None:
            return None
        total += h * span.hourly_usd
    return round(total, 2)
