"""One training job as the training-job rules judge it: the resource, its metric and GPU series, and
decide() with the admin's opt-in to the default ceilings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper import kinds
from reaper.core.model import Resource
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.training_job.cost import cluster
from reaper.kinds.training_job.model import JobFacts, JobType, Span, TrainingSignal, align
from reaper.kinds.training_job.settings import TrainingJobSettings

KIND = kinds.get("training-job")
NOW = datetime(2026, 12, 2, 14, 7, tzinfo=UTC)
REGION = "us-east-1"
DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "vision"}


def job(
    hours_ago: float,
    tags: dict[str, str] | None = None,
    instance_type: str = "ml.p3.2xlarge",
    count: int = 1,
    spot: bool = False,
    billable_s: int | None = None,
    job_type: JobType = "training",
    spans: list[Span] | None = None,
) -> Resource:
    c = cluster(REGION, {"InstanceType": instance_type, "InstanceCount": count})
    start = NOW - timedelta(hours=hours_ago)
    return Resource(
        kind="training-job", id="j", arn=f"arn:aws:sagemaker:{REGION}:123456789012:training-job/j", region=REGION, state="InProgress",
        tags={**DEV, **(tags or {})}, instance_type=c.instance_type, instance_count=c.count, hourly_usd=c.hourly_usd,
        facts=JobFacts(job_type=job_type, started_at=start, spans=tuple(spans or [Span(start, None, c.hourly_usd)]), cluster=c, spot=spot,
                       billable_s=billable_s,
                       checkpoint_s3="s3://ml-artifacts/j/checkpoints" if spot else None),  # managed spot checkpoints, as it should
    )  # fmt: skip


def minutes(values: list[float]) -> list[tuple[datetime, float]]:
    end = align(NOW)
    return [(end - timedelta(minutes=len(values) - k), v) for k, v in enumerate(values)]


def gpu_buckets(values: list[float]) -> list[tuple[datetime, float]]:
    """5-minute averages, newest first in `values`."""
    end = align(NOW)
    return sorted((end - timedelta(minutes=5 * (k + 1)), v) for k, v in enumerate(values))


def sig(metrics: dict[str, list[float]] | None = None, gpu: dict[str, list[float]] | None = None, **kw: object) -> TrainingSignal:
    return TrainingSignal(
        metrics={k: minutes(v) for k, v in (metrics or {}).items()},
        gpu={k: gpu_buckets(v) for k, v in (gpu or {}).items()},
        window_end=align(NOW),
        **kw,  # type: ignore[arg-type]
    )


DEFAULTS = Settings().with_kind(TrainingJobSettings(training_default_ceilings_act=True))  # the admin opted in: default ceilings act


def decide(resource: Resource, signal: TrainingSignal | None = None, settings: Settings = DEFAULTS):
    return KIND.decide(resource, signal, read_tags(resource.tags, settings), settings, NOW)
