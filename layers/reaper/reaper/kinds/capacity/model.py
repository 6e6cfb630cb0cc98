"""Plain data for the capacity kind: what discovery knows of a reservation or plan, and the evidence read for it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, TypedDict

from reaper.aws.metrics import Series
from reaper.core.timeutil import as_utc

KIND = "capacity"
Source = Literal["odcr", "capacity-block", "training-plan"]

# Capacity Reservations send their metrics every five minutes; the idle window is read a period at a
# time of an hour (Maximum), so any instance in the reservation during the hour shows:
# https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-reservation-cw-metrics.html
NAMESPACE = "AWS/EC2CapacityReservations"
METRIC = "UsedInstanceCount"
PERIOD = timedelta(hours=1)
LAG = timedelta(minutes=10)  # the newest datapoints arrive late: the window ends before them
# Forty minutes before a Capacity Block ends, EC2 warns that its instances terminate in ten minutes:
# https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-monitor.html. The sweep tells
# those running on one ending within the next sweep period too (the schedule is hourly).
BLOCK_ENDING = timedelta(minutes=70)
WAITING = frozenset({"Starting", "Pending"})  # SecondaryStatus of an InProgress job not yet on instances


@dataclass(frozen=True)
class CapacityFacts:
    source: Source
    total: int  # instances reserved
    available: int  # not in use now (AWS's own count)
    zone: str | None = None
    platform: str | None = None
    tenancy: str | None = None
    match_criteria: str | None = None  # "open" or "targeted"
    end_date_type: str | None = None
    ends_at: datetime | None = None
    starts_at: datetime | None = None
    commitment_end: datetime | None = None  # CommitmentInfo.CommitmentEndDate
    fleet_id: str | None = None
    ebs_optimized: bool = False
    upfront_usd: float | None = None  # a training plan's UpfrontFee
    on_demand_hourly_usd: float | None = None  # list price of the reserved instances (a Capacity Block's own price is set when bought)

    @property
    def used(self) -> int:
        return max(self.total - self.available, 0)

    def committed(self, now: datetime) -> bool:
        return self.commitment_end is not None and as_utc(self.commitment_end) > now


@dataclass(frozen=True)
class WaitingJob:
    name: str
    secondary_status: str
    waiting_since: datetime | None


@dataclass(frozen=True)
class CapacitySignal:
    used: Series  # UsedInstanceCount, Maximum per hour (empty for training plans: SageMaker publishes none)
    window_end: datetime
    waiting_jobs: tuple[WaitingJob, ...] = ()  # the account's training jobs waiting for capacity in this region
    running_instances: tuple[tuple[str, str | None], ...] = ()  # (instance id, ml:owner) in a block about to end


class RestoreRecord(TypedDict, total=False):
    """What `reaper restore cr-…` needs to make an equivalent reservation (CreateCapacityReservation)."""

    kind: str
    id: str
    arn: str
    region: str
    spec: dict[str, Any]
    tags: dict[str, str]
    status: str  # cancelled, restored
    restored_as: str
    restored_at: str


def window_end(now: datetime) -> datetime:
    now = as_utc(now) - LAG
    return now.replace(minute=0, second=0, microsecond=0)
