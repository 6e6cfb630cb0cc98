"""Seeding helpers shared by tests, the demo and the benchmark."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

ROLE = "arn:aws:iam::123456789012:role/mlreaper-demo"


def aligned(now: datetime, minutes: int = 5) -> datetime:
    return now.replace(minute=now.minute - now.minute % minutes, second=0, microsecond=0)


def put_series(
    cloudwatch: Any,
    namespace: str,
    metric: str,
    dimensions: dict[str, str],
    points: Iterable[tuple[datetime, float]],
) -> None:
    """Put datapoints, 1000 per call (the API's limit)."""
    data = [
        {"MetricName": metric, "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()], "Timestamp": ts, "Value": value}
        for ts, value in points
    ]
    for i in range(0, len(data), 1000):
        cloudwatch.put_metric_data(Namespace=namespace, MetricData=data[i : i + 1000])


def put_metric_data_in_process(namespace: str, data: Sequence[dict[str, Any]], region: str = "us-east-1") -> None:
    """PutMetricData straight into moto's CloudWatch backend, 1,000 datapoints at a time, for a
    seeder's bulk (FSx at N = 10,000 is about 4 million datapoints, which the API would serialise and
    moto parse for many minutes). moto runs in this process, behind the local server too, so this is
    the call moto's PutMetricData handler makes with what it parsed: the same datapoints, checked by
    the same validation, timestamps as the handler passes them (naive UTC,
    whole seconds)."""
    from moto.cloudwatch.models import cloudwatch_backends
    from moto.core.models import DEFAULT_ACCOUNT_ID

    backend = cloudwatch_backends[DEFAULT_ACCOUNT_ID][region]
    for i in range(0, len(data), 1000):
        chunk = [{**d, "Timestamp": d["Timestamp"].astimezone(UTC).replace(tzinfo=None, microsecond=0)} for d in data[i : i + 1000]]
        backend.put_metric_data(namespace, chunk)


def periods(now: datetime, values: Sequence[float | None], ahead: int = 0) -> list[tuple[datetime, float]]:
    """One datapoint 7 s into each of the last len(values) 5-minute periods before `now`, newest first;
    None = gap. `ahead`: the same source goes on reporting its newest value for that many periods after
    `now`, as a running agent does while a demo runs for minutes (the reaper reads no period that has
    not begun: they are seen only once the clock gets there)."""
    series = [values[0]] * ahead + list(values) if values else []
    end = aligned(now) + timedelta(minutes=5 * ahead)
    return [(end - timedelta(minutes=5 * (k + 1)) + timedelta(seconds=7), v) for k, v in enumerate(series) if v is not None]


def activity(cloudwatch: Any, notebook: str, now: datetime, values: Sequence[float | None], ahead: int = 0) -> None:
    """NotebookActivity for the last len(values) 5-minute periods, newest first; None = gap (`ahead`: see periods)."""
    put_series(cloudwatch, "MLReaper", "NotebookActivity", {"NotebookInstanceName": notebook}, periods(now, values, ahead))


ACTIVITY_LOG_GROUP = "/mlreaper/mlreaper-activity-agent"  # the stack's, with the default lifecycle configuration name


def activity_samples(logs: Any, notebook: str, now: datetime, values: Sequence[float | None], group: str = ACTIVITY_LOG_GROUP) -> None:
    """The agent's samples (CloudWatch Logs) for the last len(values) 5-minute periods, newest
    first; None = gap. Creates the log group (the stack's) and the notebook's stream if missing."""
    end = aligned(now)
    for create, kwargs in (
        (logs.create_log_group, {"logGroupName": group}),
        (logs.create_log_stream, {"logGroupName": group, "logStreamName": notebook}),
    ):
        with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
            create(**kwargs)
    events = [
        {
            "timestamp": int((end - timedelta(minutes=5 * (k + 1)) + timedelta(seconds=7)).timestamp() * 1000),
            "message": json.dumps({"notebook": notebook, "active": int(v)}),
        }
        for k, v in reversed(list(enumerate(values)))
        if v is not None
    ]
    if events:
        logs.put_log_events(logGroupName=group, logStreamName=notebook, logEvents=events)


def notebook(
    sagemaker: Any,
    name: str,
    tags: dict[str, str] | None = None,
    agent: bool = True,
    instance_type: str = "ml.t3.medium",
    agent_config: str = "mlreaper-activity-agent",
) -> str:
    kwargs: dict[str, Any] = {"NotebookInstanceName": name, "InstanceType": instance_type, "RoleArn": ROLE}
    if agent:
        kwargs["LifecycleConfigName"] = agent_config
    if tags:
        kwargs["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
    arn: str = sagemaker.create_notebook_instance(**kwargs)["NotebookInstanceArn"]
    return arn
