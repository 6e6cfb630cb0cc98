"""The NaN scan over /aws/sagemaker/TrainingJobs follows nextToken through the empty pages CloudWatch
Logs sends while it searches, within a page and time budget, and says "inconclusive" when cut short."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper.kinds.training_job import signals

NOW = datetime(2026, 12, 2, 14, 7, tzinfo=UTC)
NAN = {"logStreamName": "job-a/algo-1-1700000000", "timestamp": int(NOW.timestamp() * 1000) - 60_000, "message": "epoch 3 loss=nan lr=0.1"}


class FakeLogs:
    """FilterLogEvents as AWS answers a filtered search: `empty` pages with a nextToken, then `last`."""

    def __init__(self, empty: int, last: dict[str, Any] | None = None) -> None:
        self.empty, self.last, self.calls = empty, last, 0
        self.tokens: list[str | None] = []

    def filter_log_events(self, **request: Any) -> dict[str, Any]:
        self.tokens.append(request.get("nextToken"))
        self.calls += 1
        if self.calls <= self.empty:
            return {"events": [], "nextToken": f"t{self.calls}"}
        return self.last if self.last is not None else {"events": [], "nextToken": f"t{self.calls}"}


def test_a_nan_after_many_empty_pages_is_found_and_the_scan_is_conclusive():
    # Given 12 empty pages with a nextToken before the page with the nan (the old scan stopped at 5)
    logs = FakeLogs(12, {"events": [NAN]})
    hits, error = signals._scan_logs(logs, {"job-a"}, NOW)
    assert error is None and [h.excerpt for h in hits["job-a"]] and logs.calls == 13
    assert logs.tokens == [None, *[f"t{i}" for i in range(1, 13)]]  # every token followed, in order


def test_a_scan_that_never_ends_stops_at_its_page_budget_and_says_inconclusive(monkeypatch):
    monkeypatch.setattr(signals, "MAX_LOG_PAGES", 30)
    logs = FakeLogs(10_000)
    hits, error = signals._scan_logs(logs, {"job-a"}, NOW)
    assert hits == {} and logs.calls == 30
    assert error is not None and error.startswith("log scan inconclusive: 30 pages") and "may not have been seen" in error


def test_a_slow_scan_stops_at_its_time_budget(monkeypatch):
    ticks = iter(range(0, 10_000, 7))  # each page takes 7 s
    monkeypatch.setattr(signals, "clock", lambda: float(next(ticks)))
    logs = FakeLogs(10_000)
    _, error = signals._scan_logs(logs, {"job-a"}, NOW)
    assert logs.calls == 3 and error is not None and "inconclusive" in error and "21 s" in error


def test_a_nan_found_before_the_budget_runs_out_is_kept_though_the_scan_is_inconclusive(monkeypatch):
    monkeypatch.setattr(signals, "MAX_LOG_PAGES", 3)

    class NanThenEndless(FakeLogs):
        def filter_log_events(self, **request: Any) -> dict[str, Any]:
            self.calls += 1
            return {"events": [NAN] if self.calls == 1 else [], "nextToken": f"t{self.calls}"}

    hits, error = signals._scan_logs(NanThenEndless(0), {"job-a"}, NOW)
    assert len(hits["job-a"]) == 1 and error is not None and "inconclusive" in error


@pytest.mark.parametrize(("code", "said"), [("ResourceNotFoundException", None), ("ThrottlingException", "Rate exceeded")])
def test_a_missing_log_group_is_nothing_to_scan_and_a_throttle_is_said(code, said):
    class Failing:
        def filter_log_events(self, **_request: Any) -> dict[str, Any]:
            raise ClientError({"Error": {"Code": code, "Message": "Rate exceeded" if said else "missing"}}, "FilterLogEvents")

    hits, error = signals._scan_logs(Failing(), {"job-a"}, NOW)
    assert hits == {} and (error is None if said is None else said in error)
