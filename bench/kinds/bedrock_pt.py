"""Bench seeder: n Bedrock Provisioned Throughputs, all InService for 8 days — a third idle without
commitment (an hour of invocations 7.5 days ago, so ListMetrics lists their series), a third committed
(SixMonths), a third busy (one hour of invocations 30 h ago).

The sweep's calls: one ListProvisionedModelThroughputs page per 1,000, one ListTagsForResource per
Provisioned Throughput (Bedrock's own tag call: the Tagging API does not list it), one GetMetricData
per 500, one ListMetrics page per 500 series (which ARNs AWS/Bedrock has a series for).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import boto3

from reaper_devkit import seed_bedrock

KIND = "bedrock-pt"


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    bedrock = session.client("bedrock")
    cw = session.client("cloudwatch")
    created = now - timedelta(days=8)
    for i in range(n):
        tags = {"ml:owner": f"user{i % 37}@example.com", "ml:stage": "dev"}
        case = i % 3
        arn = seed_bedrock.provisioned(
            bedrock,
            f"pt-{i:05d}",
            created,
            commitment="SixMonths" if case == 1 else None,
            expires=now + timedelta(days=90) if case == 1 else None,
            tags=tags,
        )
        if case == 2:
            seed_bedrock.invocations(cw, arn, now - timedelta(hours=30))
        elif case == 0:
            seed_bedrock.seen_before(cw, arn, now)  # its series seen 7.5 days ago: idle, not unknown
