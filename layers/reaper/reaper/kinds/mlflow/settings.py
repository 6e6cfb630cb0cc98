"""The MLflow kind's own settings (docs/kinds/mlflow.md), read from their REAPER_* variables (reaper.core.settings)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from reaper.core.settings import KindSettings


class MlflowSettings(KindSettings):
    ENV_VARS: ClassVar[dict[str, str]] = {
        "REAPER_MLFLOW_READS": "mlflow_reads",
        "REAPER_MLFLOW_IDLE_HOURS": "mlflow_idle_hours",
    }

    # MlflowReads: judge a running MLflow tracking server by its own MLflow API (runs, experiments) and CloudTrail's
    # record of its UI being opened; MlflowIdleHours: how long with none of those is idle
    mlflow_reads: bool = False
    mlflow_idle_hours: int = Field(default=24, ge=1, le=2_160)  # at most 90 days: what CloudTrail's LookupEvents holds
