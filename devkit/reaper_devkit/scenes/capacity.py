"""Demo scene: reserved GPU capacity: an unused On-Demand Capacity Reservation without commitment (cancelled),
a committed one and a Capacity Block (only reported: AWS does not let them be cancelled), and a training plan."""

from __future__ import annotations

from datetime import datetime, timedelta

import boto3

from reaper_devkit import seed_capacity
from reaper_devkit.moto_ext import capacity

KIND = "capacity"
OWNER = {"ml:owner": "ana@example.com", "ml:project": "llm", "ml:stage": "dev"}


def seed(session: boto3.session.Session, now: datetime) -> dict[str, str]:
    ec2, cw = session.client("ec2"), session.client("cloudwatch")
    idle = seed_capacity.odcr(ec2, "p4d.24xlarge", 2, OWNER, now=now)
    committed = seed_capacity.odcr(ec2, "p5.48xlarge", 1, OWNER, now=now, committed_until=now + timedelta(days=20))
    block = capacity.capacity_block(ec2, "p5.48xlarge", 2, start=now - timedelta(days=5), end=now + timedelta(days=9), tags=OWNER)
    for cr in (idle, committed, block):
        seed_capacity.used(cw, cr, now)
    return {
        idle: "deleted: cancelled, unused for 24 h with no commitment (`reaper restore` makes a new one like it)",
        committed: "kept: committed, so AWS does not let it be cancelled; its idle hours and dollars are reported",
        block: "kept: a Capacity Block cannot be cancelled; its idle GPU-hours are reported",
    }
