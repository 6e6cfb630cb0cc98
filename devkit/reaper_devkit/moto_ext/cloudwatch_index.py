"""Speed only: moto answers each GetMetricData query by scanning every stored datapoint for
every period, so a 500-query batch over hundreds of resources takes minutes.

Here each query is answered by moto's own code on just the datapoints of its metric name and
dimensions (indexed once per call). moto's filtering (time, period, unit, statistic) still
runs on what is left, so results are what moto would give, only sooner.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from moto.cloudwatch import models


def _key(name: str, dims: Any) -> tuple[str, tuple[tuple[str, str], ...]]:
    return name, tuple(sorted((d.name, d.value) for d in dims))


def apply() -> None:
    backend_cls = models.CloudWatchBackend
    if getattr(backend_cls, "_reaper_indexed", False):
        return
    original = backend_cls.get_metric_data

    def get_metric_data(self: Any, queries: list[dict[str, Any]], *args: Any, **kwargs: Any) -> Any:
        stat_queries = [q for q in queries if "MetricStat" in q]
        if len(stat_queries) != len(queries):  # math or insights expressions: moto's own path
            return original(self, queries, *args, **kwargs)
        index: dict[Any, list[Any]] = defaultdict(list)
        everything = self.metric_data
        for datum in everything:
            index[_key(datum.name, datum.dimensions)].append(datum)
        results: list[Any] = []
        try:
            for q in stat_queries:
                metric = q["MetricStat"]["Metric"]
                dims = [models.Dimension(d["Name"], d["Value"]) for d in metric.get("Dimensions", [])]
                if dims:
                    self.metric_data = index.get(_key(metric["MetricName"], dims), [])
                else:
                    self.metric_data = [d for d in everything if d.name == metric["MetricName"]]
                results.extend(original(self, [q], *args, **kwargs))
        finally:
            self.metric_data = everything
        return results

    backend_cls.get_metric_data = get_metric_data
    backend_cls._reaper_indexed = True
