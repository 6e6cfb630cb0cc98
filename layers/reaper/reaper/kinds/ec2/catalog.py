"""Which instance types carry an accelerator, read from DescribeInstanceTypes, not from a hand list.

An instance type is accelerated when its description has GpuInfo (NVIDIA/AMD GPUs), NeuronInfo
(Inferentia 2, Trainium) or InferenceAcceleratorInfo (Inferentia 1 on older API versions):
https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_InstanceTypeInfo.html
The catalogue of a region changes only when AWS launches a type: it is read once per region per
process (a warm Lambda keeps it) — about ten paged calls in a real region, one in moto.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reaper.aws.clients import Clients


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
        for info in page.get("InstanceTypes", []):
            described = describe(info)
            if described is not None:
                found[described.name] = described
    _cache[clients.region] = found
    return found


def describe(info: dict[str, Any]) -> AcceleratedType | None:
    """The accelerator of one InstanceTypeInfo, or None for a type without one."""
    for key, kind, items in (
        ("GpuInfo", "gpu", "Gpus"),
        ("NeuronInfo", "neuron", "NeuronDevices"),
        ("InferenceAcceleratorInfo", "inference", "Accelerators"),
    ):
        section = info.get(key)
        if section:
            parts = [
                f"{d.get('Count', 1)} x {' '.join(str(d.get(k, '')) for k in ('Manufacturer', 'Name') if d.get(k))}".strip()
                for d in section.get(items, [])
            ]
            storage = info.get("InstanceStorageInfo") or {}
            return AcceleratedType(
                name=str(info["InstanceType"]),
                accelerator=kind,
                detail=", ".join(parts) or kind,
                instance_store_gib=int(storage.get("TotalSizeInGB", 0) or 0) if info.get("InstanceStorageSupported") else 0,
                hibernation_supported=bool(info.get("HibernationSupported")),
            )
    return None


def forget() -> None:
    """Empty the cache (tests; a process never needs it)."""
    _cache.clear()
