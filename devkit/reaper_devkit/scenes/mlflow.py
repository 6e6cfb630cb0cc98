"""Demo scene: SageMaker MLflow tracking servers: a forgotten one past its kill date (stopped, started again with
its experiments by `reaper restore`), one without a kill date (reported with its cost: AWS documents no evidence
of a tracking server's use) and one updating (never acted on)."""

from __future__ import annotations

from datetime import datetime, timedelta

import boto3

from reaper_devkit import seed_mlflow
from reaper_devkit.moto_ext.mlflow import set_status

KIND = "mlflow"
OWNER = {"ml:owner": "ana@example.com", "ml:project": "churn", "ml:stage": "dev"}


def seed(session: boto3.session.Session, now: datetime) -> dict[str, str]:
    sm = session.client("sagemaker")
    past = (now - timedelta(days=2)).date().isoformat()
    seed_mlflow.server(sm, "mlflow-demo-forgotten", tags={**OWNER, "reaper:kill-after": past}, experiments=("churn-v1",))
    seed_mlflow.server(sm, "mlflow-demo-team", size="Medium", tags=OWNER)
    seed_mlflow.server(sm, "mlflow-demo-updating", tags={**OWNER, "reaper:kill-after": past})
    set_status("mlflow-demo-updating", "Updating", sm.meta.region_name)
    return {
        "mlflow-demo-forgotten": "stopped: past its kill date (`reaper restore mlflow-demo-forgotten` starts it with its experiments)",
        "mlflow-demo-team": "kept: AWS documents no evidence of a tracking server's use, so it is unknown (reported with its cost)",
        "mlflow-demo-updating": "kept: Updating, never acted on until it settles",
    }
