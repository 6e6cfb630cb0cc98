"""CloudWatch metrics in GetMetricData batches of up to 500 queries (of which at most 100 SEARCH expressions).

A query is a metric (MetricStat) or an expression (e.g. `MAX(SEARCH(...))`, one series however many
metrics the search finds). https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html:
"A single GetMetricData call can include as many as 500 MetricDataQuery structures." Search
expressions: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/search-expression-syntax.html:
"The maximum search expression query size is 1024 characters. You can have as many as 100 search
expressions on one graph." A graph is one GetMetricData request, so a call holds at most 100.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict, cast

from reaper.core.timeutil import as_utc

MAX_QUERIES_PER_CALL = 500
MAX_SEARCHES_PER_CALL = 100
MAX_SEARCH_CHARS = 1024

Series = list[tuple[datetime, float]]  # oldest first


class Dimension(TypedDict):
    """https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_Dimension.html"""

    Name: str
    Value: str


class Metric(TypedDict):
    """https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_Metric.html (the members sent)."""

    Namespace: str
    MetricName: str
    Dimensions: list[Dimension]


class MetricStat(TypedDict):
    """https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricStat.html (the members sent)."""

    Metric: Metric
    Period: int
    Stat: str


class MetricDataQuery(TypedDict, total=False):
    """https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricDataQuery.html: Id, and
    either MetricStat or Expression."""

    Id: str
    MetricStat: MetricStat
    Expression: str
    Period: int
    ReturnData: bool


class GetMetricDataRequest(TypedDict, total=False):
    MetricDataQueries: list[MetricDataQuery]
    StartTime: datetime
    EndTime: datetime
    ScanBy: str
    NextToken: str


class MetricDataResult(TypedDict, total=False):
    """https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricDataResult.html"""

    Id: str
    Timestamps: list[datetime]
    Values: list[float]


class GetMetricDataResponse(TypedDict, total=False):
    MetricDataResults: list[MetricDataResult]
    NextToken: str


@dataclass(frozen=True)
class MetricQuery:
    key: str  # the caller's name for the series, e.g. a notebook name
    namespace: str
    metric: str
    dimensions: tuple[tuple[str, str], ...]
    stat: str = "Maximum"
    period: int = 300
    expression: str | None = None  # when set, the query is this expression (namespace/metric/dimensions unused)

    @property
    def searches(self) -> int:
        return self.expression.count("SEARCH(") if self.expression else 0

    def to_api(self, query_id: str) -> MetricDataQuery:
        if self.expression is not None:
            return {"Id": query_id, "Expression": self.expression, "Period": self.period, "ReturnData": True}
        return {
            "Id": query_id,
            "MetricStat": {
                "Metric": {
                    "Namespace": self.namespace,
                    "MetricName": self.metric,
                    "Dimensions": [{"Name": n, "Value": v} for n, v in self.dimensions],
                },
                "Period": self.period,
                "Stat": self.stat,
            },
            "ReturnData": True,
        }


class MetricReadTruncated(Exception):
    """More NextToken pages than the caller allowed: the series are not whole."""


def fetch(
    cloudwatch: Any, queries: Sequence[MetricQuery], start: datetime, end: datetime, max_pages: int | None = None
) -> dict[str, Series]:
    """Every query's datapoints between start and end, keyed by MetricQuery.key.

    Several queries may share a key (e.g. one per endpoint variant): their series are merged.
    With `max_pages`, at most that many GetMetricData calls; more raises MetricReadTruncated.
    """
    pages = 0
    out: dict[str, Series] = {q.key: [] for q in queries}
    for batch in _chunks(queries, MAX_QUERIES_PER_CALL):
        ids = {f"q{i}": q for i, q in enumerate(batch)}
        request: GetMetricDataRequest = {
            "MetricDataQueries": [q.to_api(qid) for qid, q in ids.items()],
            "StartTime": start,
            "EndTime": end,
            "ScanBy": "TimestampAscending",
        }
        while True:
            pages += 1
            if max_pages is not None and pages > max_pages:
                raise MetricReadTruncated(f"more than {max_pages} GetMetricData pages")
            page = cast(GetMetricDataResponse, cloudwatch.get_metric_data(**request))
            for result in page.get("MetricDataResults", []):
                q = ids.get(result["Id"])
                if q is None:
                    continue
                out[q.key].extend(
                    (as_utc(ts), float(v)) for ts, v in zip(result.get("Timestamps", []), result.get("Values", []), strict=False)
                )
            token = page.get("NextToken")
            if not token:
                break
            request["NextToken"] = token
    for series in out.values():
        series.sort(key=lambda p: p[0])
    return out


def _chunks(items: Sequence[MetricQuery], size: int) -> Iterable[Sequence[MetricQuery]]:
    """In order, at most `size` queries and MAX_SEARCHES_PER_CALL search expressions to a call."""
    batch: list[MetricQuery] = []
    searches = 0
    for q in items:
        if batch and (len(batch) == size or searches + q.searches > MAX_SEARCHES_PER_CALL):
            yield batch
            batch, searches = [], 0
        batch.append(q)
        searches += q.searches
    if batch:
        yield batch
