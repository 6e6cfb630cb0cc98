"""Seeding reserved capacity: ODCRs, Capacity Blocks, training plans and their UsedInstanceCount metrics,
shared by the tests and the benchmark."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reaper_devkit.moto_ext import capacity
from reaper_devkit.seed import put_series

NAMESPACE = "AWS/EC2CapacityReservations"


def odcr(
    ec2: Any,
    instance_type: str = "p4d.24xlarge",
    count: int = 2,
    tags: dict[str, str] | None = None,
    *,
    now: datetime,
    created_ago: timedelta = timedelta(days=3),
    committed_until: datetime | None = None,
    match: str = "open",
) -> str:
    """An active On-Demand Capacity Reservation made `created_ago` before `now`."""
    kwargs: dict[str, Any] = {
        "InstanceType": instance_type,
        "InstancePlatform": "Linux/UNIX",
        "AvailabilityZone": "us-east-1a",
        "InstanceCount": count,
        "InstanceMatchCriteria": match,
    }
    if tags:
        kwargs["TagSpecifications"] = [{"ResourceType": "capacity-reservation", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]
    cr_id = str(ec2.create_capacity_reservation(**kwargs)["CapacityReservation"]["CapacityReservationId"])
    capacity.backdate(cr_id, now - created_ago)
    if committed_until is not None:
        capacity.commit(cr_id, committed_until)
    return cr_id


def used(cloudwatch: Any, cr_id: str, now: datetime, values: list[float] | None = None, hours: int = 48) -> None:
    """UsedInstanceCount every 5 minutes for `hours` before `now` (`values` newest first, hourly; default 0)."""
    start = now.replace(second=0, microsecond=0) - timedelta(minutes=now.minute % 5)
    points = []
    for k in range(hours * 12):
        hour = k // 12
        value = values[hour] if values and hour < len(values) else 0.0
        points.append((start - timedelta(minutes=5 * k), value))
    put_series(cloudwatch, NAMESPACE, "UsedInstanceCount", {"CapacityReservationId": cr_id}, points)
