"""SageMaker MLflow tracking servers for tests, demos and the bench (moto_ext/mlflow)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reaper_devkit.moto_ext import cloudtrail_lookup
from reaper_devkit.moto_ext.mlflow import server_for, set_created, set_status

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


# -- MlflowReads: what a server's MLflow API and CloudTrail say (reaper_devkit.mlflow_api, moto_ext/cloudtrail_lookup) --
def run(
    sm: Any, name: str, experiment: str, *, start: datetime, end: datetime | None = None, status: str = "FINISHED", run_id: str = ""
) -> None:
    """A run logged to `experiment` on server `name` (RUNNING when `status` says so: no end)."""
    server = server_for(name, sm.meta.region_name)
    if experiment not in server.experiments:
        server.experiments.append(experiment)
    rid = run_id or f"{name}-run-{len(server.runs)}"
    server.runs.append({"run_id": rid, "experiment": experiment, "status": status, "start_time": start, "end_time": end})


def experiment_updated(sm: Any, name: str, experiment: str, when: datetime) -> None:
    server = server_for(name, sm.meta.region_name)
    if experiment not in server.experiments:
        server.experiments.append(experiment)
    server.experiment_updated[experiment] = when


def ui_opened(sm: Any, name: str, when: datetime, username: str = "ana") -> None:
    """Someone asked for the server's MLflow UI URL (CloudTrail's CreatePresignedMlflowTrackingServerUrl event)."""
    cloudtrail_lookup.record(
        "CreatePresignedMlflowTrackingServerUrl",
        {"trackingServerName": name, "expiresInSeconds": 300},
        when,
        region=sm.meta.region_name,
        username=username,
    )


def reads_fleet(sm: Any, now: datetime) -> dict[str, str]:
    """The issue's account with MlflowReads on, every server created 3 days ago: one idle (its last run ended 2 days
    ago), one busy (a run 1 h ago), one with a RUNNING run (started 3 days ago), one whose UI was opened 2 h ago, one
    idle and exempt, one idle and Updating, one idle in production; {name: ARN}."""
    old = now - timedelta(days=3)
    out = {
        "ts-idle": server(sm, "ts-idle", tags=OWNED, experiments=("churn-v1", "churn-v2")),
        "ts-busy": server(sm, "ts-busy", size="Medium", tags=OWNED),
        "ts-running": server(sm, "ts-running", tags=OWNED),
        "ts-ui": server(sm, "ts-ui", tags=OWNED),
        "ts-exempt": server(sm, "ts-exempt", tags={**OWNED, "reaper:exempt": "true"}),
        "ts-updating": server(sm, "ts-updating", tags=OWNED),
        "ts-prod": server(sm, "ts-prod", size="Large", tags={**OWNED, "ml:stage": "prod"}),
    }
    region = sm.meta.region_name
    for name in out:
        set_created(name, old, region)
        experiment_updated(sm, name, "baseline", old)
        run(sm, name, "baseline", start=old, end=now - timedelta(days=2))
    run(sm, "ts-busy", "baseline", start=now - timedelta(hours=1), end=now - timedelta(minutes=20))
    run(sm, "ts-running", "baseline", start=old, status="RUNNING", run_id="long-training")
    ui_opened(sm, "ts-ui", now - timedelta(hours=2))
    set_status("ts-updating", "Updating", region)
    return out
