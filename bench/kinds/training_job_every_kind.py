"""Bench seeder: n jobs of each kind the training-job guard watches — training, processing, transform,
tuning (each with one running child) and AutoML (each with one running candidate) — half of each
stalled (silent logs, CPU at 1 %) and half progressing (a log line minutes ago, or busy CPU); one
training job in ten checkpoints to S3; n / 10 ended jobs keep a warm pool (half past the ceiling).

    .venv/bin/python bench/sweep_bench.py --kind training-job-every-kind --n 1000
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import Any

import boto3

from reaper_devkit.moto_ext import sagemaker_jobs
from reaper_devkit.seed_training import (
    PROCESSING_GROUP,
    TRANSFORM_GROUP,
    automl_job,
    checkpoint_objects,
    processing_job,
    training_job,
    transform_job,
    tuning_job,
)

KIND = "training-job-every-kind"
SWEEPS = "training-job"  # the kind this seeder's account is swept as
TRAIN_GROUP = "/aws/sagemaker/TrainingJobs"
TAGS = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "bench"}


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    sm, cw, logs, s3 = (session.client(s) for s in ("sagemaker", "cloudwatch", "logs", "s3"))
    hosts: list[tuple[str, str, bool]] = []  # (group, job/host, stalled)
    for i in range(n):
        stalled = i % 2 == 0
        training_job(sm, f"bt-{i:05d}", now, hours_ago=3, tags=TAGS, checkpoints=i % 10 == 1)
        processing_job(sm, f"bp-{i:05d}", now, hours_ago=3, tags=TAGS)
        transform_job(sm, f"bx-{i:05d}", now, hours_ago=3, tags=TAGS)
        tuning_job(sm, f"bh-{i:05d}", now, hours_ago=3, children=[(2.5, None)], tags=TAGS)
        automl = automl_job(sm, f"ba-{i:05d}", now, hours_ago=3, tags=TAGS)
        child = training_job(sm, f"ba-{i:05d}-c1", now, hours_ago=2.5, tags=TAGS)
        sagemaker_jobs.link_automl(child, automl)
        for job in (f"bt-{i:05d}", f"bh-{i:05d}-001", f"ba-{i:05d}-c1"):
            hosts.append((TRAIN_GROUP, f"{job}/algo-1", stalled))
        hosts.append((PROCESSING_GROUP, f"bp-{i:05d}/algo-1", stalled))
        hosts.append((TRANSFORM_GROUP, f"bx-{i:05d}/i-0{i:05d}", stalled))
        if i % 10 == 1:
            checkpoint_objects(s3, f"s3://ml-artifacts/bt-{i:05d}/checkpoints", now, [150, 90, 25 if i % 20 == 1 else 130])
    for k in range(n // 10):
        arn = training_job(sm, f"bw-{k:05d}", now, hours_ago=2, tags=TAGS)
        sagemaker_jobs.retain_warm_pool(arn, now - timedelta(minutes=40 if k % 2 else 10), 2400 if k % 2 else 600)
    _utilization(cw, hosts, now)
    _logs(logs, hosts, now)


def _utilization(cw: Any, hosts: list[tuple[str, str, bool]], now: datetime) -> None:
    by_group: dict[str, list[dict[str, Any]]] = {}
    for group, host, stalled in hosts:
        for k in range(0, 120, 10):
            by_group.setdefault(group, []).append(
                {
                    "MetricName": "CPUUtilization",
                    "Dimensions": [{"Name": "Host", "Value": host}],
                    "Timestamp": now - timedelta(minutes=k + 1),
                    "Value": 1.0 if stalled else (2.0 if k % 20 else 45.0),
                }
            )
    for group, data in by_group.items():
        for k in range(0, len(data), 1000):
            cw.put_metric_data(Namespace=group, MetricData=data[k : k + 1000])


def _logs(logs: Any, hosts: list[tuple[str, str, bool]], now: datetime) -> None:
    for group in {g for g, _, _ in hosts}:
        with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
            logs.create_log_group(logGroupName=group)
    for group, host, stalled in hosts:
        stream = f"{host}-1764662400"
        logs.create_log_stream(logGroupName=group, logStreamName=stream)
        ages = [170, 150] if stalled else [170, 30, 5]
        events = [{"timestamp": int((now - timedelta(minutes=m)).timestamp() * 1000), "message": f"step {j}"} for j, m in enumerate(ages)]
        logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=events)
