"""Reading the agent's samples from CloudWatch Logs: paging as AWS pages, what counts as a sample,
and a read that fails; plus moto's FilterLogEvents pages sized at 1 MB as AWS sizes them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from reaper.kinds.notebook import samples
from reaper_devkit import moto_ext

END = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
START = END - timedelta(hours=3)


def ev(stream: str, minutes_before_end: float, active: Any, notebook: str | None = None) -> dict[str, Any]:
    at = END - timedelta(minutes=minutes_before_end)
    return {
        "logStreamName": stream,
        "timestamp": int(at.timestamp() * 1000),
        "message": json.dumps({"notebook": notebook or stream, "active": active}),
    }


class Pages:
    """FilterLogEvents as AWS answers a scan: pages that may be empty yet carry a nextToken."""

    def __init__(self, pages: list[list[dict[str, Any]]], error: str | None = None) -> None:
        self.pages, self.error, self.requests = pages, error, []

    def filter_log_events(self, **request: Any) -> dict[str, Any]:
        self.requests.append(request)
        if self.error:
            raise ClientError({"Error": {"Code": self.error, "Message": "no"}}, "FilterLogEvents")
        i = int(request.get("nextToken", "0"))
        page: dict[str, Any] = {"events": self.pages[i]}
        if i + 1 < len(self.pages):
            page["nextToken"] = str(i + 1)
        return page


def test_empty_pages_with_a_token_do_not_end_the_scan():
    logs = Pages([[], [ev("a", 3, 0)], [], [ev("a", 8, 1), ev("b", 3, 0)]])
    read = samples.read(logs, "/g", {"a", "b"}, START, END)
    assert len(logs.requests) == 4
    assert read == {"a": [(END - timedelta(minutes=10), 1.0), (END - timedelta(minutes=5), 0.0)], "b": [(END - timedelta(minutes=5), 0.0)]}
    # the window is asked for in milliseconds, the end exclusive
    assert logs.requests[0]["startTime"] == int(START.timestamp() * 1000)
    assert logs.requests[0]["endTime"] == int(END.timestamp() * 1000) - 1


def test_two_samples_in_one_period_keep_the_highest():
    logs = Pages([[ev("a", 4, 0), ev("a", 2, 1), ev("a", 1, 0)]])
    assert samples.read(logs, "/g", {"a"}, START, END) == {"a": [(END - timedelta(minutes=5), 1.0)]}


def test_a_missing_log_group_is_no_samples_and_a_refusal_is_unreadable():
    assert samples.read(Pages([], error="ResourceNotFoundException"), "/g", {"a"}, START, END) == {}
    with pytest.raises(samples.SamplesUnreadable, match="AccessDeniedException"):
        samples.read(Pages([], error="AccessDeniedException"), "/g", {"a"}, START, END)


def test_a_scan_past_its_page_budget_is_unreadable(monkeypatch):
    monkeypatch.setattr(samples, "MAX_PAGES", 3)
    with pytest.raises(samples.SamplesUnreadable, match="did not reach the end"):
        samples.read(Pages([[]] * 10), "/g", {"a"}, START, END)


@pytest.mark.parametrize(
    "event",
    [
        ev("a", 3, 0, notebook="b"),  # another notebook's name in this stream
        ev("stranger", 3, 0),  # a stream for no running notebook
        ev("a", 3, 1.0),
        ev("a", 3, True),
        ev("a", 3, 2),
        ev("a", 3, "1"),
        ev("a", 3, None),
        {**ev("a", 3, 0), "message": '{"notebook": "a", "active": 1e999}'},
        {**ev("a", 3, 0), "message": "{not json"},
        {**ev("a", 3, 0), "message": json.dumps({"notebook": "a", "active": 0, "x": "y" * 300})},
        {**ev("a", 3, 0), "timestamp": "soon"},
        {**ev("a", 3, 0), "timestamp": True},
        ev("a", -1, 0),  # after the window's end
        ev("a", 181, 0),  # before its start
        {"logStreamName": "a"},
    ],
)
def test_what_the_agent_does_not_write_is_not_a_sample(event):
    assert samples.parse(event, {"a", "b"}, START, END) is None


def test_moto_pages_filter_log_events_at_1_mb_and_resumes_after_the_last_event_kept():
    moto_ext.apply()
    with mock_aws():
        logs = boto3.client("logs", region_name="us-east-1")
        logs.create_log_group(logGroupName="/g")
        logs.create_log_stream(logGroupName="/g", logStreamName="s")
        now = int(datetime.now(UTC).timestamp() * 1000)
        message = "x" * 1000
        for batch in range(3):  # 3,000 events of about 1.1 kB: about 3.3 MB
            logs.put_log_events(
                logGroupName="/g",
                logStreamName="s",
                logEvents=[{"timestamp": now - 3000 + batch * 1000 + i, "message": message} for i in range(1000)],
            )
        pages, seen, token = 0, [], None
        while True:
            page = logs.filter_log_events(logGroupName="/g", **({"nextToken": token} if token else {}))
            pages += 1
            assert sum(len(json.dumps(e)) for e in page["events"]) <= 1_048_576
            seen += [e["timestamp"] for e in page["events"]]
            token = page.get("nextToken")
            if not token:
                break
        assert pages == 4 and len(seen) == 3000 and len(set(seen)) == 3000


class FailsOnPage(Pages):
    """The first pages answer; then FilterLogEvents fails (throttled past the client's retries, or the
    group deleted in the middle of the scan)."""

    def __init__(self, pages: list[list[dict[str, Any]]], fail_at: int, error: str) -> None:
        super().__init__(pages)
        self.fail_at, self.fail_with = fail_at, error

    def filter_log_events(self, **request: Any) -> dict[str, Any]:
        if int(request.get("nextToken", "0")) == self.fail_at:
            raise ClientError({"Error": {"Code": self.fail_with, "Message": "no"}}, "FilterLogEvents")
        return super().filter_log_events(**request)


def test_a_scan_cut_off_midway_never_hands_back_the_pages_it_read():
    # Given a's idle samples on page 1, and its activity on page 2, which never comes
    pages = [[ev("a", 5 * k + 2, 0) for k in range(36)], [ev("a", 3, 1)]]
    # When the scan is throttled on page 2, Then a is not judged from page 1 alone (that would say idle)
    with pytest.raises(samples.SamplesUnreadable, match="ThrottlingException"):
        samples.read(FailsOnPage(pages, 1, "ThrottlingException"), "/g", {"a"}, START, END)
    # and when the group is deleted during the scan, no sample is kept: unknown, as with no group
    assert samples.read(FailsOnPage(pages, 1, "ResourceNotFoundException"), "/g", {"a"}, START, END) == {}
