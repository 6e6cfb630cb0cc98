"""The activity agent's metric for every running notebook, in GetMetricData batches."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from reaper.clients import Clients
from reaper.kinds.notebook.model import KIND, LOOKBACK_MINUTES, METRIC, NAMESPACE, ActivitySignal, align
from reaper.metrics import MetricQuery, fetch
from reaper.model import Resource
from reaper.policy import read_tags
from reaper.settings import Settings


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, ActivitySignal]:
    running = [r for r in resources if r.state == "InService"]
    if not running:
        return {}
    end = align(now)
    longest = max([settings.idle_for(KIND)] + [read_tags(r.tags, settings).idle_minutes or 0 for r in running])
    start = end - timedelta(minutes=max(longest, LOOKBACK_MINUTES))
    queries = [MetricQuery(r.id, NAMESPACE, METRIC, (("NotebookInstanceName", r.id),), stat="Maximum", period=300) for r in running]
    series = fetch(clients("cloudwatch"), queries, start, end)
    return {key: ActivitySignal(points, end) for key, points in series.items()}
