"""Invocations of every Provisioned Throughput in service, in GetMetricData batches of 500.

One query per Provisioned Throughput: `AWS/Bedrock` `Invocations`, dimension `ModelId` = its ARN
(the `modelId` its callers pass), Sum per hour over the longest window any of them asks for.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from reaper.aws.clients import Clients
from reaper.aws.metrics import MetricQuery, fetch
from reaper.core.model import Resource
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.bedrock_pt.model import DIMENSION, KIND, METRIC, NAMESPACE, PERIOD_SECONDS, PtSignal


def query_for(r: Resource) -> MetricQuery:
    return MetricQuery(r.arn, NAMESPACE, METRIC, ((DIMENSION, r.arn),), stat="Sum", period=PERIOD_SECONDS)


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, PtSignal]:
    readable = [r for r in resources if r.state == "InService"]
    if not readable:
        return {}
    longest = max([settings.idle_for(KIND)] + [read_tags(r.tags, settings).idle_minutes or 0 for r in readable])
    series = fetch(clients("cloudwatch"), [query_for(r) for r in readable], now - timedelta(minutes=longest), now)
    return {r.id: PtSignal(invocations=series.get(r.arn, [])) for r in readable}
