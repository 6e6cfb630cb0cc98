"""A seeded account of GPU instances, one per case the ec2 kind must tell apart, shared by the
handler and CLI tests. `expected` maps each Name tag to (verdict in enforce with grace 0, words of its reason)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from reaper_devkit import seed_ec2

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
BUSY_GPU = [85.0] * 4 + [0.0] * 32
BUSY_NET = [60_000_000.0] + [40_000.0] * 35


@dataclass
class Fleet:
    ids: dict[str, str]  # Name tag -> instance id
    expected: dict[str, tuple[str, str]]  # Name tag -> (verdict, words in the reason)
    decoy: str  # a CPU instance, never listed

    def name_of(self, instance_id: str) -> str:
        return next(n for n, i in self.ids.items() if i == instance_id)


def build(ec2: Any, cw: Any, now: datetime) -> Fleet:
    ami = seed_ec2.image(ec2)
    ids: dict[str, str] = {}
    expected: dict[str, tuple[str, str]] = {}

    def add(
        name: str,
        verdict: str,
        words: str,
        itype: str = "g5g.xlarge",
        tags: dict[str, str] | None = None,
        metrics: dict[str, Any] | None = None,
        **kw: Any,
    ) -> str:
        iid = seed_ec2.instance(ec2, itype, {"Name": name, **(tags if tags is not None else DEV)}, now=now, ami=ami, **kw)
        if metrics is not None:
            seed_ec2.metrics(cw, iid, now, **metrics)
        ids[name], expected[name] = iid, (verdict, words)
        return iid

    idle: dict[str, Any] = {}
    later = (now + timedelta(days=3)).strftime("%Y-%m-%d")
    add("idle", "act", "idle for at least", metrics=idle)
    add("idle-hibernate", "act", "idle for at least", metrics=idle, hibernate=True)
    add("idle-disposable", "act", "idle for at least", itype="g5.xlarge", tags={**DEV, "reaper:disposable": "true"}, metrics=idle)
    add("idle-neuron", "act", "idle for at least", itype="inf2.xlarge", metrics={"gpu": None, "neuron": [0.0] * 36})
    add("busy-gpu", "keep", "in use", metrics={"gpu": BUSY_GPU})
    add("busy-network", "keep", "in use", metrics={"network": BUSY_NET})
    add("no-gpu-metric", "keep", "no nvidia_smi_utilization_gpu", metrics={"gpu": None})
    # the agent's default configuration: one series per GPU (index, name, arch, host beside InstanceId)
    add(
        "idle-per-gpu",
        "act",
        "GPU utilization (busiest GPU) ≤ 0 %",
        itype="g4dn.12xlarge",
        metrics={"gpu": None, "per_gpu": [[0.0] * 36] * 4},
        tags={**DEV, "reaper:disposable": "true"},
    )
    add(
        "one-busy-gpu-of-4",
        "keep",
        "in use",
        itype="g4dn.12xlarge",
        metrics={"gpu": None, "per_gpu": [[0.0] * 36] * 3 + [BUSY_GPU]},
        tags={**DEV, "reaper:disposable": "true"},
    )
    add("gpu-gap", "keep", "gap in GPU utilization (busiest GPU)", metrics={"gpu": [0.0, 0.0, None, 0.0] + [0.0] * 32})
    add("cpu-gap", "keep", "gap in CPUUtilization", metrics={"cpu": [1.0, None, None] + [1.0] * 33})
    add("just-started", "keep", "started", metrics=idle, launched_ago=timedelta(minutes=20))
    add("instance-store-data", "keep", "instance store", itype="g5.xlarge", metrics=idle)
    add("store-root", "keep", "instance-store root", metrics=idle, root_device_type="instance-store")
    add("stop-protected", "keep", "stop-protected", metrics=idle, stop_protected=True)
    add("asg", "keep", "Auto Scaling group", tags={**DEV, "aws:autoscaling:groupName": "trainers"}, metrics=idle)
    add("eks", "keep", "EKS node", tags={**DEV, "eks:cluster-name": "ml"}, metrics=idle)
    add("k8s", "keep", "Kubernetes node", tags={**DEV, "kubernetes.io/cluster/ml": "owned"}, metrics=idle)
    add("batch", "keep", "AWS Batch", tags={**DEV, "AWSBatchServiceTag": "batch"}, metrics=idle)
    add("pcluster", "keep", "ParallelCluster", tags={**DEV, "parallelcluster:cluster-name": "hpc"}, metrics=idle)
    add("hyperpod", "keep", "HyperPod", tags={**DEV, "sagemaker:cluster-name": "pod"}, metrics=idle)
    add("emr", "keep", "EMR", tags={**DEV, "aws:elasticmapreduce:job-flow-id": "j-1"}, metrics=idle)
    add("ec2-fleet", "keep", "EC2 Fleet", tags={**DEV, "aws:ec2:fleet-id": "fleet-1"}, metrics=idle)
    add("spot-fleet", "keep", "Spot Fleet", tags={**DEV, "aws:ec2spot:fleet-request-id": "sfr-1"}, metrics=idle)
    # cluster managers outside AWS: their nodes are in no Auto Scaling group (issue 23, item 1)
    ray = {"ml:stage": "dev", "ray-cluster-name": "llm", "ray-node-type": "head", "ray-launch-config": "3f2a"}
    add("ray-head", "keep", "managed by Ray", tags=ray, metrics=idle)
    sky = {"ml:stage": "dev", "skypilot-cluster-name": "sky-7b", "skypilot-user": "ana", "ray-cluster-name": "sky-7b-2ea4"}
    add("skypilot", "keep", "managed by SkyPilot", tags=sky, metrics=idle)
    add("unknown-manager", "keep", "cluster manager mlreaper does not know", tags={"ml:stage": "dev", "acme-cluster": "x"}, metrics=idle)
    add("claimed-cluster-tag", "act", "idle for at least", tags={**DEV, "acme-cluster": "x"}, metrics=idle)
    add("exempt", "exempt", "reaper:exempt", tags={**DEV, "reaper:exempt": "true"}, metrics=idle)
    add("snoozed", "exempt", "snoozed", tags={**DEV, "reaper:snooze-until": later}, metrics=idle)
    add("prod", "exempt", "production stage", tags={"ml:owner": "ops@example.com", "ml:stage": "prod"}, metrics=idle)
    add("bad-tag", "exempt", "reaper:idle-minutes", tags={**DEV, "reaper:idle-minutes": "soon"}, metrics=idle)
    add("hostile-tag", "act", "idle for at least", tags={**DEV, "Name": "<!channel> *x* `rm -rf`", "ml:project": "<@U1>&"}, metrics=idle)
    ids["<!channel> *x* `rm -rf`"] = ids.pop("hostile-tag")
    expected["<!channel> *x* `rm -rf`"] = expected.pop("hostile-tag")
    for name, (request_type, interruption, verdict, words) in {
        "spot-one-time": ("one-time", "terminate", "keep", "only lets terminate"),
        "spot-persistent-stop": ("persistent", "stop", "act", "idle for at least"),
    }.items():
        iid = seed_ec2.spot_instance(ec2, request_type, interruption, {"Name": name, **DEV}, now=now, instance_type="g5g.xlarge")
        seed_ec2.metrics(cw, iid, now)
        ids[name], expected[name] = iid, (verdict, words)
    iid = seed_ec2.spot_run_instance(
        ec2, "one-time", "terminate", {"Name": "spot-run-one-time", **DEV}, now=now, instance_type="g5g.xlarge"
    )
    seed_ec2.metrics(cw, iid, now)
    ids["spot-run-one-time"], expected["spot-run-one-time"] = iid, ("keep", "only lets terminate")
    decoy = seed_ec2.instance(ec2, "t3.large", {"Name": "cpu-decoy", **DEV}, now=now, ami=ami)
    seed_ec2.metrics(cw, decoy, now, gpu=None)
    return Fleet(ids, expected, decoy)
