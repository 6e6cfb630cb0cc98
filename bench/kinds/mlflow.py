"""Bench seeder: n MLflow tracking servers, all running — a third past their kill date (stopped in enforce),
a third in use with no kill date (unknown: AWS documents no usage evidence), a third Medium with no kill date.

The sweep's calls: one ListMlflowTrackingServers page per 100, one tag:GetResources page per 100 (the tags
in bulk), one DescribeMlflowTrackingServer per running server (its size: the summaries carry none). No
metric is read: there is none to read (docs/kinds/mlflow.md).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import boto3

from reaper_devkit import seed_mlflow

KIND = "mlflow"


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    sm = session.client("sagemaker")
    past = (now - timedelta(days=1)).date().isoformat()
    for i in range(n):
        tags = {"ml:owner": f"user{i % 37}@example.com", "ml:stage": "dev", "ml:project": f"p{i % 11}"}
        case = i % 3
        if case == 0:
            tags["reaper:kill-after"] = past
        seed_mlflow.server(sm, f"ts-{i:05d}", size="Medium" if case == 2 else "Small", tags=tags)
