"""Demo scene: Bedrock Provisioned Throughput: an idle one without commitment (deleted, restorable in one
command), an idle committed one (only reported, and warned before it renews) and a busy one."""

from __future__ import annotations

from datetime import datetime, timedelta

import boto3

from reaper_devkit import seed_bedrock

KIND = "bedrock-pt"
OWNER = {"ml:owner": "ana@example.com", "ml:project": "chat", "ml:stage": "dev"}


def seed(session: boto3.session.Session, now: datetime) -> dict[str, str]:
    bedrock, cw = session.client("bedrock"), session.client("cloudwatch")
    old = now - timedelta(days=8)
    idle = seed_bedrock.provisioned(bedrock, "pt-demo-idle", old, units=1, tags=OWNER)
    seed_bedrock.seen_before(cw, idle, now)  # its series was seen, 7.5 days ago: quiet since, so idle
    seed_bedrock.provisioned(bedrock, "pt-demo-committed", old, commitment="OneMonth", expires=now + timedelta(days=5), tags=OWNER)
    busy = seed_bedrock.provisioned(bedrock, "pt-demo-busy", old, tags=OWNER)
    seed_bedrock.invocations(cw, busy, now - timedelta(hours=3))
    return {
        "pt-demo-idle": "deleted: 0 invocations in 7 days, no commitment (`reaper restore pt-demo-idle` recreates it)",
        "pt-demo-committed": "kept: committed until its term ends; its owner is told before it renews",
        "pt-demo-busy": "kept: invoked 3 hours ago",
    }
