"""Every active reservation and training plan in the region, with its tags.

DescribeCapacityReservations returns up to 1,000 reservations a page, tags included; training plans
(a handful per account) are listed with the `Status = Active` filter and their tags read one ListTags
each. Prices: a reservation's instances at the On-Demand list price (what an ODCR bills, used or not);
a training plan's UpfrontFee spread over its duration. Reservations an event names are read by
`CapacityReservationIds` (with the `state` filter), and one that has vanished leaves the others known.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from datetime import datetime
from typing import Any, TypedDict

from botocore.exceptions import ClientError

from reaper.aws import pricing
from reaper.aws.clients import Clients
from reaper.aws.faults import error_code
from reaper.aws.pricing import Pricer
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.capacity.model import KIND, CapacityFacts, Source

NAMED_CR = re.compile(r"(?:^|:capacity-reservation/)(cr-[0-9a-f]{8,17})$")  # an id, or a reservation's ARN
UNKNOWN_ID = "InvalidCapacityReservationId"  # .NotFound (and .Malformed): the whole call is refused


def discover(clients: Clients, settings: Settings, now: datetime, only: Collection[str] | None = None) -> list[Resource]:
    """`only` (ids or ARNs): the reservations named, and the training plans only when a name is not a reservation's."""
    found = [to_resource(clients.region, cr, clients.pricer) for cr in reservations(clients, only)]
    if only is None or any(NAMED_CR.search(name) is None for name in only):
        found += [plan_resource(clients, plan) for plan in active_plans(clients) if only is None or plan["TrainingPlanName"] in only]
    return found


class Tag(TypedDict, total=False):
    Key: str
    Value: str


class CommitmentInfo(TypedDict, total=False):
    CommitmentEndDate: datetime


class CapacityReservation(TypedDict, total=False):
    """The fields read of DescribeCapacityReservations' CapacityReservation
    (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CapacityReservation.html)."""

    CapacityReservationId: str
    CapacityReservationArn: str
    CapacityReservationFleetId: str
    ReservationType: str  # "default" | "capacity-block"
    InstanceType: str
    InstancePlatform: str
    AvailabilityZone: str
    Tenancy: str
    TotalInstanceCount: int
    AvailableInstanceCount: int
    EbsOptimized: bool
    State: str
    StartDate: datetime
    EndDate: datetime
    EndDateType: str
    InstanceMatchCriteria: str
    CreateDate: datetime
    Tags: list[Tag]
    CommitmentInfo: CommitmentInfo


class ReservedCapacitySummary(TypedDict, total=False):
    InstanceType: str
    AvailabilityZone: str


class TrainingPlanSummary(TypedDict, total=False):
    """The fields read of ListTrainingPlans' TrainingPlanSummary
    (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_TrainingPlanSummary.html)."""

    TrainingPlanArn: str
    TrainingPlanName: str
    Status: str
    DurationHours: int
    DurationMinutes: int
    UpfrontFee: str  # a decimal, as a string
    CurrencyCode: str
    TotalInstanceCount: int
    AvailableInstanceCount: int
    StartTime: datetime
    EndTime: datetime
    ReservedCapacitySummaries: list[ReservedCapacitySummary]


class Filter(TypedDict):
    Name: str
    Values: list[str]


def reservations(clients: Clients, only: Collection[str] | None = None) -> list[CapacityReservation]:
    """Every active reservation; with `only`, the active ones it names (by id or ARN), read by the documented
    `CapacityReservationIds` parameter: the call has no `capacity-reservation-id` filter (docs/aws-assumptions.md,
    GB-2 and KF-1). A name that is no reservation's (a training plan's) is not asked for."""
    if only is None:
        return _pages(clients, None)
    ids = sorted({m.group(1) for name in only if (m := NAMED_CR.search(name))})
    return _named(clients, ids) if ids else []


def _named(clients: Clients, ids: list[str]) -> list[CapacityReservation]:
    """One id EC2 no longer knows fails the whole call (`InvalidCapacityReservationId.NotFound`), so the region's
    active reservations are then read (what a sweep reads: one call per 1,000) and those named kept; a vanished
    one is not among them (gone), the others stay known (docs/safety.md, kitfix35)."""
    try:
        return _pages(clients, ids)
    except ClientError as exc:
        if not error_code(exc).startswith(UNKNOWN_ID):
            raise
    wanted = set(ids)
    return [cr for cr in _pages(clients, None) if cr.get("CapacityReservationId") in wanted]


def _pages(clients: Clients, ids: list[str] | None) -> list[CapacityReservation]:
    paginator = clients("ec2").get_paginator("describe_capacity_reservations")
    filters: list[Filter] = [{"Name": "state", "Values": ["active"]}]
    named: dict[str, Any] = {} if ids is None else {"CapacityReservationIds": ids}
    out: list[CapacityReservation] = []
    for page in paginator.paginate(Filters=filters, **named, PaginationConfig={"PageSize": 1000}):
        out.extend(page.get("CapacityReservations", []))
    return out


def active_plans(clients: Clients) -> list[TrainingPlanSummary]:
    sm = clients("sagemaker")
    out: list[TrainingPlanSummary] = []
    token: str | None = None
    while True:
        page = sm.list_training_plans(
            Filters=[{"Name": "Status", "Value": "Active"}], MaxResults=100, **({"NextToken": token} if token else {})
        )
        out.extend(page.get("TrainingPlanSummaries", []))
        token = page.get("NextToken")
        if not token:
            return out


def source_of(cr: CapacityReservation) -> Source:
    return "capacity-block" if cr.get("ReservationType") == "capacity-block" else "odcr"


def _utc(value: Any) -> datetime | None:
    return as_utc(value) if isinstance(value, datetime) else None


def to_resource(region: str, cr: CapacityReservation, pricer: Pricer) -> Resource:
    itype = str(cr.get("InstanceType") or "")
    total = int(cr.get("TotalInstanceCount") or 0)
    commitment = cr.get("CommitmentInfo") or {}
    source = source_of(cr)
    on_demand = pricer.hourly(pricing.EC2, region, itype, total)
    return Resource(
        kind=KIND,
        id=str(cr["CapacityReservationId"]),
        arn=str(cr.get("CapacityReservationArn") or ""),
        region=region,
        state=str(cr.get("State", "unknown")),
        tags={t["Key"]: t.get("Value", "") for t in cr.get("Tags", [])},
        instance_type=itype,
        instance_count=total,
        # an ODCR bills at the On-Demand rate whether used or not; a Capacity Block's price was set when bought
        price=on_demand if source == "odcr" else None,
        created_at=_utc(cr.get("CreateDate")),
        changed_at=_utc(cr.get("StartDate")),
        facts=CapacityFacts(
            source=source,
            total=total,
            available=int(cr.get("AvailableInstanceCount") or 0),
            zone=cr.get("AvailabilityZone"),
            platform=cr.get("InstancePlatform"),
            tenancy=cr.get("Tenancy"),
            match_criteria=cr.get("InstanceMatchCriteria"),
            end_date_type=cr.get("EndDateType"),
            ends_at=_utc(cr.get("EndDate")),
            starts_at=_utc(cr.get("StartDate")),
            commitment_end=_utc(commitment.get("CommitmentEndDate")),
            fleet_id=cr.get("CapacityReservationFleetId"),
            ebs_optimized=bool(cr.get("EbsOptimized")),
            on_demand_hourly_usd=None if on_demand is None else on_demand.usd,
        ),
    )


def plan_resource(clients: Clients, plan: TrainingPlanSummary) -> Resource:
    arn = str(plan["TrainingPlanArn"])
    tags = {t["Key"]: t.get("Value", "") for t in clients("sagemaker").list_tags(ResourceArn=arn).get("Tags", [])}
    hours = float(plan.get("DurationHours") or 0) + float(plan.get("DurationMinutes") or 0) / 60
    fee = _fee(plan.get("UpfrontFee"))
    summaries = plan.get("ReservedCapacitySummaries") or [{}]
    itype = summaries[0].get("InstanceType")
    return Resource(
        kind=KIND,
        id=str(plan["TrainingPlanName"]),
        arn=arn,
        region=clients.region,
        state=str(plan.get("Status", "unknown")).lower(),
        tags=tags,
        instance_type=itype,
        instance_count=int(plan.get("TotalInstanceCount") or 0),
        hourly_usd=round(fee / hours, 4) if fee is not None and hours > 0 and plan.get("CurrencyCode", "USD") == "USD" else None,
        created_at=_utc(plan.get("StartTime")),
        changed_at=_utc(plan.get("StartTime")),
        facts=CapacityFacts(
            source="training-plan",
            total=int(plan.get("TotalInstanceCount") or 0),
            available=int(plan.get("AvailableInstanceCount") or 0),
            zone=summaries[0].get("AvailabilityZone"),
            ends_at=_utc(plan.get("EndTime")),
            starts_at=_utc(plan.get("StartTime")),
            upfront_usd=fee,
        ),
    )


def _fee(value: Any) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None
