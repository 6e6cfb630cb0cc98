"""Seeding SageMaker endpoints of every type, their traffic and autoscaling (tests, demo, bench).

Endpoints are created InService (moto) and then aged with `age`, since no data counts as no
traffic only for an endpoint InService for the whole idle window.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from reaper_devkit.moto_ext import sagemaker_inference
from reaper_devkit.seed import ROLE, aligned, put_series

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference:2.1.0-gpu-py310"


def _tags(tags: dict[str, str] | None) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in (tags or {}).items()]


def model(sm: Any, name: str) -> None:
    sm.create_model(ModelName=name, ExecutionRoleArn=ROLE, PrimaryContainer={"Image": IMAGE, "ModelDataUrl": f"s3://models/{name}.tar.gz"})


def classic(
    sm: Any,
    name: str,
    tags: dict[str, str] | None = None,
    instance_type: str = "ml.g4dn.xlarge",
    count: int = 1,
    variants: Sequence[str] = ("AllTraffic",),
) -> str:
    """Model(s) + config + endpoint named after the endpoint: <name>-model-<variant>, <name>-config."""
    specs = []
    for v in variants:
        model(sm, f"{name}-model-{v.lower()}")
        specs.append(
            {
                "VariantName": v,
                "ModelName": f"{name}-model-{v.lower()}",
                "InstanceType": instance_type,
                "InitialInstanceCount": count,
                "InitialVariantWeight": 1.0,
            }
        )
    sm.create_endpoint_config(EndpointConfigName=f"{name}-config", ProductionVariants=specs, Tags=_tags({"ml:project": "demo"}))
    arn: str = sm.create_endpoint(EndpointName=name, EndpointConfigName=f"{name}-config", Tags=_tags(tags))["EndpointArn"]
    return arn


def components(
    sm: Any,
    name: str,
    copies: dict[str, int],
    tags: dict[str, str] | None = None,
    instance_type: str = "ml.g4dn.xlarge",
    managed_min: int = 0,
) -> str:
    """An endpoint that hosts inference components (no model on the variant, managed instance scaling)."""
    sm.create_endpoint_config(
        EndpointConfigName=f"{name}-config",
        ExecutionRoleArn=ROLE,
        ProductionVariants=[
            {
                "VariantName": "AllTraffic",
                "InstanceType": instance_type,
                "InitialInstanceCount": 1,
                "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": managed_min, "MaxInstanceCount": 4},
                "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"},
            }
        ],
    )
    arn: str = sm.create_endpoint(EndpointName=name, EndpointConfigName=f"{name}-config", Tags=_tags(tags))["EndpointArn"]
    for ic, n in copies.items():
        model(sm, f"{ic}-model")
        sm.create_inference_component(
            InferenceComponentName=ic,
            EndpointName=name,
            VariantName="AllTraffic",
            Specification={
                "ModelName": f"{ic}-model",
                "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 1, "MinMemoryRequiredInMb": 1024},
            },
            RuntimeConfig={"CopyCount": n},
        )
    return arn


def asynchronous(sm: Any, name: str, tags: dict[str, str] | None = None, instance_type: str = "ml.m5.xlarge", count: int = 1) -> str:
    model(sm, f"{name}-model")
    sm.create_endpoint_config(
        EndpointConfigName=f"{name}-config",
        ProductionVariants=[
            {"VariantName": "AllTraffic", "ModelName": f"{name}-model", "InstanceType": instance_type, "InitialInstanceCount": count}
        ],
        AsyncInferenceConfig={"OutputConfig": {"S3OutputPath": f"s3://async-out/{name}/"}},
    )
    arn: str = sm.create_endpoint(EndpointName=name, EndpointConfigName=f"{name}-config", Tags=_tags(tags))["EndpointArn"]
    return arn


def serverless(sm: Any, name: str, tags: dict[str, str] | None = None) -> str:
    model(sm, f"{name}-model")
    sm.create_endpoint_config(
        EndpointConfigName=f"{name}-config",
        ProductionVariants=[
            {"VariantName": "AllTraffic", "ModelName": f"{name}-model", "ServerlessConfig": {"MemorySizeInMB": 2048, "MaxConcurrency": 5}}
        ],
    )
    arn: str = sm.create_endpoint(EndpointName=name, EndpointConfigName=f"{name}-config", Tags=_tags(tags))["EndpointArn"]
    return arn


def age(name: str, now: datetime, minutes: float, region: str = "us-east-1") -> None:
    """The endpoint was created (and last changed) `minutes` before `now`."""
    sagemaker_inference.set_times(name, now - timedelta(minutes=minutes), region=region)


def _periods(now: datetime, values: Sequence[float | None]) -> list[tuple[datetime, float]]:
    end = aligned(now)
    return [(end - timedelta(minutes=5 * (k + 1)) + timedelta(seconds=7), float(v)) for k, v in enumerate(values) if v is not None]


def invocations(cw: Any, endpoint: str, now: datetime, values: Sequence[float | None], variant: str = "AllTraffic") -> None:
    """Invocations (Sum) for the last len(values) 5-minute periods, newest first; None = no data."""
    put_series(cw, "AWS/SageMaker", "Invocations", {"EndpointName": endpoint, "VariantName": variant}, _periods(now, values))


def component_invocations(cw: Any, component: str, now: datetime, values: Sequence[float | None]) -> None:
    put_series(cw, "AWS/SageMaker", "Invocations", {"InferenceComponentName": component}, _periods(now, values))


def processed(cw: Any, endpoint: str, now: datetime, values: Sequence[float | None], variant: str = "AllTraffic") -> None:
    put_series(cw, "AWS/SageMaker", "InvocationsProcessed", {"EndpointName": endpoint, "VariantName": variant}, _periods(now, values))


def backlog(cw: Any, endpoint: str, now: datetime, values: Sequence[float | None]) -> None:
    put_series(cw, "AWS/SageMaker", "ApproximateBacklogSize", {"EndpointName": endpoint}, _periods(now, values))


def autoscale(aas: Any, endpoint: str, minimum: int = 1, maximum: int = 4, variant: str = "AllTraffic") -> str:
    """A registered variant with a target-tracking policy on invocations per instance."""
    rid = f"endpoint/{endpoint}/variant/{variant}"
    aas.register_scalable_target(
        ServiceNamespace="sagemaker",
        ResourceId=rid,
        ScalableDimension="sagemaker:variant:DesiredInstanceCount",
        MinCapacity=minimum,
        MaxCapacity=maximum,
    )
    aas.put_scaling_policy(
        PolicyName=f"{endpoint}-invocations",
        ServiceNamespace="sagemaker",
        ResourceId=rid,
        ScalableDimension="sagemaker:variant:DesiredInstanceCount",
        PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 70.0,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"},
            "ScaleInCooldown": 300,
            "ScaleOutCooldown": 60,
        },
    )
    return rid


def system_tags(arn: str, tags: dict[str, str]) -> None:
    """Tags AWS writes itself (`aws:cloudformation:stack-name` on a stack's endpoint): no API caller may
    set an `aws:` key (the kit refuses it, as AWS does), so they go straight into moto's backend."""
    parts = arn.split(":")
    sagemaker_inference._backend(parts[3], parts[4]).add_tags(arn, _tags(tags))
