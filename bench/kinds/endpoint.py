"""Bench seeder: n endpoints, most tagged and with traffic; some idle, some young; a few with
inference components or asynchronous, so every read path of the sweep is exercised."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import boto3

from reaper_devkit import seed_endpoint as se
from reaper_devkit.seed import aligned

KIND = "endpoint"


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    sm, cw = session.client("sagemaker"), session.client("cloudwatch")
    end = aligned(now)
    data: list[dict[str, Any]] = []
    for i in range(n):
        name = f"bench-ep-{i:05d}"
        tags = {"ml:owner": f"user{i % 37}@example.com", "ml:stage": "prod" if i % 10 == 9 else "dev"} if i % 10 != 8 else {}
        if i % 20 == 5:
            se.components(sm, name, {f"{name}-ic": 1}, tags)
            dims = [{"Name": "InferenceComponentName", "Value": f"{name}-ic"}]
        elif i % 20 == 15:
            se.asynchronous(sm, name, tags)
            dims = []  # async endpoints publish no Invocations
        else:
            se.classic(sm, name, tags, instance_type="ml.g4dn.xlarge" if i % 2 else "ml.m5.large")
            dims = [{"Name": "EndpointName", "Value": name}, {"Name": "VariantName", "Value": "AllTraffic"}]
        se.age(name, now, 30 if i % 10 == 7 else 300)  # one in ten is young
        if dims and i % 10 < 6:  # six in ten have traffic in the window; one in ten is an idle dev endpoint
            for k in range(3):
                data.append(
                    {
                        "MetricName": "Invocations",
                        "Dimensions": dims,
                        "Timestamp": end - timedelta(minutes=5 * (k + 1) - 1),
                        "Value": float(k + 1),
                    }
                )
    for j in range(0, len(data), 1000):
        cw.put_metric_data(Namespace="AWS/SageMaker", MetricData=data[j : j + 1000])
