"""Typed facts, signal and restore record of a Provisioned Throughput."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypedDict

from reaper.aws.metrics import Series

KIND = "bedrock-pt"
NAMESPACE = "AWS/Bedrock"
METRIC = "Invocations"
DIMENSION = "ModelId"
PERIOD_SECONDS = 3600  # 168 hourly points for 7 days: 500 queries stay under GetMetricData's 100,800 datapoints
RENEWAL_NOTICE = timedelta(days=7)  # warned at least this long before a commitment term ends
NOT_IN_SERVICE_NOTE = "no data is not idleness"
NEVER_SEEN = "bedrock-series-never-seen"  # reaper.core.coverage: the unknown code of a PT whose series was never listed


@dataclass(frozen=True)
class PtFacts:
    name: str
    model_arn: str  # the base or custom model it serves
    foundation_model_arn: str
    model_units: int
    desired_model_units: int
    commitment: str | None  # "OneMonth", "SixMonths", or None (no commitment)
    commitment_expires: datetime | None
    created_at: datetime
    last_modified: datetime  # a change (units, model) restarts the evidence window
    unit_hourly_usd: float  # the price per model unit-hour used for the estimate


@dataclass(frozen=True)
class PtSignal:
    invocations: Series  # Sum per hour, oldest first; hours without requests are absent
    # ListMetrics listed an AWS/Bedrock Invocations series with ModelId = its ARN. AWS does not document
    # which ModelId a Provisioned Throughput's traffic carries: until its own series is seen, no data
    # is unknown, never idle (docs/kinds/bedrock-pt.md, docs/aws-assumptions.md)
    series_seen: bool = False

    @property
    def seen(self) -> bool:
        """Its series exists: listed, or a datapoint read."""
        return self.series_seen or bool(self.invocations)


class RestoreRecord(TypedDict, total=False):
    kind: str
    name: str
    arn: str
    region: str
    account: str
    owner: str | None
    model_arn: str
    foundation_model_arn: str
    model_units: int
    commitment: None
    tags: dict[str, str]
    hourly_usd: float | None
    reason: str
    reaped_at: str
    event_id: str
    status: str  # "reaped", then "restored"
    restored_as: str
    restored_at: str
