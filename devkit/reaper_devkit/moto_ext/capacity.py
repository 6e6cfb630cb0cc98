"""Reserved capacity as the capacity kind meets it on AWS; moto 5.2.5 has none of it.

What is added (moto's backends and response classes, so in-process and server mode alike):

EC2 On-Demand Capacity Reservations and Capacity Blocks
- CreateCapacityReservation: an `active` reservation (AWS makes an immediate one active at once),
  `ReservationType` `default`, with its tags; `CommitmentDuration` (seconds) gives `CommitmentInfo`.
  https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateCapacityReservation.html
- DescribeCapacityReservations: by id, the documented filters (`state`, `instance-type`, `owner-id`,
  `instance-platform`, `availability-zone`, `tenancy`, `end-date-type`, `instance-match-criteria`, `outpost-arn`,
  `placement-group-arn`; the date filters are not emulated), MaxResults (5..1,000) with NextToken. A filter the
  page does not list (`capacity-reservation-id`, `tag:...`) is refused as EC2 refuses an unknown filter:
  `InvalidParameterValue`, "The filter 'x' is invalid". `AvailableInstanceCount` is `TotalInstanceCount` minus the running
  instances placed in it ("The remaining capacity. Indicates the number of instances that can be
  launched in the Capacity Reservation."). An unknown id: `InvalidCapacityReservationId.NotFound`.
  https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeCapacityReservations.html
  https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CapacityReservation.html
- CancelCapacityReservation, refused where AWS refuses it:
  "You can't modify or cancel a Capacity Block." and an `active` reservation can be cancelled only
  when "there is no commitment duration or the commitment duration has elapsed"
  (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CancelCapacityReservation.html).
  AWS documents the refusals but not their error codes: the kit answers `UnsupportedOperation`
  (a Capacity Block) and `InvalidCapacityReservationState` (committed, or not active/assessing).
  A cancelled reservation stays listed as `cancelled`; running instances go on running.
- DescribeInstances shows `CapacityReservationId` of an instance placed in a reservation and takes
  the `capacity-reservation-id` filter (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeInstances.html).
- CreateTags/DescribeTags/DeleteTags take `cr-` ids (moto's tag store, resource type `capacity-reservation`).
- `capacity_block()`, `place()`, `commit()` seed what no API call makes here (a purchased block, an
  instance running in a reservation, a future-dated reservation's commitment).

SageMaker training plans
- ListTrainingPlans (the `Status` filter, NextToken) and DescribeTrainingPlan, with the plan's
  counts and `UpfrontFee`; `training_plan()` seeds one (CreateTrainingPlan needs an offering).
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ListTrainingPlans.html
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeTrainingPlan.html
- ListTrainingJobs summaries carry `SecondaryStatus` (TrainingJobSummary has it; moto drops it),
  and `set_secondary_status()` makes a job wait for capacity (`Starting`, `Pending`).
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_TrainingJobSummary.html
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from moto.core.responses import ActionResult
from moto.core.utils import utcnow
from moto.ec2 import utils as ec2_utils
from moto.ec2.exceptions import EC2ClientError, FilterNotImplementedError
from moto.ec2.models import ec2_backends
from moto.ec2.responses import EC2Response
from moto.sagemaker import models as sm_models
from moto.sagemaker import responses as sm_responses
from moto.sagemaker.exceptions import ResourceNotFound

ACTIVE = "active"


def _naive(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


@dataclass
class FakeCapacityReservation:
    id: str
    account: str
    region: str
    instance_type: str
    platform: str
    zone: str
    count: int
    tenancy: str = "default"
    match: str = "open"
    end_date_type: str = "unlimited"
    end: datetime | None = None
    start: datetime = field(default_factory=utcnow)
    created: datetime = field(default_factory=utcnow)
    state: str = ACTIVE
    reservation_type: str = "default"
    commitment_end: datetime | None = None
    fleet_id: str | None = None
    ebs_optimized: bool = False

    @property
    def arn(self) -> str:
        return f"arn:aws:ec2:{self.region}:{self.account}:capacity-reservation/{self.id}"

    def used(self, backend: Any) -> int:
        if self.state != ACTIVE:
            return 0
        return sum(
            1
            for r in backend.reservations.values()
            for i in r.instances
            if getattr(i, "capacity_reservation_id", None) == self.id and i.state == "running"
        )

    def describe(self, backend: Any) -> dict[str, Any]:
        used = self.used(backend)
        out: dict[str, Any] = {
            "CapacityReservationId": self.id,
            "OwnerId": self.account,
            "CapacityReservationArn": self.arn,
            "InstanceType": self.instance_type,
            "InstancePlatform": self.platform,
            "AvailabilityZone": self.zone,
            "Tenancy": self.tenancy,
            "TotalInstanceCount": self.count,
            "AvailableInstanceCount": max(self.count - used, 0) if self.state == ACTIVE else 0,
            "EbsOptimized": self.ebs_optimized,
            "State": self.state,
            "StartDate": self.start,
            "EndDateType": self.end_date_type,
            "InstanceMatchCriteria": self.match,
            "CreateDate": self.created,
            "ReservationType": self.reservation_type,
            "Tags": [{"Key": k, "Value": v} for k, v in backend.tags.get(self.id, {}).items()],
        }
        if self.end is not None:
            out["EndDate"] = self.end
        if self.commitment_end is not None:
            out["CommitmentInfo"] = {"CommittedInstanceCount": self.count, "CommitmentEndDate": self.commitment_end}
        if self.fleet_id:
            out["CapacityReservationFleetId"] = self.fleet_id
        return out


def _store(backend: Any) -> dict[str, FakeCapacityReservation]:
    if not hasattr(backend, "_reaper_capacity"):
        backend._reaper_capacity = {}
    found: dict[str, FakeCapacityReservation] = backend._reaper_capacity
    return found


def _new_id() -> str:
    return "cr-" + secrets.token_hex(9)[:17]


def _not_found(cr_id: str) -> EC2ClientError:
    return EC2ClientError("InvalidCapacityReservationId.NotFound", f"The capacity reservation ID '{cr_id}' does not exist")


# -- EC2 responses --------------------------------------------------------------------------------
def create_capacity_reservation(self: Any) -> ActionResult:
    b, p = self.ec2_backend, self._get_param
    count = int(p("InstanceCount") or 0)
    if count < 1:
        raise EC2ClientError("InvalidParameterValue", "InstanceCount must be at least 1")
    duration = p("CommitmentDuration")
    cr = FakeCapacityReservation(
        id=_new_id(),
        account=b.account_id,
        region=b.region_name,
        instance_type=p("InstanceType"),
        platform=p("InstancePlatform"),
        zone=p("AvailabilityZone") or f"{b.region_name}a",
        count=count,
        tenancy=p("Tenancy") or "default",
        match=p("InstanceMatchCriteria") or "open",
        end_date_type=p("EndDateType") or "unlimited",
        end=_naive(p("EndDate")) if isinstance(p("EndDate"), datetime) else None,
        ebs_optimized=bool(p("EbsOptimized")),
    )
    if duration:
        cr.commitment_end = cr.start + timedelta(seconds=int(duration))
    tags = self._parse_tag_specification("capacity-reservation").get("capacity-reservation", {})
    if tags:
        b.create_tags([cr.id], tags)
    _store(b)[cr.id] = cr
    return ActionResult({"CapacityReservation": cr.describe(b)})


def describe_capacity_reservations(self: Any) -> ActionResult:
    b = self.ec2_backend
    ids = self._get_param("CapacityReservationIds", []) or []
    filters = self._filters_from_querystring()
    _check_filters(filters)
    store = _store(b)
    for cr_id in ids:
        if cr_id not in store:
            raise _not_found(cr_id)
    rows = [cr for cr in store.values() if (not ids or cr.id in ids) and _passes(cr, filters)]
    rows.sort(key=lambda c: c.id)
    size = min(max(int(self._get_param("MaxResults") or 1000), 5), 1000)
    start = int(self._get_param("NextToken") or 0)
    page = rows[start : start + size]
    out: dict[str, Any] = {"CapacityReservations": [cr.describe(b) for cr in page]}
    if start + size < len(rows):
        out["NextToken"] = str(start + size)
    return ActionResult(out)


# DescribeCapacityReservations' `Filter.N`, as AWS lists them (botocore's `ec2` model has the same list;
# `availability-zone-id` is on the live page only). No `capacity-reservation-id`, no `reservation-type`, no
# `tag:`: the call names reservations by `CapacityReservationId.N`.
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeCapacityReservations.html
DOCUMENTED_FILTERS = frozenset(
    {
        "instance-type",
        "owner-id",
        "instance-platform",
        "availability-zone",
        "availability-zone-id",
        "tenancy",
        "outpost-arn",
        "state",
        "start-date",
        "end-date",
        "end-date-type",
        "instance-match-criteria",
        "placement-group-arn",
    }
)


def _invalid_filter(name: str) -> EC2ClientError:
    """How EC2 refuses a filter the call does not take: `InvalidParameterValue`, "The filter 'x' is invalid"
    (moto's own DescribeInstanceTypes answers so; AWS's DescribeInstanceStatus was seen to:
    https://github.com/aws/aws-cli/issues/7225). https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html"""
    return EC2ClientError("InvalidParameterValue", f"The filter '{name}' is invalid")


def _check_filters(filters: dict[str, Any]) -> None:
    for name in filters:
        if name not in DOCUMENTED_FILTERS:
            raise _invalid_filter(name)
        if name in ("start-date", "end-date", "availability-zone-id"):
            raise FilterNotImplementedError(name, "DescribeCapacityReservations")


def _passes(cr: FakeCapacityReservation, filters: dict[str, Any]) -> bool:
    fields: dict[str, str | None] = {
        "state": cr.state,
        "instance-type": cr.instance_type,
        "owner-id": cr.account,
        "instance-platform": cr.platform,
        "availability-zone": cr.zone,
        "tenancy": cr.tenancy,
        "end-date-type": cr.end_date_type,
        "instance-match-criteria": cr.match,
        "outpost-arn": None,  # the kit makes no reservation on an Outpost
        "placement-group-arn": None,  # nor in a placement group
    }
    return all(fields[name] in values for name, values in filters.items())


def cancel_capacity_reservation(self: Any) -> ActionResult:
    b = self.ec2_backend
    cr_id = self._get_param("CapacityReservationId")
    cr = _store(b).get(cr_id)
    if cr is None:
        raise _not_found(cr_id)
    if cr.reservation_type == "capacity-block":
        raise EC2ClientError("UnsupportedOperation", f"{cr_id} is a Capacity Block: you can't modify or cancel a Capacity Block")
    if cr.state not in (ACTIVE, "assessing"):
        raise EC2ClientError("InvalidCapacityReservationState", f"{cr_id} is {cr.state}: it cannot be cancelled")
    if cr.commitment_end is not None and utcnow() < _naive(cr.commitment_end):
        raise EC2ClientError(
            "InvalidCapacityReservationState", f"{cr_id} is within its commitment duration (until {cr.commitment_end.isoformat()})"
        )
    cr.state = "cancelled"
    return ActionResult({"Return": True})


# -- SageMaker training plans ---------------------------------------------------------------------
@dataclass
class FakeTrainingPlan:
    arn: str
    name: str
    instance_type: str
    total: int
    in_use: int
    start: datetime
    end: datetime
    upfront_fee: str
    status: str = "Active"
    zone: str = "us-east-1a"
    targets: tuple[str, ...] = ("training-job",)

    def describe(self) -> dict[str, Any]:
        hours = int((self.end - self.start).total_seconds() // 3600)
        return {
            "TrainingPlanArn": self.arn,
            "TrainingPlanName": self.name,
            "Status": self.status,
            "DurationHours": hours,
            "DurationMinutes": 0,
            "StartTime": self.start,
            "EndTime": self.end,
            "UpfrontFee": self.upfront_fee,
            "CurrencyCode": "USD",
            "TotalInstanceCount": self.total,
            "AvailableInstanceCount": max(self.total - self.in_use, 0) if self.status == "Active" else 0,
            "InUseInstanceCount": self.in_use if self.status == "Active" else 0,
            "TargetResources": list(self.targets),
            "ReservedCapacitySummaries": [
                {
                    "ReservedCapacityArn": self.arn.replace(":training-plan/", ":reserved-capacity/"),
                    "InstanceType": self.instance_type,
                    "TotalInstanceCount": self.total,
                    "Status": self.status,
                    "AvailabilityZone": self.zone,
                    "DurationHours": hours,
                    "DurationMinutes": 0,
                    "StartTime": self.start,
                    "EndTime": self.end,
                }
            ],
        }


def _plans(backend: Any) -> dict[str, FakeTrainingPlan]:
    if not hasattr(backend, "_reaper_training_plans"):
        backend._reaper_training_plans = {}
    found: dict[str, FakeTrainingPlan] = backend._reaper_training_plans
    return found


def list_training_plans(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    wanted = {f["Value"] for f in p("Filters") or [] if f.get("Name") == "Status"}
    rows = sorted((pl for pl in _plans(b).values() if not wanted or pl.status in wanted), key=lambda pl: pl.name)
    size = int(p("MaxResults") or 100)
    start = int(p("NextToken") or 0)
    out: dict[str, Any] = {"TrainingPlanSummaries": [pl.describe() for pl in rows[start : start + size]]}
    if start + size < len(rows):
        out["NextToken"] = str(start + size)
    return ActionResult(out)


def describe_training_plan(self: Any) -> ActionResult:
    name = self._get_param("TrainingPlanName")
    plan = _plans(self.sagemaker_backend).get(name)
    if plan is None:
        raise ResourceNotFound(message=f"Training plan {name} does not exist.")
    return ActionResult(plan.describe())


def _patch_sagemaker() -> None:
    backend = sm_models.SageMakerModelBackend
    if getattr(backend, "_reaper_capacity", False):
        return
    original_list = backend.list_training_jobs
    original_get = backend._get_resource_from_arn

    def list_training_jobs(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = original_list(self, *args, **kwargs)
        for row in out.get("TrainingJobSummaries", []):
            job = self.training_jobs.get(row["TrainingJobName"])
            if job is not None and getattr(job, "secondary_status", None):
                row["SecondaryStatus"] = job.secondary_status
        return out

    def _get_resource_from_arn(self: Any, arn: str) -> Any:
        if ":training-plan/" in arn:
            plan = _plans(self).get(arn.rsplit("/", 1)[-1])
            if plan is None:
                raise ResourceNotFound(message=f"Could not find resource {arn}")
            return _TagHolder.of(self, arn)
        return original_get(self, arn)

    backend.list_training_jobs = list_training_jobs  # type: ignore[method-assign]
    backend._get_resource_from_arn = _get_resource_from_arn  # type: ignore[method-assign]
    backend._reaper_capacity = True  # type: ignore[attr-defined]


class _TagHolder:
    """The tags of a training plan, where moto's AddTags/ListTags/DeleteTags look for them."""

    def __init__(self) -> None:
        self.tags: list[dict[str, str]] = []

    @classmethod
    def of(cls, backend: Any, arn: str) -> _TagHolder:
        if not hasattr(backend, "_reaper_plan_tags"):
            backend._reaper_plan_tags = {}
        holders: dict[str, _TagHolder] = backend._reaper_plan_tags
        return holders.setdefault(arn, cls())


# -- test support ---------------------------------------------------------------------------------
def _ec2_backends() -> Iterator[Any]:
    for account in list(ec2_backends):
        for region in list(ec2_backends[account]):
            yield ec2_backends[account][region]


def reservation(cr_id: str) -> FakeCapacityReservation:
    for b in _ec2_backends():
        if hasattr(b, "_reaper_capacity") and cr_id in b._reaper_capacity:
            found: FakeCapacityReservation = b._reaper_capacity[cr_id]
            return found
    raise KeyError(f"no capacity reservation {cr_id}")


def commit(cr_id: str, until: datetime, *, created: datetime | None = None) -> None:
    """A future-dated reservation's commitment: it cannot be cancelled before `until`."""
    cr = reservation(cr_id)
    cr.commitment_end = _naive(until)
    if created is not None:
        cr.created = cr.start = _naive(created)


def backdate(cr_id: str, created: datetime) -> None:
    cr = reservation(cr_id)
    cr.created = cr.start = _naive(created)


def capacity_block(
    ec2: Any,
    instance_type: str,
    count: int,
    *,
    start: datetime,
    end: datetime,
    zone: str = "us-east-1a",
    tags: dict[str, str] | None = None,
) -> str:
    """A purchased Capacity Block (PurchaseCapacityBlock needs an offering): `capacity-block`, targeted, limited."""
    made = ec2.create_capacity_reservation(
        InstanceType=instance_type,
        InstancePlatform="Linux/UNIX",
        AvailabilityZone=zone,
        InstanceCount=count,
        InstanceMatchCriteria="targeted",
        EndDateType="limited",
        EndDate=end,
        TagSpecifications=[{"ResourceType": "capacity-reservation", "Tags": [{"Key": k, "Value": v} for k, v in (tags or {}).items()]}]
        if tags
        else [],
    )
    cr_id = str(made["CapacityReservation"]["CapacityReservationId"])
    cr = reservation(cr_id)
    cr.reservation_type = "capacity-block"
    cr.created = cr.start = _naive(start)
    return cr_id


def place(instance_id: str, cr_id: str) -> None:
    """Run this instance in that reservation (RunInstances' CapacityReservationSpecification in moto is ignored)."""
    from reaper_devkit.moto_ext.ec2 import _instance

    _instance(instance_id).capacity_reservation_id = cr_id


def training_plan(
    region: str,
    name: str,
    *,
    instance_type: str,
    total: int,
    in_use: int,
    start: datetime,
    end: datetime,
    upfront_fee: float,
    tags: dict[str, str] | None = None,
    account: str = "123456789012",
) -> str:
    backend = sm_models.sagemaker_backends[account][region]
    arn = f"arn:aws:sagemaker:{region}:{account}:training-plan/{name}"
    _plans(backend)[name] = FakeTrainingPlan(arn, name, instance_type, total, in_use, _naive(start), _naive(end), f"{upfront_fee:.2f}")
    _TagHolder.of(backend, arn).tags = [{"Key": k, "Value": v} for k, v in (tags or {}).items()]
    return arn


def set_secondary_status(region: str, job_name: str, secondary: str, account: str = "123456789012") -> None:
    sm_models.sagemaker_backends[account][region].training_jobs[job_name].secondary_status = secondary


def apply() -> None:
    if getattr(EC2Response, "describe_capacity_reservations", None) is describe_capacity_reservations:
        return
    for fn in (create_capacity_reservation, describe_capacity_reservations, cancel_capacity_reservation):
        setattr(EC2Response, fn.__name__, fn)
    for fn in (list_training_plans, describe_training_plan):
        setattr(sm_responses.SageMakerResponse, fn.__name__, fn)
    ec2_utils.EC2_RESOURCE_TO_PREFIX.setdefault("capacity-reservation", "cr")
    ec2_utils.EC2_PREFIX_TO_RESOURCE.setdefault("cr", "capacity-reservation")
    ec2_utils.filter_dict_attribute_mapping.setdefault("capacity-reservation-id", "capacity_reservation_id")
    _patch_sagemaker()
