"""Seeding helpers for the training-job guard: running jobs, their metrics and their logs.

Jobs are made through the API and then moved into the past with the moto extension
(reaper_devkit.moto_ext.sagemaker_jobs), since nothing in the API sets a start time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from reaper_devkit.moto_ext import sagemaker_jobs
from reaper_devkit.seed import ROLE, aligned, put_series

ACCOUNT = ROLE.split(":")[4]

NAMESPACE = "/aws/sagemaker/TrainingJobs"
LOG_GROUP = "/aws/sagemaker/TrainingJobs"
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:latest"


def training_job(
    sagemaker: Any,
    name: str,
    now: datetime,
    *,
    hours_ago: float,
    instance_type: str = "ml.p3.2xlarge",
    count: int = 1,
    tags: dict[str, str] | None = None,
    spot: bool = False,
    max_runtime_s: int = 86400,
    checkpoints: bool | None = None,
) -> str:
    """A training job InProgress that started `hours_ago` before `now`; returns its ARN.

    `checkpoints` (default: when spot) gives it CheckpointConfig.S3Uri s3://ml-artifacts/NAME/checkpoints."""
    kwargs: dict[str, Any] = {
        "TrainingJobName": name,
        "AlgorithmSpecification": {"TrainingImage": IMAGE, "TrainingInputMode": "File"},
        "RoleArn": ROLE,
        "OutputDataConfig": {"S3OutputPath": f"s3://ml-artifacts/{name}"},
        "ResourceConfig": {"InstanceType": instance_type, "InstanceCount": count, "VolumeSizeInGB": 50},
        "StoppingCondition": {"MaxRuntimeInSeconds": max_runtime_s},
        "EnableManagedSpotTraining": spot,
    }
    if spot:
        kwargs["StoppingCondition"]["MaxWaitTimeInSeconds"] = max_runtime_s
    if spot if checkpoints is None else checkpoints:
        kwargs["CheckpointConfig"] = {"S3Uri": f"s3://ml-artifacts/{name}/checkpoints"}
    if tags:
        kwargs["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
    arn: str = sagemaker.create_training_job(**kwargs)["TrainingJobArn"]
    sagemaker_jobs.backdate(arn, now - timedelta(hours=hours_ago))
    return arn


def processing_job(
    sagemaker: Any,
    name: str,
    now: datetime,
    *,
    hours_ago: float,
    instance_type: str = "ml.m5.4xlarge",
    count: int = 1,
    tags: dict[str, str] | None = None,
) -> str:
    kwargs: dict[str, Any] = {
        "ProcessingJobName": name,
        "AppSpecification": {"ImageUri": IMAGE},
        "RoleArn": ROLE,
        "ProcessingResources": {"ClusterConfig": {"InstanceCount": count, "InstanceType": instance_type, "VolumeSizeInGB": 50}},
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
    }
    if tags:
        kwargs["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
    arn: str = sagemaker.create_processing_job(**kwargs)["ProcessingJobArn"]
    sagemaker_jobs.backdate(arn, now - timedelta(hours=hours_ago))
    return arn


def tuning_job(
    sagemaker: Any,
    name: str,
    now: datetime,
    *,
    hours_ago: float,
    children: Sequence[tuple[float, float | None]],
    instance_type: str = "ml.g4dn.xlarge",
    count: int = 1,
    tags: dict[str, str] | None = None,
) -> str:
    """A tuning job InProgress with training jobs that ran (start, end) hours ago; end None = still running."""
    kwargs: dict[str, Any] = {
        "HyperParameterTuningJobName": name,
        "HyperParameterTuningJobConfig": {
            "Strategy": "Bayesian",
            "ResourceLimits": {"MaxNumberOfTrainingJobs": 50, "MaxParallelTrainingJobs": 4},
            "HyperParameterTuningJobObjective": {"Type": "Minimize", "MetricName": "validation:loss"},
        },
        "TrainingJobDefinition": {
            "AlgorithmSpecification": {"TrainingImage": IMAGE, "TrainingInputMode": "File"},
            "RoleArn": ROLE,
            "OutputDataConfig": {"S3OutputPath": f"s3://ml-artifacts/{name}"},
            "ResourceConfig": {"InstanceType": instance_type, "InstanceCount": count, "VolumeSizeInGB": 50},
            "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        },
    }
    if tags:
        kwargs["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
    arn: str = sagemaker.create_hyper_parameter_tuning_job(**kwargs)["HyperParameterTuningJobArn"]
    sagemaker_jobs.backdate(arn, now - timedelta(hours=hours_ago))
    for i, (start_h, end_h) in enumerate(children, start=1):
        sagemaker_jobs.add_tuning_training_job(
            arn, f"{name}-{i:03d}", now - timedelta(hours=start_h), None if end_h is None else now - timedelta(hours=end_h)
        )
    return arn


def metric(cloudwatch: Any, job: str, now: datetime, values: Sequence[float], name: str = "train:loss") -> None:
    """A training metric, one value a minute, the last one two minutes before the last whole 5 minutes."""
    end = aligned(now) - timedelta(minutes=1)
    points = [(end - timedelta(minutes=len(values) - 1 - k) + timedelta(seconds=10), v) for k, v in enumerate(values)]
    put_series(cloudwatch, NAMESPACE, name, {"TrainingJobName": job}, points)


def gpu(cloudwatch: Any, job: str, now: datetime, percent: float, minutes: int = 45, host: int = 1) -> None:
    """GPUUtilization of one host (as SageMaker publishes it: per instance, x the number of GPUs), every
    minute for the last `minutes` and the current 5 minutes (so a sweep just past a 5-minute mark sees it all)."""
    end = aligned(now)
    points = [(end - timedelta(minutes=k + 1) + timedelta(seconds=20), percent + (k % 3) - 1) for k in range(-5, minutes)]
    put_series(cloudwatch, NAMESPACE, "GPUUtilization", {"Host": f"{job}/algo-{host}"}, points)


def log_lines(logs: Any, job: str, now: datetime, lines: Sequence[str], minutes_ago: float = 3, host: int = 1) -> None:
    """Lines in the job's log stream, as the training container writes them."""
    with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
        logs.create_log_group(logGroupName=LOG_GROUP)
    stream = f"{job}/algo-{host}-1764662400"
    with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
        logs.create_log_stream(logGroupName=LOG_GROUP, logStreamName=stream)
    start = int((now - timedelta(minutes=minutes_ago)).timestamp() * 1000)
    events = [{"timestamp": start + i * 1000, "message": line} for i, line in enumerate(lines)]
    logs.put_log_events(logGroupName=LOG_GROUP, logStreamName=stream, logEvents=events)


PROCESSING_GROUP = "/aws/sagemaker/ProcessingJobs"
TRANSFORM_GROUP = "/aws/sagemaker/TransformJobs"


def transform_job(
    sagemaker: Any,
    name: str,
    now: datetime,
    *,
    hours_ago: float,
    instance_type: str = "ml.m5.xlarge",
    count: int = 1,
    tags: dict[str, str] | None = None,
) -> str:
    """A batch transform job InProgress that started `hours_ago` before `now`; returns its ARN."""
    kwargs: dict[str, Any] = {
        "TransformJobName": name,
        "ModelName": f"{name}-model",
        "TransformInput": {"DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": f"s3://ml-data/{name}/in"}}},
        "TransformOutput": {"S3OutputPath": f"s3://ml-data/{name}/out"},
        "TransformResources": {"InstanceType": instance_type, "InstanceCount": count},
    }
    if tags:
        kwargs["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
    arn: str = sagemaker.create_transform_job(**kwargs)["TransformJobArn"]
    sagemaker_jobs.backdate(arn, now - timedelta(hours=hours_ago))
    return arn


def automl_job(sagemaker: Any, name: str, now: datetime, *, hours_ago: float, tags: dict[str, str] | None = None) -> str:
    """An AutoML (V2) job InProgress that started `hours_ago` before `now`; returns its ARN."""
    kwargs: dict[str, Any] = {
        "AutoMLJobName": name,
        "AutoMLJobInputDataConfig": [
            {"ChannelType": "training", "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": f"s3://ml-data/{name}/train"}}}
        ],
        "OutputDataConfig": {"S3OutputPath": f"s3://ml-data/{name}/out"},
        "AutoMLProblemTypeConfig": {
            "TabularJobConfig": {
                "TargetAttributeName": "label",
                "ProblemType": "BinaryClassification",
                "CompletionCriteria": {"MaxAutoMLJobRuntimeInSeconds": 86400},
            }
        },
        "RoleArn": ROLE,
    }
    if tags:
        kwargs["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
    arn: str = sagemaker.create_auto_ml_job_v2(**kwargs)["AutoMLJobArn"]
    sagemaker_jobs.backdate(arn, now - timedelta(hours=hours_ago))
    return arn


def job_log(logs: Any, group: str, stream: str, now: datetime, minutes_ago: Sequence[float]) -> None:
    """One log event at each of `minutes_ago` before `now` in `group`/`stream` (e.g. `JOB/algo-1-1764662400`)."""
    with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
        logs.create_log_group(logGroupName=group)
    with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
        logs.create_log_stream(logGroupName=group, logStreamName=stream)
    events = [
        {"timestamp": int((now - timedelta(minutes=m)).timestamp() * 1000), "message": f"step {i}"}
        for i, m in enumerate(sorted(minutes_ago, reverse=True))
    ]
    logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=events)


def utilization(
    cloudwatch: Any, namespace: str, host: str, now: datetime, percent: float, minutes: int = 120, metric: str = "CPUUtilization"
) -> None:
    """CPUUtilization (or GPUUtilization) of one host, every minute for the last `minutes`."""
    points = [(now - timedelta(minutes=k + 1), percent) for k in range(minutes)]
    put_series(cloudwatch, namespace, metric, {"Host": host}, points)


def checkpoint_objects(s3: Any, uri: str, now: datetime, minutes_ago: Sequence[float]) -> None:
    """Checkpoint files under `uri`, one written at each of `minutes_ago` before `now`.

    S3 sets LastModified itself; the test kit moves it into the past in moto's backend (in-process
    and server mode alike), as `sagemaker_jobs.backdate` does for jobs.
    """
    from moto.s3.models import s3_backends

    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    with contextlib.suppress(s3.exceptions.BucketAlreadyOwnedByYou, s3.exceptions.BucketAlreadyExists):
        s3.create_bucket(Bucket=bucket)
    keys = s3_backends[ACCOUNT]["global"].buckets[bucket].keys
    for i, m in enumerate(minutes_ago):
        key = f"{prefix.rstrip('/')}/step-{i:05d}.pt"
        s3.put_object(Bucket=bucket, Key=key, Body=b"weights")
        keys[key].last_modified = (now - timedelta(minutes=m)).astimezone(UTC).replace(tzinfo=None)
