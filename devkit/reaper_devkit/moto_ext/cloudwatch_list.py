"""Speed (and two fixes) for moto's ListMetrics.

moto de-duplicates ListMetrics results by comparing each datapoint with every metric found so
far, which takes minutes for the datapoints of a thousand training jobs. Here the same filter
(namespace, metric name, dimension filters where a missing Value matches any value) runs once per
datapoint and duplicates are found in a set. One difference, towards CloudWatch: a metric with
several dimensions is listed once, where moto lists it once per datapoint. Pagination (500 a
page, NextToken) stays moto's own.

And one rule moto lacks: "ListMetrics doesn't return information about metrics if those metrics
haven't reported data in the past two weeks"
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_ListMetrics.html): a series
whose newest datapoint is older than two weeks (by the clock, as CloudWatch's is) is not listed.
The Bedrock Provisioned Throughput kind reads it to know whether a series was ever seen.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from moto.cloudwatch import models

LISTED_FOR = timedelta(days=14)  # API_ListMetrics: no new datapoint in two weeks, not listed


def _utc(at: datetime) -> datetime:
    """moto keeps datapoint timestamps naive, in UTC."""
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def apply() -> None:
    backend_cls = models.CloudWatchBackend
    if getattr(backend_cls, "_reaper_fast_list", False):
        return

    def get_filtered_metrics(self: Any, metric_name: str, namespace: str, dimensions: list[dict[str, str]]) -> list[Any]:
        wanted = [models.Dimension(d["Name"], d.get("Value")) for d in dimensions or []]
        seen: set[tuple[str, str, frozenset[tuple[str, str]]]] = set()
        out: list[Any] = []
        listed_since = datetime.now(UTC) - LISTED_FOR
        for datum in self.get_all_metrics():
            if _utc(datum.timestamp) < listed_since:
                continue
            if (namespace and datum.namespace != namespace) or (metric_name and datum.name != metric_name):
                continue
            if any(w not in datum.dimensions for w in wanted):
                continue
            if datum.dimensions:
                key = (datum.namespace, datum.name, frozenset((d.name, d.value) for d in datum.dimensions))
                if key in seen:
                    continue
                seen.add(key)
            out.append(datum)
        return out

    backend_cls.get_filtered_metrics = get_filtered_metrics
    backend_cls._reaper_fast_list = True
