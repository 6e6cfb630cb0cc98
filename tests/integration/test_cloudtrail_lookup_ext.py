"""The kit's CloudTrail LookupEvents (moto_ext/cloudtrail_lookup), held to the API reference: one lookup attribute,
StartTime not after EndTime, a token it gave, newest first, paginated, the last 90 days only (MaxResults 1-50:
botocore's model holds a client to it; the kit refuses it on the wire too)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from botocore.exceptions import ClientError

from reaper_devkit.moto_ext import cloudtrail_lookup

EVENT = "CreatePresignedMlflowTrackingServerUrl"


def test_lookup_pages_newest_first_within_the_window(aws):
    ct = aws.client("cloudtrail")
    now = datetime.now(UTC)
    for hours in (1, 2, 3):
        cloudtrail_lookup.record(EVENT, {"trackingServerName": f"ts-{hours}"}, now - timedelta(hours=hours))
    cloudtrail_lookup.record(EVENT, {"trackingServerName": "too-old"}, now - timedelta(days=91))
    cloudtrail_lookup.record("StopMlflowTrackingServer", {"trackingServerName": "ts-1"}, now)
    attrs = [{"AttributeKey": "EventName", "AttributeValue": EVENT}]
    first = ct.lookup_events(LookupAttributes=attrs, MaxResults=2)
    assert [e["EventTime"] for e in first["Events"]] == sorted((e["EventTime"] for e in first["Events"]), reverse=True)
    rest = ct.lookup_events(LookupAttributes=attrs, MaxResults=2, NextToken=first["NextToken"])
    assert len(first["Events"]) + len(rest["Events"]) == 3 and "NextToken" not in rest
    assert all(e["EventName"] == EVENT for e in first["Events"] + rest["Events"])


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        (
            {
                "LookupAttributes": [
                    {"AttributeKey": "EventName", "AttributeValue": EVENT},
                    {"AttributeKey": "Username", "AttributeValue": "a"},
                ]
            },
            "InvalidLookupAttributesException",
        ),
        ({"StartTime": datetime(2026, 12, 5, tzinfo=UTC), "EndTime": datetime(2026, 12, 4, tzinfo=UTC)}, "InvalidTimeRangeException"),
        ({"NextToken": "not-ours"}, "InvalidNextTokenException"),
    ],
)
def test_lookup_refuses_what_the_reference_refuses(aws, kwargs, code):
    with pytest.raises(ClientError) as refused:
        aws.client("cloudtrail").lookup_events(**kwargs)
    assert refused.value.response["Error"]["Code"] == code
