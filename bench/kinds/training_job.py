"""Bench seeder: n running SageMaker jobs — mostly training jobs with tags, loss/accuracy metrics and GPU
metrics for most, a few past a ceiling, diverged or logging nan; 3 % processing jobs; 1 % tuning jobs
(each with a finished and a running training job, the running one counted among the n)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import boto3

from reaper_devkit.moto_ext import sagemaker_jobs
from reaper_devkit.seed import ROLE, aligned
from reaper_devkit.seed_training import IMAGE, LOG_GROUP, NAMESPACE, processing_job, tuning_job

KIND = "training-job"
HEALTHY = [2.9, 2.3, 2.5, 2.0, 2.1, 1.8, 1.9, 1.6, 1.7, 1.5, 1.55, 1.4, 1.45, 1.3, 1.35, 1.25, 1.3, 1.2, 1.22, 1.15]
DIVERGING = [2.9, 2.0, 1.4, 1.1, 0.9, 1.0, 0.95, 0.92, 0.9, 0.91, 0.89, 0.88, 0.9, 0.87, 0.86, 1.2, 1.6, 2.3, 3.4, 5.1]


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    sm, cw, logs = session.client("sagemaker"), session.client("cloudwatch"), session.client("logs")
    tuning = n // 100
    processing = n * 3 // 100
    training = n - processing - 2 * tuning  # each tuning job also has one running training job
    end = aligned(now)
    data: list[dict[str, Any]] = []
    nan_streams: list[str] = []
    for i in range(training):
        name = f"bench-train-{i:05d}"
        gpu = i % 2 == 0
        tags = {"ml:owner": f"user{i % 37}@example.com", "ml:stage": "dev", "ml:project": f"p{i % 11}"} if i % 7 else {}
        arn = sm.create_training_job(
            TrainingJobName=name,
            AlgorithmSpecification={"TrainingImage": IMAGE, "TrainingInputMode": "File"},
            RoleArn=ROLE,
            OutputDataConfig={"S3OutputPath": f"s3://ml-artifacts/{name}"},
            ResourceConfig={
                "InstanceType": "ml.g4dn.xlarge" if gpu else "ml.m5.xlarge",
                "InstanceCount": 1 + (i % 3 == 0),
                "VolumeSizeInGB": 50,
            },
            StoppingCondition={"MaxRuntimeInSeconds": 86400},
            EnableManagedSpotTraining=i % 5 == 0,
            **({"Tags": [{"Key": k, "Value": v} for k, v in tags.items()]} if tags else {}),
        )["TrainingJobArn"]
        sagemaker_jobs.backdate(arn, now - timedelta(hours=26 if i % 50 == 1 else 1 + (i % 19)))
        if i % 10 == 9:
            continue  # no metric definitions: nothing in CloudWatch
        loss = DIVERGING if i % 40 == 3 else HEALTHY
        for k, v in enumerate(loss):
            ts = end - timedelta(minutes=len(loss) - k) + timedelta(seconds=10)
            data.append(_datum("train:loss", {"TrainingJobName": name}, ts, v * (1 + (i % 13) / 100)))
        if i % 4 == 0:
            for k in range(8):
                data.append(_datum("validation:accuracy", {"TrainingJobName": name}, end - timedelta(minutes=5 * k + 2), 0.9 - 0.01 * k))
        if gpu:
            for host in range(1, 2 + (i % 3 == 0)):
                for k in range(-5, 35):
                    ts = end - timedelta(minutes=k + 1) + timedelta(seconds=20)
                    data.append(_datum("GPUUtilization", {"Host": f"{name}/algo-{host}"}, ts, 35.0 if i % 8 == 0 else 88.0))
        if i % 97 == 5:
            nan_streams.append(name)
    for j in range(processing):
        processing_job(sm, f"bench-proc-{j:05d}", now, hours_ago=2 + j % 30, tags={"ml:owner": "etl@example.com", "ml:stage": "dev"})
    for j in range(tuning):
        tuning_job(sm, f"bench-hpo-{j:04d}", now, hours_ago=4, children=[(4, 2), (2, None)], tags={"ml:owner": "hpo@example.com"})
    for k in range(0, len(data), 1000):
        cw.put_metric_data(Namespace=NAMESPACE, MetricData=data[k : k + 1000])
    if nan_streams:
        logs.create_log_group(logGroupName=LOG_GROUP)
        for name in nan_streams:
            stream = f"{name}/algo-1-1764662400"
            logs.create_log_stream(logGroupName=LOG_GROUP, logStreamName=stream)
            stamp = int((now - timedelta(minutes=4)).timestamp() * 1000)
            lines = ["step 900 loss: 0.41", "step 1000 loss: nan"]
            logs.put_log_events(
                logGroupName=LOG_GROUP,
                logStreamName=stream,
                logEvents=[{"timestamp": stamp + i, "message": m} for i, m in enumerate(lines)],
            )


def _datum(metric: str, dims: dict[str, str], ts: datetime, value: float) -> dict[str, Any]:
    return {"MetricName": metric, "Dimensions": [{"Name": k, "Value": v} for k, v in dims.items()], "Timestamp": ts, "Value": value}
