"""CloudTrail's CreateApp events read into each Studio space's last app start (kinds/storage/app_starts.py): matched on
domain and space, a user profile's app is no space's, an unreadable event or a failed lookup makes the read unknown,
and a read stopped short covers only back to the oldest event it read."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper.aws import cloudtrail
from reaper.kinds.storage import app_starts

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def event(params: dict[str, Any] | None, days_ago: float, raw: str | None = None) -> dict[str, Any]:
    body = raw if raw is not None else json.dumps({"eventName": "CreateApp", "requestParameters": params})
    return {"EventName": "CreateApp", "EventTime": NOW - timedelta(days=days_ago), "CloudTrailEvent": body}


class Trail:
    """CloudTrail's LookupEvents answering pages of events newest first (or an error)."""

    def __init__(self, pages: list[list[dict[str, Any]]], error: str | None = None) -> None:
        self.pages, self.error = pages, error
        self.asked: list[dict[str, Any]] = []

    def lookup_events(self, **kwargs: Any) -> dict[str, Any]:
        self.asked.append(kwargs)
        if self.error:
            raise ClientError({"Error": {"Code": self.error, "Message": "no"}}, "LookupEvents")
        n = int(kwargs.get("NextToken") or 0)
        return {"Events": self.pages[n], **({"NextToken": str(n + 1)} if n + 1 < len(self.pages) else {})}


def test_each_space_gets_its_newest_start_matched_on_domain_and_space():
    trail = Trail([
        [event({"domainId": "d-a", "spaceName": "s", "appType": "JupyterLab"}, 3),
         event({"domainId": "d-b", "spaceName": "s"}, 1),
         event({"domainId": "d-a", "userProfileName": "ana", "appType": "Canvas"}, 1)],
        [event({"DomainId": "d-a", "SpaceName": "s"}, 40), event({"domainId": "d-a", "spaceName": "t"}, 60)],
    ])  # fmt: skip
    got = app_starts.read(trail, NOW)
    assert got.unread is None and got.since == NOW - timedelta(days=90)
    assert got.last == {
        ("d-a", "s"): NOW - timedelta(days=3),
        ("d-b", "s"): NOW - timedelta(days=1),
        ("d-a", "t"): NOW - timedelta(days=60),
    }
    # one lookup, paged: EventName only (one attribute), 50 a page, the last 90 days
    assert [a["LookupAttributes"] for a in trail.asked] == [[{"AttributeKey": "EventName", "AttributeValue": "CreateApp"}]] * 2
    assert {a["MaxResults"] for a in trail.asked} == {50} and trail.asked[0]["StartTime"] == NOW - timedelta(days=90)


@pytest.mark.parametrize(
    "bad", [event(None, 1, raw="not json"), event({"spaceName": "s"}, 1), event(None, 1, raw='{"requestParameters": "x"}')]
)
def test_an_unreadable_event_makes_the_whole_read_unknown(bad):
    got = app_starts.read(Trail([[event({"domainId": "d-a", "spaceName": "s"}, 1), bad]]), NOW)
    assert got.since is None and got.last == {} and got.unread == "a CloudTrail CreateApp event could not be read"


@pytest.mark.parametrize("code", ["AccessDeniedException", "ThrottlingException"])
def test_a_refused_or_throttled_lookup_is_unknown_never_idle(code):
    got = app_starts.read(Trail([], error=code), NOW)
    assert got.since is None and got.unread == f"CloudTrail LookupEvents failed ({code})"


def test_a_read_stopped_short_covers_back_to_the_oldest_event_read(monkeypatch):
    monkeypatch.setattr(cloudtrail, "MAX_PAGES", 1)
    got = app_starts.read(
        Trail([[event({"domainId": "d-a", "spaceName": "s"}, 2)], [event({"domainId": "d-a", "spaceName": "t"}, 9)]]), NOW
    )
    assert got.since == NOW - timedelta(days=2) and set(got.last) == {("d-a", "s")}
