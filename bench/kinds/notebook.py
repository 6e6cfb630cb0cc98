"""Bench seeder: n notebooks, most tagged and reporting activity, a few idle, some with gaps."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import boto3

from reaper_devkit.seed import ROLE, aligned

KIND = "notebook"


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    sm, cw = session.client("sagemaker"), session.client("cloudwatch")
    end = aligned(now)
    data: list[dict[str, Any]] = []
    for i in range(n):
        name = f"bench-nb-{i:05d}"
        kwargs: dict[str, Any] = {"NotebookInstanceName": name, "InstanceType": "ml.t3.medium", "RoleArn": ROLE}
        if i % 10:
            kwargs["LifecycleConfigName"] = "mlreaper-activity-agent"
        if i % 5:
            kwargs["Tags"] = [{"Key": "ml:owner", "Value": f"user{i % 37}@example.com"}, {"Key": "ml:stage", "Value": "dev"}]
        sm.create_notebook_instance(**kwargs)
        if i % 10 == 0:
            continue  # no agent, no data
        for k in range(13):
            value = 1.0 if (i % 3 == 0 and k < 2) else 0.0
            ts = end - timedelta(minutes=5 * (k + 1)) + timedelta(seconds=5)
            data.append({"MetricName": "NotebookActivity", "Dimensions": [{"Name": "NotebookInstanceName", "Value": name}], "Timestamp": ts, "Value": value})
    for j in range(0, len(data), 1000):
        cw.put_metric_data(Namespace="MLReaper", MetricData=data[j : j + 1000])
