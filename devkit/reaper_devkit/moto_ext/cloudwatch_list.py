"""Speed (and one fix) for moto's ListMetrics.

moto de-duplicates ListMetrics results by comparing each datapoint with every metric found so
far, which takes minutes for the datapoints of a thousand training jobs. Here the same filter
(namespace, metric name, dimension filters where a missing Value matches any value) runs once per
datapoint and duplicates are found in a set. One difference, towards CloudWatch: a metric with
several dimensions is listed once, where moto lists it once per datapoint. Pagination (500 a
page, NextToken) stays moto's own.
"""

from __future__ import annotations

from typing import Any

from moto.cloudwatch import models


def apply() -> None:
    backend_cls = models.CloudWatchBackend
    if getattr(backend_cls, "_reaper_fast_list", False):
        return

    def get_filtered_metrics(self: Any, metric_name: str, namespace: str, dimensions: list[dict[str, str]]) -> list[Any]:
        wanted = [models.Dimension(d["Name"], d.get("Value")) for d in dimensions or []]
        seen: set[tuple[str, str, frozenset[tuple[str, str]]]] = set()
        out: list[Any] = []
        for datum in self.get_all_metrics():
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
