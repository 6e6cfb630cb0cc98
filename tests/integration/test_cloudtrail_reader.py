"""The one CloudTrail reader (reaper/aws/cloudtrail.py) against the kit's LookupEvents (moto_ext/cloudtrail_lookup):
50 events a page, newest first, one EventName attribute, never before the 90 days LookupEvents keeps, no page more
than the caller reads, a page limit that says the read stopped short, a refused lookup unreadable; and both kinds
that read CloudTrail (the MLflow UI opens, the Studio spaces' app starts) read it through it, page for page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reaper.aws import cloudtrail
from reaper.kinds.mlflow import ui_opens
from reaper.kinds.storage import app_starts
from reaper_devkit.moto_ext import cloudtrail_lookup

NOW = datetime.now(UTC).replace(microsecond=0)
OPEN = "CreatePresignedMlflowTrackingServerUrl"


def opened(count: int, server: str = "ts-1") -> None:
    for n in range(count):
        cloudtrail_lookup.record(OPEN, {"trackingServerName": server}, NOW - timedelta(minutes=n + 1))


def test_the_whole_window_is_read_50_a_page_newest_first_and_said_whole(aws):
    # Given 120 UI opens, and another event name the lookup must not return
    opened(120)
    cloudtrail_lookup.record("CreateApp", {"domainId": "d-1", "spaceName": "s"}, NOW - timedelta(minutes=1))
    before = len(cloudtrail_lookup.calls)
    # When the reader reads them all
    lookup = cloudtrail.Lookup(aws.client("cloudtrail"), OPEN, NOW - timedelta(days=1), NOW)
    events = list(lookup)
    # Then three pages of 50 on the one attribute, newest first, and the read says it is whole
    asked = cloudtrail_lookup.calls[before:]
    assert len(asked) == 3 and {a["MaxResults"] for a in asked} == {cloudtrail.PAGE} == {50}
    assert all(a["LookupAttributes"] == [{"AttributeKey": "EventName", "AttributeValue": OPEN}] for a in asked)
    times = [e["EventTime"] for e in events]
    assert len(events) == 120 and times == sorted(times, reverse=True) and lookup.whole


def test_a_caller_that_stops_early_asks_for_no_more_pages(aws):
    opened(120)
    before = len(cloudtrail_lookup.calls)
    lookup = cloudtrail.Lookup(aws.client("cloudtrail"), OPEN, NOW - timedelta(days=1), NOW)
    for n, _event in enumerate(lookup):
        if n == 10:
            break
    assert len(cloudtrail_lookup.calls) - before == 1 and not lookup.whole


def test_the_page_limit_stops_the_read_and_says_it_is_not_whole(aws, monkeypatch):
    monkeypatch.setattr(cloudtrail, "MAX_PAGES", 2)
    opened(120)
    lookup = cloudtrail.Lookup(aws.client("cloudtrail"), OPEN, NOW - timedelta(days=1), NOW)
    assert len(list(lookup)) == 100 and not lookup.whole


def test_the_window_never_reaches_past_the_90_days_lookupevents_keeps(aws):
    before = len(cloudtrail_lookup.calls)
    lookup = cloudtrail.Lookup(aws.client("cloudtrail"), OPEN, NOW - timedelta(days=200), NOW)
    assert list(lookup) == [] and lookup.whole and lookup.start == NOW - timedelta(days=90)
    asked = cloudtrail_lookup.calls[before:]
    assert [datetime.fromtimestamp(float(a["StartTime"]), UTC) for a in asked] == [NOW - timedelta(days=90)]


def test_a_refused_lookup_is_unreadable_never_empty(aws, monkeypatch):
    # Given LookupEvents denied to the account (an SCP)
    monkeypatch.setattr(cloudtrail_lookup, "refused", {"123456789012"})
    lookup = cloudtrail.Lookup(aws.client("cloudtrail"), OPEN, NOW - timedelta(days=1), NOW)
    with pytest.raises(cloudtrail.TrailUnreadable, match=r"^CloudTrail LookupEvents failed \(AccessDeniedException\)$"):
        list(lookup)


@pytest.mark.parametrize("record", ["", "not json", '{"requestParameters": "x"}', "[1]", '{"eventName": "CreateApp"}'])
def test_a_record_without_readable_request_parameters_has_none(record):
    assert cloudtrail.request_parameters({"CloudTrailEvent": record}) is None


def test_both_kinds_read_cloudtrail_through_the_one_reader_and_its_page_limit(aws, monkeypatch):
    # Given 60 UI opens and 60 Studio app starts, and the one reader cut to one page
    monkeypatch.setattr(cloudtrail, "MAX_PAGES", 1)
    opened(60)
    for n in range(60):
        cloudtrail_lookup.record("CreateApp", {"domainId": "d-1", "spaceName": f"s-{n}"}, NOW - timedelta(hours=n + 1))
    trail = aws.client("cloudtrail")
    before = len(cloudtrail_lookup.calls)
    # When each kind reads its events
    found, whole = ui_opens.opens(trail, ["ts-1"], NOW - timedelta(days=1), NOW)
    starts = app_starts.read(trail, NOW)
    # Then each asked for one page of 50 and says it stopped short: the opens not whole, the starts back to the 50th
    assert len(cloudtrail_lookup.calls) - before == 2
    assert len(found["ts-1"]) == 50 and not whole
    assert len(starts.last) == 50 and starts.since == NOW - timedelta(hours=50) and starts.unread is None
