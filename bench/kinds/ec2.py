"""Bench seeder: n EC2 instances — 40 % CPU decoys (never listed), and of the GPU 60 %: a quarter idle,
a quarter busy on the GPU at low CPU, a sixth with no GPU agent (of the boxes with the agent, a third
publish its default per-GPU series, four GPUs each, the rest one series aggregated on InstanceId), a sixth in an Auto Scaling group or
EKS (kept, no metrics read), the rest busy on CPU; 13 periods of metrics each.

The type catalogue cache is emptied first, so each measurement pays for DescribeInstanceTypes
(one call in moto; about ten pages in a real region, once per process).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import boto3

from reaper.kinds.ec2 import catalog
from reaper_devkit import seed_ec2
from reaper_devkit.moto_ext.ec2 import shape
from reaper_devkit.seed import aligned, put_metric_data_in_process

KIND = "ec2"
DECOY_TYPES = ("t3.large", "m5.xlarge", "c5.2xlarge")
GPU_TYPES = ("g5g.xlarge", "g4dn.xlarge", "p4d.24xlarge", "inf2.xlarge", "g6.xlarge")


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    catalog.forget()
    ec2 = session.client("ec2")
    ami = seed_ec2.image(ec2)
    end = aligned(now)
    data: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def put(namespace: str, metric: str, iid: str, values: list[float], more: dict[str, str] | None = None) -> None:
        dims = [{"Name": "InstanceId", "Value": iid}] + [{"Name": k, "Value": v} for k, v in (more or {}).items()]
        for k, v in enumerate(values):
            ts = end - timedelta(minutes=5 * (k + 1)) + timedelta(seconds=5)
            data.setdefault((namespace, metric), []).append({"MetricName": metric, "Dimensions": dims, "Timestamp": ts, "Value": v})

    for i in range(n):
        gpu = i % 5 >= 2  # 60 % accelerated
        itype = GPU_TYPES[i % len(GPU_TYPES)] if gpu else DECOY_TYPES[i % len(DECOY_TYPES)]
        tags = [{"Key": "ml:owner", "Value": f"user{i % 37}@example.com"}, {"Key": "ml:stage", "Value": "dev"}]
        case = (i // 5) % 6
        if gpu and case == 4:
            tags.append({"Key": "aws:autoscaling:groupName" if i % 2 else "eks:cluster-name", "Value": "pool"})
        iid = ec2.run_instances(
            ImageId=ami, MinCount=1, MaxCount=1, InstanceType=itype, TagSpecifications=[{"ResourceType": "instance", "Tags": tags}]
        )["Instances"][0]["InstanceId"]
        shape(iid, launched_at=now - timedelta(hours=5))
        cpu = [40.0] * 2 + [1.0] * 11 if case == 5 else [1.0] * 13
        put("AWS/EC2", "CPUUtilization", iid, cpu)
        put("AWS/EC2", "NetworkIn", iid, [20_000.0] * 13)
        put("AWS/EC2", "NetworkOut", iid, [20_000.0] * 13)
        if case != 3:  # no agent on a sixth
            busy = [90.0] * 13 if case in (1, 2) and i % 2 else [0.0] * 13
            if itype.startswith("inf"):
                put("CWAgent", "neuroncore_utilization", iid, busy)
            elif i % 3 == 0:  # the agent's default: one series per GPU
                for g in range(4):
                    gpu_dims = {"index": str(g), "name": "NVIDIA A10G", "arch": "Ampere", "host": f"ip-{i}"}
                    put("CWAgent", "nvidia_smi_utilization_gpu", iid, busy if g == 3 else [0.0] * 13, gpu_dims)
                    put("CWAgent", "nvidia_smi_utilization_memory", iid, [0.0] * 13, gpu_dims)
            else:
                put("CWAgent", "nvidia_smi_utilization_gpu", iid, busy)
                put("CWAgent", "nvidia_smi_utilization_memory", iid, busy)
    for (namespace, _metric), points in data.items():
        put_metric_data_in_process(namespace, points)  # moto's backend directly: the same datapoints
