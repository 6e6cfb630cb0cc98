"""Plain data for the training-job kind: what discovery knows of a running job (its cluster, its
runs, its settings), the evidence read about a training job, and the final-cost record."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, TypedDict

from reaper.metrics import Series
from reaper.timeutil import as_utc

KIND = "training-job"
RUNNING = "InProgress"

JobType = Literal["training", "processing", "tuning"]
WHAT: dict[JobType, str] = {"training": "training job", "processing": "processing job", "tuning": "tuning job"}


@dataclass(frozen=True)
class Cluster:
    """The instances one job runs on and their hourly list price together (None: some type has no price)."""

    instance_type: str | None  # "ml.p3.2xlarge", or "ml.p3.2xlarge+ml.c5.xlarge" for heterogeneous clusters
    count: int
    hourly_usd: float | None
    unpriced: tuple[str, ...] = ()
    lower_bound: bool = False  # several instance configs could be used: the cheapest is assumed


@dataclass(frozen=True)
class Span:
    """One job's run (a tuning job has one per training job it launched)."""

    start: datetime | None  # None: not started yet, nothing billed
    end: datetime | None  # None: still running
    hourly_usd: float | None


@dataclass(frozen=True)
class JobFacts:
    """What discovery read of one running job, beyond the fields every Resource has."""

    job_type: JobType
    started_at: datetime | None  # the runtime ceiling counts from here (a tuning job: its creation)
    spans: tuple[Span, ...]  # what has been billed: one span, or a tuning job's training jobs
    cluster: Cluster
    spot: bool = False  # managed spot: the on-demand estimate is an upper bound
    billable_s: int | None = None  # training: BillableTimeInSeconds, when SageMaker reports it (spot bills this, not wall time)
    max_runtime_s: int | None = None  # the job's own StoppingCondition
    checkpoint_s3: str | None = None  # training: where its checkpoints go (kept when stopped)
    secondary_status: str | None = None  # training: Starting, Downloading, Training…
    tuning_job_arn: str | None = None  # training: the tuning job that launched it
    training_jobs: int = 0  # tuning: training jobs launched so far
    training_jobs_running: int = 0  # tuning: of which running now


@dataclass(frozen=True)
class LogHit:
    stream: str
    at: datetime
    excerpt: str


@dataclass(frozen=True)
class TrainingSignal:
    metrics: Mapping[str, Series] = field(default_factory=dict)  # metric name -> 1-minute averages
    gpu: Mapping[str, Series] = field(default_factory=dict)  # host -> 5-minute averages, as published
    nan_lines: tuple[LogHit, ...] = ()
    window_end: datetime | None = None
    metrics_error: str | None = None  # the metric read failed: divergence and GPU use unknown
    logs_error: str | None = None  # the log scan failed or was cut short: "no nan seen" is not conclusive


class CostRecord(TypedDict):
    """The action-log record of a finished training job's estimated cost."""

    type: Literal["cost"]
    kind: str
    id: str
    arn: str
    region: str
    account: str
    status: str
    action: Literal["final-cost"]
    hours: float
    estimated_usd: float | None
    hourly_usd: float | None
    instance_type: str | None
    instance_count: int
    upper_bound: bool
    owner: str | None
    project: str | None
    reason: str


def align(now: datetime) -> datetime:
    """The start of the 5-minute period `now` falls in."""
    now = as_utc(now)
    return now.replace(minute=now.minute - now.minute % 5, second=0, microsecond=0)
