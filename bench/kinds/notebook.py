"""Bench seeder: n notebooks, most tagged and sending activity samples to CloudWatch Logs (the
agent's channel), a few idle, some without the agent (no data)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import boto3

from reaper_devkit.seed import ACTIVITY_LOG_GROUP, ROLE, aligned

KIND = "notebook"


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    sm, logs = session.client("sagemaker"), session.client("logs")
    logs.create_log_group(logGroupName=ACTIVITY_LOG_GROUP)
    end = aligned(now)
    for i in range(n):
        name = f"bench-nb-{i:05d}"
        kwargs: dict[str, object] = {"NotebookInstanceName": name, "InstanceType": "ml.t3.medium", "RoleArn": ROLE}
        if i % 10:
            kwargs["LifecycleConfigName"] = "mlreaper-activity-agent"
        if i % 5:
            kwargs["Tags"] = [{"Key": "ml:owner", "Value": f"user{i % 37}@example.com"}, {"Key": "ml:stage", "Value": "dev"}]
        sm.create_notebook_instance(**kwargs)
        if i % 10 == 0:
            continue  # no agent, no data
        # three hours of samples (the window the sweep reads), as the agent sends them: one per 5 minutes
        events = [
            {"timestamp": int((end - timedelta(minutes=5 * (k + 1)) + timedelta(seconds=5)).timestamp() * 1000),
             "message": json.dumps({"notebook": name, "active": 1 if (i % 3 == 0 and k < 2) else 0})}
            for k in reversed(range(36))
        ]
        logs.create_log_stream(logGroupName=ACTIVITY_LOG_GROUP, logStreamName=name)
        logs.put_log_events(logGroupName=ACTIVITY_LOG_GROUP, logStreamName=name, logEvents=events)
