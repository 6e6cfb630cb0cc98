"""A tracking server's use: AWS documents no evidence of it, so nothing is read (docs/kinds/mlflow.md).

SageMaker's CloudWatch metrics page lists none for MLflow tracking servers, and the MLflow calls a
server serves (`sagemaker-mlflow:*`) are not among the SageMaker calls its CloudTrail page lists;
`IsActive` is whether it runs. Each running server gets the same signal: not documented.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from reaper.aws.clients import Clients
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.kinds.mlflow.model import ServerSignal


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, ServerSignal]:
    return {r.id: ServerSignal(documented=False) for r in resources}
