"""Bench seeder: n capacity reservations — 70 % open ODCRs unused for a day, 10 % in use, 10 % committed,
10 % Capacity Blocks — plus 3 Active training plans and 2 training jobs waiting for capacity; one
UsedInstanceCount datapoint per hour for 26 hours each."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import boto3

from reaper_devkit.moto_ext import capacity
from reaper_devkit.seed import put_metric_data_in_process

KIND = "capacity"
TYPES = ("p4d.24xlarge", "p5.48xlarge", "g5.48xlarge")


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    ec2 = session.client("ec2")
    points: list[dict[str, Any]] = []
    for i in range(n):
        case = i % 10
        tags = [{"Key": "ml:owner", "Value": f"user{i % 37}@example.com"}, {"Key": "ml:stage", "Value": "dev"}]
        itype = TYPES[i % len(TYPES)]
        if case == 9:
            cr = capacity.capacity_block(ec2, itype, 2, start=now - timedelta(days=3), end=now + timedelta(days=4))
        else:
            cr = ec2.create_capacity_reservation(
                InstanceType=itype,
                InstancePlatform="Linux/UNIX",
                AvailabilityZone="us-east-1a",
                InstanceCount=2,
                TagSpecifications=[{"ResourceType": "capacity-reservation", "Tags": tags}],
            )["CapacityReservation"]["CapacityReservationId"]
            capacity.backdate(cr, now - timedelta(days=3))
            if case == 8:
                capacity.commit(cr, now + timedelta(days=30))
        used = 1.0 if case == 7 else 0.0
        for h in range(26):
            points.append(
                {
                    "MetricName": "UsedInstanceCount",
                    "Dimensions": [{"Name": "CapacityReservationId", "Value": cr}],
                    "Timestamp": now - timedelta(hours=h, minutes=1),
                    "Value": used,
                }
            )
    for k in range(3):
        capacity.training_plan(
            "us-east-1",
            f"plan-{k}",
            instance_type="ml.p5.48xlarge",
            total=4,
            in_use=k,
            start=now - timedelta(days=1),
            end=now + timedelta(days=6),
            upfront_fee=100_000.0,
        )
    put_metric_data_in_process("AWS/EC2CapacityReservations", points)
