"""Typed facts and restore record of an MLflow tracking server."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict

KIND = "mlflow"
NO_USAGE_SIGNAL = "mlflow-no-usage-signal"  # reaper.core.coverage: a running server AWS documents no usage evidence for
# MlflowReads=on: why a server's use could not be read (stable codes: `reaper coverage` groups by them)
API_REFUSED = "mlflow-api-refused"  # its MLflow API answered 401/403 (IAM, an SCP, a VPC endpoint policy)
API_UNREACHABLE = "mlflow-api-unreachable"  # no whole answer: a network failure, a timeout, HTTP 5xx, stopped meanwhile
API_UNREADABLE = "mlflow-api-unreadable"  # an answer that is not the MLflow REST API's models, or too many experiments
API_OFF_HOST = "mlflow-api-off-host"  # its URL is not on SageMaker's MLflow domain, or it answered with a redirect
API_NOT_REACHED = "mlflow-api-not-reached"  # the sweep's time for the reads ended first
TRAIL_UNREADABLE = "mlflow-cloudtrail-unreadable"  # CloudTrail LookupEvents failed or was refused: UI opens unknown
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
class UsageReading:
    """What a tracking server's own MLflow REST API and CloudTrail say of its use (MlflowReads=on), or why
    they could not be read. Figures only: never a URL, a header or a signature (docs/kinds/mlflow.md)."""

    experiments: int = 0  # experiments/search: how many it holds (all view types)
    last_experiment_update: datetime | None = None  # the newest experiment `last_update_time`
    last_run_start: datetime | None = None  # runs/search, newest `start_time`
    last_run_end: datetime | None = None  # runs/search, newest `end_time`
    running_run: str | None = None  # a run whose status is RUNNING (its run_id), if any
    running_since: datetime | None = None
    last_ui_open: datetime | None = None  # CloudTrail: newest CreatePresignedMlflowTrackingServerUrl for it
    ui_opens: int = 0  # how many such events in the window
    unreadable: str | None = None  # why it could not be read: the server is unknown, never idle
    unknown: str | None = None  # the stable code of `unreadable` (reaper.core.coverage.REASONS)


@dataclass(frozen=True)
class ServerSignal:
    """What is known of its use: nothing AWS documents as a metric; with MlflowReads=on, its own MLflow API and
    CloudTrail's record of its UI being opened (docs/kinds/mlflow.md)."""

    documented: bool = False
    reading: UsageReading | None = None  # MlflowReads=on only


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
