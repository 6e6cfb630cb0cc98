"""Typed facts and restore record of an MLflow tracking server."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict

KIND = "mlflow"
NO_USAGE_SIGNAL = "mlflow-no-usage-signal"  # reaper.core.coverage: a running server AWS documents no usage evidence for
PRICE_SECTION = "sagemaker-mlflow"  # the shipped price table's section, rows by TrackingServerSize


@dataclass(frozen=True)
class ServerFacts:
    name: str
    size: str | None  # TrackingServerSize: Small, Medium, Large
    is_active: str | None  # IsActive: Active / Inactive (whether it runs, not whether it is used)
    mlflow_version: str | None
    url: str | None
    created_at: datetime | None
    last_modified: datetime | None


@dataclass(frozen=True)
class ServerSignal:
    """What is known of its use: nothing AWS documents (docs/kinds/mlflow.md)."""

    documented: bool = False


class RestoreRecord(TypedDict, total=False):
    kind: str
    name: str
    arn: str
    region: str
    account: str
    owner: str | None
    size: str | None
    hourly_usd: float | None
    reason: str
    reaped_at: str
    event_id: str
    status: str  # "reaped", then "restored"
    restored_at: str
