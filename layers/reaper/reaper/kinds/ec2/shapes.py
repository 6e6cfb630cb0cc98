"""The EC2 answers the ec2 kind reads, typed (botocore gives plain dicts): only the members the code reads.

Every member AWS marks optional is optional here (``total=False``; EC2's reference marks nearly all response
members so). Each shape is named after its page in the EC2 API reference
(https://docs.aws.amazon.com/AWSEC2/latest/APIReference/): DescribeInstances' Reservation and Instance
(API_Reservation.html, API_Instance.html, API_InstanceState.html, API_Tag.html, API_HibernationOptions.html),
DescribeSpotInstanceRequests' SpotInstanceRequest (API_SpotInstanceRequest.html), DescribeInstanceTypes'
InstanceTypeInfo (API_InstanceTypeInfo.html, API_GpuInfo.html, API_GpuDeviceInfo.html, API_NeuronInfo.html,
API_NeuronDeviceInfo.html, API_InferenceAcceleratorInfo.html, API_InferenceDeviceInfo.html,
API_InstanceStorageInfo.html).

A response enters typed once, where it is read (the helpers below): the clients are untyped (`Any`), so these
annotated helpers are the only boundary; nothing else casts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict


class Tag(TypedDict, total=False):
    Key: str
    Value: str


class InstanceState(TypedDict, total=False):
    Name: str  # pending | running | shutting-down | terminated | stopping | stopped
    Code: int


class HibernationOptions(TypedDict, total=False):
    Configured: bool


class Instance(TypedDict, total=False):
    InstanceId: str
    InstanceType: str
    State: InstanceState
    Tags: list[Tag]
    LaunchTime: datetime
    InstanceLifecycle: str  # spot | scheduled | capacity-block; absent on On-Demand
    SpotInstanceRequestId: str
    RootDeviceType: str  # ebs | instance-store
    HibernationOptions: HibernationOptions


class Reservation(TypedDict, total=False):
    OwnerId: str
    Instances: list[Instance]


class SpotInstanceRequest(TypedDict, total=False):
    SpotInstanceRequestId: str
    Type: str  # one-time | persistent
    State: str
    InstanceInterruptionBehavior: str  # hibernate | stop | terminate


class DeviceInfo(TypedDict, total=False):
    """A GpuDeviceInfo, NeuronDeviceInfo or InferenceDeviceInfo: the members read are the same in the three."""

    Count: int
    Manufacturer: str
    Name: str


class GpuInfo(TypedDict, total=False):
    Gpus: list[DeviceInfo]


class NeuronInfo(TypedDict, total=False):
    NeuronDevices: list[DeviceInfo]


class InferenceAcceleratorInfo(TypedDict, total=False):
    Accelerators: list[DeviceInfo]


class InstanceStorageInfo(TypedDict, total=False):
    TotalSizeInGB: int


class InstanceTypeInfo(TypedDict, total=False):
    InstanceType: str
    GpuInfo: GpuInfo
    NeuronInfo: NeuronInfo
    InferenceAcceleratorInfo: InferenceAcceleratorInfo
    InstanceStorageSupported: bool
    InstanceStorageInfo: InstanceStorageInfo
    HibernationSupported: bool


# -- the one boundary per shape: a botocore answer (Any) enters typed here -------------------------------


def reservations(page: Any) -> list[Reservation]:
    """A DescribeInstances answer's (or page's) reservations."""
    out: list[Reservation] = page.get("Reservations", [])
    return out


def spot_requests(page: Any) -> list[SpotInstanceRequest]:
    """A DescribeSpotInstanceRequests answer's requests."""
    out: list[SpotInstanceRequest] = page.get("SpotInstanceRequests", [])
    return out


def instance_types(page: Any) -> list[InstanceTypeInfo]:
    """A DescribeInstanceTypes page's types."""
    out: list[InstanceTypeInfo] = page.get("InstanceTypes", [])
    return out
