"""Seeding GPU EC2 instances and their metrics, shared by tests, the demo scene and the benchmark."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from reaper_devkit.moto_ext.ec2 import shape
from reaper_devkit.seed import periods, put_series

IDLE_CPU = [1.5] * 36  # 3 hours of 5-minute periods, newest first
IDLE_NET = [40_000.0] * 36  # bytes per 5 minutes, each direction
IDLE_GPU = [0.0] * 36


def image(ec2: Any) -> str:
    """An EBS-backed image: moto's own, or one registered here where moto loads none
    (the tests set MOTO_EC2_LOAD_DEFAULT_AMIS=false, which saves building ~50,000 of them)."""
    images = ec2.describe_images(Filters=[{"Name": "root-device-type", "Values": ["ebs"]}])["Images"]
    if images:
        return str(images[0]["ImageId"])
    made = ec2.register_image(
        Name="mlreaper-seed-dlami",
        RootDeviceName="/dev/xvda",
        BlockDeviceMappings=[{"DeviceName": "/dev/xvda", "Ebs": {"VolumeSize": 100, "VolumeType": "gp3"}}],
    )
    return str(made["ImageId"])


def instance(
    ec2: Any,
    instance_type: str = "g5.xlarge",
    tags: dict[str, str] | None = None,
    *,
    now: datetime,
    launched_ago: timedelta = timedelta(hours=6),
    root_device_type: str = "ebs",
    hibernate: bool = False,
    stop_protected: bool = False,
    ami: str | None = None,
) -> str:
    """One running on-demand instance, launched `launched_ago` before `now`."""
    kwargs: dict[str, Any] = {"ImageId": ami or image(ec2), "MinCount": 1, "MaxCount": 1, "InstanceType": instance_type}
    if tags:
        kwargs["TagSpecifications"] = [{"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]
    if hibernate:
        kwargs["HibernationOptions"] = {"Configured": True}
    if stop_protected:
        kwargs["DisableApiStop"] = True
    iid = str(ec2.run_instances(**kwargs)["Instances"][0]["InstanceId"])
    shape(iid, launched_at=now - launched_ago, root_device_type=root_device_type)
    return iid


def spot_instance(
    ec2: Any, request_type: str, interruption: str, tags: dict[str, str] | None = None, *, now: datetime, instance_type: str = "g5.xlarge"
) -> str:
    """A Spot instance launched by a Spot request of that type and interruption behaviour."""
    spec: dict[str, Any] = {"ImageId": image(ec2), "InstanceType": instance_type}
    req = ec2.request_spot_instances(
        InstanceCount=1, Type=request_type, InstanceInterruptionBehavior=interruption, LaunchSpecification=spec
    )
    iid = str(req["SpotInstanceRequests"][0]["InstanceId"])
    if tags:
        ec2.create_tags(Resources=[iid], Tags=[{"Key": k, "Value": v} for k, v in tags.items()])
    shape(iid, launched_at=now - timedelta(hours=6))
    return iid


def spot_run_instance(
    ec2: Any, request_type: str, interruption: str, tags: dict[str, str] | None = None, *, now: datetime, instance_type: str = "g5.xlarge"
) -> str:
    """A Spot instance launched by RunInstances with InstanceMarketOptions (EC2 makes its Spot request)."""
    options = {"MarketType": "spot", "SpotOptions": {"SpotInstanceType": request_type, "InstanceInterruptionBehavior": interruption}}
    kwargs: dict[str, Any] = {"ImageId": image(ec2), "MinCount": 1, "MaxCount": 1, "InstanceType": instance_type}
    if tags:
        kwargs["TagSpecifications"] = [{"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]
    iid = str(ec2.run_instances(InstanceMarketOptions=options, **kwargs)["Instances"][0]["InstanceId"])
    shape(iid, launched_at=now - timedelta(hours=6))
    return iid


def metrics(
    cloudwatch: Any,
    instance_id: str,
    now: datetime,
    cpu: Sequence[float | None] = IDLE_CPU,
    network: Sequence[float | None] = IDLE_NET,
    gpu: Sequence[float | None] | None = IDLE_GPU,
    neuron: Sequence[float | None] | None = None,
    per_gpu: Sequence[Sequence[float | None]] | None = None,
    gpu_name: str = "NVIDIA A10G",
    ahead: int = 0,
) -> None:
    """Datapoints for the last len(values) 5-minute periods, newest first (the newest is the period just
    ended, which the reaper does not need yet); None is a gap. gpu=None: no agent on the box. `ahead`:
    every series goes on with its newest value for that many periods after `now` (seed.periods).

    `gpu` is the agent configured with aggregation_dimensions [["InstanceId"]] (one series per instance);
    `per_gpu` its default: one series per GPU, with the dimensions the agent adds (index, name, arch,
    host) beside InstanceId from append_dimensions (CloudWatch-Agent-NVIDIA-GPU.html)."""
    dims = {"InstanceId": instance_id}

    def points(values: Sequence[float | None]) -> list[tuple[datetime, float]]:
        return periods(now, values, ahead)

    put_series(cloudwatch, "AWS/EC2", "CPUUtilization", dims, points(cpu))
    put_series(cloudwatch, "AWS/EC2", "NetworkIn", dims, points(network))
    put_series(cloudwatch, "AWS/EC2", "NetworkOut", dims, points(network))
    if gpu is not None:
        put_series(cloudwatch, "CWAgent", "nvidia_smi_utilization_gpu", dims, points(gpu))
        put_series(cloudwatch, "CWAgent", "nvidia_smi_utilization_memory", dims, points(gpu))
    if neuron is not None:
        put_series(cloudwatch, "CWAgent", "neuroncore_utilization", dims, points(neuron))
    for index, values in enumerate(per_gpu or ()):
        host = f"ip-10-0-{index}-{len(instance_id)}.ec2.internal"
        gpu_dims = {**dims, "index": str(index), "name": gpu_name, "arch": "Ampere", "host": host}
        put_series(cloudwatch, "CWAgent", "nvidia_smi_utilization_gpu", gpu_dims, points(values))
        put_series(cloudwatch, "CWAgent", "nvidia_smi_utilization_memory", gpu_dims, points(values))


def state(ec2: Any, instance_id: str) -> str:
    return str(ec2.describe_instances(InstanceIds=[instance_id])["Reservations"][0]["Instances"][0]["State"]["Name"])


def tags(ec2: Any, instance_id: str) -> dict[str, str]:
    inst = ec2.describe_instances(InstanceIds=[instance_id])["Reservations"][0]["Instances"][0]
    return {t["Key"]: t["Value"] for t in inst.get("Tags", [])}
