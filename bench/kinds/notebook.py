"""Bench seeder: n notebooks, most tagged and reporting activity where the stack's AgentChannel
says (`metric`: MLReaper/NotebookActivity, the default; `logs`: samples in CloudWatch Logs), a few
idle, some without the agent (no data)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import boto3

from reaper_devkit.seed import ACTIVITY_LOG_GROUP, ROLE, aligned

KIND = "notebook"


def seed(session: boto3.session.Session, n: int, now: datetime, agent_channel: str = "metric") -> None:
    sm, cw, logs = session.client("sagemaker"), session.client("cloudwatch"), session.client("logs")
    if agent_channel == "logs":
        logs.create_log_group(logGroupName=ACTIVITY_LOG_GROUP)
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
        if agent_channel != "logs":
            for k in range(13):
                value = 1.0 if (i % 3 == 0 and k < 2) else 0.0
                ts = end - timedelta(minutes=5 * (k + 1)) + timedelta(seconds=5)
                data.append(
                    {
                        "MetricName": "NotebookActivity",
                        "Dimensions": [{"Name": "NotebookInstanceName", "Value": name}],
                        "Timestamp": ts,
                        "Value": value,
                    }
                )
            continue
        # three hours of samples (the window the sweep reads), as the agent sends them: one per 5 minutes
        events = [
            {
                "timestamp": int((end - timedelta(minutes=5 * (k + 1)) + timedelta(seconds=5)).timestamp() * 1000),
                "message": json.dumps({"notebook": name, "active": 1 if (i % 3 == 0 and k < 2) else 0}),
            }
            for k in reversed(range(36))
        ]
        logs.create_log_stream(logGroupName=ACTIVITY_LOG_GROUP, logStreamName=name)
        logs.put_log_events(logGroupName=ACTIVITY_LOG_GROUP, logStreamName=name, logEvents=events)
    for j in range(0, len(data), 1000):
        cw.put_metric_data(Namespace="MLReaper", MetricData=data[j : j + 1000])
