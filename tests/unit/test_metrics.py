"""GetMetricData batching: at most 500 queries a call, every page followed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from reaper.aws.metrics import MetricQuery, fetch

T0 = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


class FakeCloudWatch:
    """Answers each query with two points, split over two pages."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def get_metric_data(self, **request: Any) -> dict[str, Any]:
        self.calls.append(request)
        second_page = "NextToken" in request
        ts = T0 + timedelta(minutes=5 if second_page else 0)
        results = [{"Id": q["Id"], "Timestamps": [ts], "Values": [1.0 if second_page else 0.0]} for q in request["MetricDataQueries"]]
        return {"MetricDataResults": results, **({} if second_page else {"NextToken": "more"})}


def test_1001_queries_take_three_batches_and_every_page():
    cw = FakeCloudWatch()
    queries = [MetricQuery(f"r{i}", "MLReaper", "NotebookActivity", (("NotebookInstanceName", f"r{i}"),)) for i in range(1001)]
    out = fetch(cw, queries, T0 - timedelta(hours=1), T0 + timedelta(hours=1))
    batches = [c for c in cw.calls if "NextToken" not in c]
    assert [len(c["MetricDataQueries"]) for c in batches] == [500, 500, 1]
    assert len(cw.calls) == 6  # each batch had two pages
    assert out["r1000"] == [(T0, 0.0), (T0 + timedelta(minutes=5), 1.0)]


def test_queries_sharing_a_key_are_merged_in_time_order():
    cw = FakeCloudWatch()
    queries = [MetricQuery("ep", "AWS/SageMaker", "Invocations", (("EndpointName", "ep"), ("VariantName", v)), stat="Sum") for v in "ab"]
    out = fetch(cw, queries, T0 - timedelta(hours=1), T0 + timedelta(hours=1))
    assert [ts for ts, _ in out["ep"]] == sorted(ts for ts, _ in out["ep"]) and len(out["ep"]) == 4
