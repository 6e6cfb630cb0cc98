"""Invocations of every Provisioned Throughput in service, in GetMetricData batches of 500, and which
of them AWS has ever published a series for.

One query per Provisioned Throughput: `AWS/Bedrock` `Invocations`, dimension `ModelId` = its ARN
(the `modelId` its callers pass), Sum per hour over the longest window any of them asks for.

AWS does not document which `ModelId` value a Provisioned Throughput's traffic carries
(docs/aws-assumptions.md, "Bedrock Provisioned Throughput: the series it is judged by"), so no data
is idleness only for one whose own series exists: one ListMetrics per region (namespace and metric
name, paginated, 500 a page), not one per Provisioned Throughput. "ListMetrics doesn't return
information about metrics if those metrics haven't reported data in the past two weeks"
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_ListMetrics.html): a series
listed had data within two weeks.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from reaper.aws.clients import Clients
from reaper.aws.metrics import MetricQuery, fetch
from reaper.core.model import Resource
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.bedrock_pt.model import DIMENSION, KIND, METRIC, NAMESPACE, PERIOD_SECONDS, PtSignal


def query_for(r: Resource) -> MetricQuery:
    return MetricQuery(r.arn, NAMESPACE, METRIC, ((DIMENSION, r.arn),), stat="Sum", period=PERIOD_SECONDS)


def listed(cloudwatch: Any) -> frozenset[str]:
    """The ModelId values AWS/Bedrock lists an Invocations series for in this region (one paginated ListMetrics)."""
    pages = cloudwatch.get_paginator("list_metrics").paginate(Namespace=NAMESPACE, MetricName=METRIC, Dimensions=[{"Name": DIMENSION}])
    return frozenset(
        d["Value"] for page in pages for m in page.get("Metrics", []) for d in m.get("Dimensions", []) if d.get("Name") == DIMENSION
    )


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, PtSignal]:
    readable = [r for r in resources if r.state == "InService"]
    if not readable:
        return {}
    longest = max([settings.idle_for(KIND)] + [read_tags(r.tags, settings).idle_minutes or 0 for r in readable])
    cloudwatch = clients("cloudwatch")
    series = fetch(cloudwatch, [query_for(r) for r in readable], now - timedelta(minutes=longest), now)
    seen = listed(cloudwatch)
    return {r.id: PtSignal(invocations=series.get(r.arn, []), series_seen=r.arn in seen) for r in readable}
