"""Plain data for the training-job kind: what discovery knows of a running job (its cluster, its
runs, its settings), the evidence read about a training job, and the final-cost record."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, TypedDict

from reaper.aws.metrics import Series
from reaper.core.price import Price
from reaper.core.timeutil import as_utc, human_duration

KIND = "training-job"
RUNNING = "InProgress"

JobType = Literal["training", "processing", "tuning", "transform", "automl"]
WHAT: dict[JobType, str] = {
    "training": "training job",
    "processing": "processing job",
    "tuning": "tuning job",
    "transform": "transform job",
    "automl": "AutoML job",
}


@dataclass(frozen=True)
class Cluster:
    """The instances one job runs on and their hourly list price together (None: some type has no price)."""

    instance_type: str | None  # "ml.p3.2xlarge", or "ml.p3.2xlarge+ml.c5.xlarge" for heterogeneous clusters
    count: int
    hourly_usd: float | None
    unpriced: tuple[str, ...] = ()
    lower_bound: bool = False  # several instance configs could be used: the cheapest is assumed
    price: Price | None = field(default=None, compare=False)  # hourly_usd with its source and date (docs/prices.md)


@dataclass(frozen=True)
class Span:
    """One job's run (a tuning job has one per training job it launched)."""

    start: datetime | None  # None: not started yet, nothing billed
    end: datetime | None  # None: still running
    hourly_usd: float | None


@dataclass(frozen=True)
class Channel:
    """One input channel of a training job: its name, effective InputMode (File | Pipe | FastFile), and source (S3, FSxLustre, EFS)."""

    name: str
    mode: str
    source: str


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
    early_stopping: str | None = None  # tuning: TrainingJobEarlyStoppingType (Off, Auto)
    objective: tuple[str, str] | None = None  # tuning: (objective metric name, "Minimize" | "Maximize")
    children: tuple[str, ...] = ()  # tuning: the names of the training jobs it launched (in the order of `spans`)
    best_child: str | None = None  # tuning: BestTrainingJob, the child with the best objective so far
    automl_job_arn: str | None = None  # training, processing, transform: the AutoML job that launched it
    inputs: tuple[Channel, ...] = ()  # training: its InputDataConfig channels (for the GPU advisory)
    warm_pool: WarmPool | None = None  # an ended training job whose instances are kept in a managed warm pool


@dataclass(frozen=True)
class WarmPool:
    """A training job's managed warm pool (DescribeTrainingJob.WarmPoolStatus, ResourceConfig.KeepAlivePeriodInSeconds)."""

    status: str  # Available | InUse | Reused | Terminated
    retained_s: int  # ResourceRetainedBillableTimeInSeconds: wall-clock seconds billed, per instance
    keep_alive_s: int | None
    ended_at: datetime | None  # the job's TrainingEndTime: the pool has been kept since


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
    early_stop: MedianCheck | None = None  # a tuning child under reaper:early-stop=median: how it compares
    progress: Progress | None = None  # whether the job still logs or computes (None: not read, e.g. a young job)
    checkpoint: CheckpointAge | None = None  # its newest checkpoint (None: not read: no location, or a young job)


@dataclass(frozen=True)
class CheckpointAge:
    """The newest object under a job's CheckpointConfig.S3Uri, as one listing of that prefix found it."""

    uri: str
    newest: datetime | None = None  # None: no object (or the read failed)
    objects: int = 0
    complete: bool = False  # False: the listing was cut short, so `newest` is only the newest seen
    error: str | None = None

    def age_text(self, now: datetime) -> str:
        if self.error is not None:
            return f"the age of its newest checkpoint is unknown ({self.error})"
        if self.newest is None:
            return f"it has saved no checkpoint yet under {self.uri}" if self.complete else f"no checkpoint seen under {self.uri}"
        minutes = max(0, int((as_utc(now) - as_utc(self.newest)).total_seconds() // 60))
        bound = "" if self.complete else " at most"
        return f"its newest checkpoint is{bound} {human_duration(minutes)} old ({self.objects} object(s) under {self.uri})"


@dataclass(frozen=True)
class Progress:
    """What a running job did over the last `minutes`: the evidence that it is, or is not, stalled.

    `stalled` is True only on evidence of silence (no new log event in streams that exist, and
    CPU and GPU near zero wherever the job has metrics); None when nothing can tell (no log stream
    and no metric, or a read failed); False when it logs or computes.
    """

    minutes: int
    stalled: bool | None
    newest_log: datetime | None = None  # the newest log event seen (any time), when known
    log_streams: int = 0
    busiest_percent: float | None = None  # the highest CPU or GPU value of any host in the window
    metric_hosts: int = 0
    via: str | None = None  # a parent (tuning or AutoML job): the children it was judged from
    parent: str | None = None  # a child stopped with its parent (an AutoML job, or a tuning job stalled as a whole)
    error: str | None = None

    def text(self) -> str:
        parts = [f"no progress for {self.minutes} min"]
        if self.log_streams:
            last = f", the newest at {self.newest_log:%Y-%m-%d %H:%M} UTC" if self.newest_log else ""
            parts.append(f"no new log event in its {self.log_streams} log stream(s){last}")
        if self.metric_hosts and self.busiest_percent is not None:
            parts.append(f"CPU and GPU never above {self.busiest_percent:.1f}% on its {self.metric_hosts} host(s)")
        if self.via:
            parts.append(self.via)
        return ": ".join(parts[:1]) + (": " + "; ".join(parts[1:]) if len(parts) > 1 else "")


@dataclass(frozen=True)
class MedianCheck:
    """One tuning child's objective at its latest evaluation against its siblings' at the same evaluation."""

    tuning_job: str
    metric: str
    direction: str  # "Minimize" | "Maximize"
    evaluation: int  # 1-based: the child's latest evaluation
    value: float
    siblings: tuple[tuple[str, float], ...]  # (sibling, its objective at that evaluation), for those that reached it
    median: float | None  # None: fewer siblings than needed reached it
    losing: bool
    leading: bool = False  # the tuning job's current best child: never losing

    def text(self) -> str:
        worse = "higher" if self.direction == "Minimize" else "lower"
        shown = ", ".join(f"{n} {v:g}" for n, v in self.siblings[:8]) + (" …" if len(self.siblings) > 8 else "")
        return (
            f"losing its sweep: objective {self.metric} {self.value:g} at evaluation {self.evaluation} is {worse} (worse) than "
            f"the median {self.median:g} of {len(self.siblings)} siblings at that evaluation ({shown}; tuning job "
            f"{self.tuning_job}, early-stop=median)"
        )


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
