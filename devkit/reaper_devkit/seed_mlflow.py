"""SageMaker MLflow tracking servers for tests, demos and the bench (moto_ext/mlflow)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reaper_devkit.moto_ext.mlflow import server_for, set_status

ROLE = "arn:aws:iam::123456789012:role/mlflow-tracking"
OWNED = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "churn"}


def server(
    sm: Any, name: str, *, size: str = "Small", tags: dict[str, str] | None = None, experiments: tuple[str, ...] = ("baseline",)
) -> str:
    """A running tracking server (Created) with `experiments` logged to it; its ARN."""
    arn: str = sm.create_mlflow_tracking_server(
        TrackingServerName=name,
        ArtifactStoreUri=f"s3://mlflow-artifacts/{name}",
        TrackingServerSize=size,
        RoleArn=ROLE,
        Tags=[{"Key": k, "Value": v} for k, v in (tags or {}).items()],
    )["TrackingServerArn"]
    sm.describe_mlflow_tracking_server(TrackingServerName=name)  # Creating, read once
    sm.describe_mlflow_tracking_server(TrackingServerName=name)  # then Created
    server_for(name, sm.meta.region_name).experiments.extend(experiments)
    return arn


def fleet(sm: Any, now: datetime) -> dict[str, str]:
    """The issue's account: one past its kill date (to be stopped), one in use with no kill date, one exempt and
    one updating (both past their kill date too: kept), one production; {name: ARN}."""
    past = (now - timedelta(days=1)).date().isoformat()
    out = {
        "ts-forgotten": server(sm, "ts-forgotten", tags={**OWNED, "reaper:kill-after": past}, experiments=("churn-v1", "churn-v2")),
        "ts-busy": server(sm, "ts-busy", size="Medium", tags=OWNED),
        "ts-exempt": server(sm, "ts-exempt", tags={**OWNED, "reaper:kill-after": past, "reaper:exempt": "true"}),
        "ts-updating": server(sm, "ts-updating", tags={**OWNED, "reaper:kill-after": past}),
        "ts-prod": server(sm, "ts-prod", size="Large", tags={**OWNED, "ml:stage": "prod", "reaper:kill-after": past}),
    }
    set_status("ts-updating", "Updating", sm.meta.region_name)
    return out


def status(sm: Any, name: str) -> str:
    found: str = sm.describe_mlflow_tracking_server(TrackingServerName=name)["TrackingServerStatus"]
    return found


def experiments(sm: Any, name: str) -> list[str]:
    return list(server_for(name, sm.meta.region_name).experiments)
