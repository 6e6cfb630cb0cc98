"""What each seeded resource is, read from the seeded account itself (bench/c7n_side_by_side.py):
`busy` (activity above the idle line within the kind's idle window), `out-of-scope` (a production stage,
no dev stage for an endpoint, a CPU-only EC2 type), `managed` (an EC2 box of a fleet or cluster),
`young` (an endpoint younger than its window), `no-signal` (no activity series at all: unknown, never
idle, docs/kinds/notebook.md and docs/kinds/ec2.md), `idle-instance-store` (an idle EC2 box whose stop
erases its instance store: acted on only with the owner's `reaper:disposable` tag), else `idle`: the one
class either tool should act on.

Also, for the bench only: moto answers GetMetricStatistics for any datapoint whose dimensions
*include* the query's; CloudWatch answers only for the exact combination published ("you can't
retrieve statistics using combinations of dimensions that you did not specially publish",
https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch_concepts.html#dimension-combinations).
Custodian's `metrics` filter reads GetMetricStatistics, so the bench makes moto exact (and indexed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

BUSY, IDLE, OUT, MANAGED, YOUNG, NO_SIGNAL = "busy", "idle", "out-of-scope", "managed", "young", "no-signal"
IDLE_INSTANCE_STORE = "idle-instance-store"  # idle, but a stop erases its local NVMe (docs/kinds/ec2.md: kept without consent)
WINDOW_MIN = {"notebook": 60, "ec2": 60, "endpoint": 120}  # the reaper's default idle windows (docs/configuration.md)
PROD = ("prod", "production")
DEV = ("dev", "test", "sandbox", "staging")
ACCELERATED = re.compile(r"^(g|p|inf|trn|dl)\d", re.IGNORECASE)
FLEET_TAGS = ("aws:autoscaling:groupName", "eks:cluster-name", "aws:ec2spot:fleet-request-id", "aws:ec2:fleet-id")
# (namespace, metric) -> the level above which a datapoint is activity (docs/kinds/*.md: the reaper's own lines)
ACTIVITY = {
    ("MLReaper", "NotebookActivity"): 0.0,
    ("AWS/EC2", "CPUUtilization"): 5.0,
    ("CWAgent", "nvidia_smi_utilization_gpu"): 5.0,
    ("CWAgent", "nvidia_smi_utilization_memory"): 5.0,
    ("CWAgent", "neuroncore_utilization"): 5.0,
    ("AWS/SageMaker", "Invocations"): 0.0,
    ("AWS/SageMaker", "InvocationsProcessed"): 0.0,
    ("AWS/SageMaker", "ApproximateBacklogSize"): 0.0,
}
ACCELERATOR_METRICS = {"nvidia_smi_utilization_gpu", "nvidia_smi_utilization_memory", "neuroncore_utilization"}
ID_DIMENSIONS = ("NotebookInstanceName", "InstanceId", "EndpointName", "InferenceComponentName")


@dataclass
class Truth:
    classes: dict[str, str]
    components: dict[str, str] = field(default_factory=dict)  # inference component -> its endpoint

    def owner(self, rid: str) -> str:
        return self.components.get(rid, rid)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.classes.values():
            out[c] = out.get(c, 0) + 1
        return dict(sorted(out.items()))


def _utc(ts: datetime) -> datetime:
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts


def activity(datums: list[Any], now: datetime, window_min: int, owner: Callable[[str], str]) -> tuple[set[str], set[str]]:
    """(resources with activity in the window, resources with an accelerator or activity series at all)."""
    busy: set[str] = set()
    series: set[str] = set()
    since = now - timedelta(minutes=window_min)
    for d in datums:
        line = ACTIVITY.get((d.namespace, d.name))
        if line is None:
            continue
        ids = [owner(x.value) for x in d.dimensions if x.name in ID_DIMENSIONS]
        if d.name in ACCELERATOR_METRICS or d.name == "NotebookActivity":
            series.update(ids)
        if float(d.value) > line and _utc(d.timestamp) >= since:
            busy.update(ids)
    return busy, series


def _tags(items: list[dict[str, str]]) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in items}


def classify(kind: str, session: boto3.session.Session, now: datetime) -> Truth:
    """Every seeded resource of `kind` and what it is (reads made before any counting starts)."""
    from moto.cloudwatch.models import cloudwatch_backends
    from moto.core.models import DEFAULT_ACCOUNT_ID

    datums = list(cloudwatch_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].metric_data)
    if kind == "ec2":
        return _ec2(session, datums, now)
    sm = session.client("sagemaker")
    if kind == "notebook":
        busy, series = activity(datums, now, WINDOW_MIN[kind], str)
        classes = {}
        for page in sm.get_paginator("list_notebook_instances").paginate():
            for nb in page["NotebookInstances"]:
                name = nb["NotebookInstanceName"]
                stage = _tags(sm.list_tags(ResourceArn=nb["NotebookInstanceArn"])["Tags"]).get("ml:stage", "").lower()
                classes[name] = OUT if stage in PROD else BUSY if name in busy else NO_SIGNAL if name not in series else IDLE
        return Truth(classes)
    return _endpoints(sm, datums, now)


def _ec2(session: boto3.session.Session, datums: list[Any], now: datetime) -> Truth:
    busy, series = activity(datums, now, WINDOW_MIN["ec2"], str)
    ec2 = session.client("ec2")
    store = {
        t["InstanceType"]
        for page in ec2.get_paginator("describe_instance_types").paginate()
        for t in page["InstanceTypes"]
        if t.get("InstanceStorageSupported")
    }
    classes = {}
    for page in ec2.get_paginator("describe_instances").paginate():
        for res in page["Reservations"]:
            for i in res["Instances"]:
                iid, tags = i["InstanceId"], _tags(i.get("Tags", []))
                if not ACCELERATED.match(i["InstanceType"]) or tags.get("ml:stage", "").lower() in PROD:
                    classes[iid] = OUT
                elif any(k in tags for k in FLEET_TAGS):
                    classes[iid] = MANAGED
                else:
                    idle = IDLE_INSTANCE_STORE if i["InstanceType"] in store else IDLE
                    classes[iid] = BUSY if iid in busy else NO_SIGNAL if iid not in series else idle
    return Truth(classes)


def _endpoints(sm: Any, datums: list[Any], now: datetime) -> Truth:
    components = {
        ic["InferenceComponentName"]: ic["EndpointName"]
        for page in sm.get_paginator("list_inference_components").paginate()
        for ic in page["InferenceComponents"]
    }
    busy, _series = activity(datums, now, WINDOW_MIN["endpoint"], lambda r: components.get(r, r))
    classes = {}
    for page in sm.get_paginator("list_endpoints").paginate():
        for ep in page["Endpoints"]:
            name = ep["EndpointName"]
            stage = _tags(sm.list_tags(ResourceArn=ep["EndpointArn"])["Tags"]).get("ml:stage", "").lower()
            young = _utc(ep["CreationTime"]) > now - timedelta(minutes=WINDOW_MIN["endpoint"])
            classes[name] = OUT if stage not in DEV else BUSY if name in busy else YOUNG if young else IDLE
    return Truth(classes, components)


def exact_dimension_statistics() -> None:
    """moto's GetMetricStatistics, answering only for the exact dimension combination (as CloudWatch), from an index."""
    from moto.cloudwatch import models

    cls = models.CloudWatchBackend
    if getattr(cls, "_bench_exact", False):
        return
    index: dict[str, Any] = {"size": -1, "by": {}}

    def key(namespace: str, name: str, dims: list[tuple[str, str]]) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        return namespace, name, tuple(sorted(dims))

    def get_metric_statistics(
        self: Any, namespace: str, metric_name: str, start_time: datetime, end_time: datetime, period: int, stats: list[str],
        dimensions: list[dict[str, str]], unit: str | None = None,
    ) -> list[Any]:  # fmt: skip
        data = self.get_all_metrics()
        if index["size"] != len(data):
            by: dict[Any, list[Any]] = {}
            for md in data:
                by.setdefault(key(md.namespace, md.name, [(d.name, d.value) for d in md.dimensions]), []).append(md)
            index["by"], index["size"] = by, len(data)
        start, end = start_time.replace(microsecond=0), end_time.replace(microsecond=0)
        wanted = index["by"].get(key(namespace, metric_name, [(d["Name"], d.get("Value", "")) for d in dimensions or []]), [])
        found = sorted((md for md in wanted if start <= md.timestamp < end and (not unit or md.unit == unit)), key=lambda m: m.timestamp)
        out: list[Any] = []
        step = timedelta(seconds=period)
        for md in found:  # moto's own grouping: one Statistics per period that has data, from the first datapoint
            slot = found[0].timestamp + step * ((md.timestamp - found[0].timestamp) // step)
            if not out or out[-1].timestamp != slot:
                out.append(models.Statistics(stats, slot))
            out[-1].metric_data.append(md)
            out[-1].unit = md.unit
        return out

    setattr(cls, "get_metric_statistics", get_metric_statistics)  # noqa: B010 (a method replaced on the class)
    setattr(cls, "_bench_exact", True)  # noqa: B010
