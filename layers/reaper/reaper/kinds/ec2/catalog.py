"""Which instance types carry an accelerator, read from DescribeInstanceTypes, not from a hand list.

An instance type is accelerated when its description has GpuInfo (NVIDIA/AMD GPUs), NeuronInfo
(Inferentia 2, Trainium) or InferenceAcceleratorInfo (Inferentia 1 on older API versions):
https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_InstanceTypeInfo.html
The catalogue of a region changes only when AWS launches a type: it is read once per region per
process (a warm Lambda keeps it) — about ten paged calls in a real region, one in moto.
"""

from __future__ import annotations

from dataclasses import dataclass

from reaper.aws.clients import Clients
from reaper.kinds.ec2.shapes import DeviceInfo, InstanceStorageInfo, InstanceTypeInfo, instance_types


@dataclass(frozen=True)
class AcceleratedType:
    name: str
    accelerator: str  # "gpu", "neuron", "inference"
    detail: str  # "4 x NVIDIA A10G"
    instance_store_gib: int  # 0 when the type has no instance store
    hibernation_supported: bool


_cache: dict[str, dict[str, AcceleratedType]] = {}


def accelerated_types(clients: Clients) -> dict[str, AcceleratedType]:
    """{instance type: what accelerates it} for the region, read once per process."""
    cached = _cache.get(clients.region)
    if cached is not None:
        return cached
    found: dict[str, AcceleratedType] = {}
    for page in clients("ec2").get_paginator("describe_instance_types").paginate(PaginationConfig={"PageSize": 100}):
        for info in instance_types(page):
            described = describe(info)
            if described is not None:
                found[described.name] = described
    _cache[clients.region] = found
    return found


def _devices(info: InstanceTypeInfo) -> tuple[str, list[DeviceInfo]] | None:
    """(accelerator kind, its devices) from the first of GpuInfo, NeuronInfo, InferenceAcceleratorInfo that is set."""
    gpu, neuron, inference = info.get("GpuInfo"), info.get("NeuronInfo"), info.get("InferenceAcceleratorInfo")
    if gpu:
        return "gpu", gpu.get("Gpus", [])
    if neuron:
        return "neuron", neuron.get("NeuronDevices", [])
    if inference:
        return "inference", inference.get("Accelerators", [])
    return None


def describe(info: InstanceTypeInfo) -> AcceleratedType | None:
    """The accelerator of one InstanceTypeInfo, or None for a type without one."""
    found = _devices(info)
    if found is None:
        return None
    kind, devices = found
    storage = info.get("InstanceStorageInfo") or InstanceStorageInfo()
    return AcceleratedType(
        name=str(info["InstanceType"]),
        accelerator=kind,
        detail=", ".join(_device_text(d) for d in devices) or kind,
        instance_store_gib=int(storage.get("TotalSizeInGB", 0) or 0) if info.get("InstanceStorageSupported") else 0,
        hibernation_supported=bool(info.get("HibernationSupported")),
    )


def _device_text(d: DeviceInfo) -> str:
    """'4 x NVIDIA A10G': its count, maker and name (those it has)."""
    name = " ".join(str(v) for v in (d.get("Manufacturer", ""), d.get("Name", "")) if v)
    return f"{d.get('Count', 1)} x {name}".strip()


def forget() -> None:
    """Empty the cache (tests; a process never needs it)."""
    _cache.clear()
