"""The AWS answers the endpoint kind reads, typed (botocore gives plain dicts): only the members the code reads.

Every member AWS marks optional (``Required: No``) is optional here (``total=False``); a member that is
always there is ``Required``. Each shape is named after its AWS reference page:

- SageMaker: DescribeEndpointConfig (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeEndpointConfig.html)
  and its ProductionVariant (API_ProductionVariant.html); ListModels' ModelSummary (API_ListModels.html,
  API_ModelSummary.html); DescribeInferenceComponent (API_DescribeInferenceComponent.html,
  API_InferenceComponentRuntimeConfigSummary.html); ListInferenceComponents (API_InferenceComponentSummary.html).
  DescribeEndpoint and Search's Endpoint, with ProductionVariantSummary and its ManagedInstanceScaling, are read by the
  unit costs too: they live in reaper.aws.sagemaker_shapes, typed once.
- Application Auto Scaling: ScalableTarget (https://docs.aws.amazon.com/autoscaling/application/APIReference/API_ScalableTarget.html),
  SuspendedState (API_SuspendedState.html), ScalingPolicy (API_ScalingPolicy.html) with its
  StepScalingPolicyConfiguration (API_StepScalingPolicyConfiguration.html, API_StepAdjustment.html) or
  TargetTrackingScalingPolicyConfiguration (API_TargetTrackingScalingPolicyConfiguration.html), Alarm (API_Alarm.html).
- CloudWatch: MetricAlarm (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricAlarm.html),
  with the Dimension reaper.aws.metrics types once (API_Dimension.html).

A response enters typed once, where it is read (`described`, `endpoint_config`, ...): the clients are untyped
(`Any`), so the annotated helpers below are the only boundary; nothing else casts.
"""

from __future__ import annotations

from typing import Any, Required, TypedDict

from reaper.aws.metrics import Dimension
from reaper.aws.sagemaker_shapes import DescribeEndpointOutput, ManagedInstanceScaling


class ProductionVariant(TypedDict, total=False):
    """A variant as its endpoint configuration declares it."""

    VariantName: Required[str]
    ModelName: str  # none on a variant that hosts inference components
    InstanceType: str
    InitialInstanceCount: int
    ServerlessConfig: dict[str, int]
    ManagedInstanceScaling: ManagedInstanceScaling


class DescribeEndpointConfigOutput(TypedDict, total=False):
    EndpointConfigName: Required[str]
    ProductionVariants: Required[list[ProductionVariant]]
    AsyncInferenceConfig: dict[str, object]  # only whether it is there is read


class ModelSummary(TypedDict):
    ModelName: str


class ListModelsOutput(TypedDict, total=False):
    Models: Required[list[ModelSummary]]
    NextToken: str


class InferenceComponentRuntimeConfigSummary(TypedDict, total=False):
    DesiredCopyCount: int
    CurrentCopyCount: int


class DescribeInferenceComponentOutput(TypedDict, total=False):
    InferenceComponentName: Required[str]
    EndpointName: Required[str]
    VariantName: str
    RuntimeConfig: InferenceComponentRuntimeConfigSummary


class InferenceComponentSummary(TypedDict):
    InferenceComponentName: str
    EndpointName: str


class SuspendedState(TypedDict, total=False):
    DynamicScalingInSuspended: bool
    DynamicScalingOutSuspended: bool
    ScheduledScalingSuspended: bool


class ScalableTarget(TypedDict, total=False):
    ResourceId: Required[str]
    MinCapacity: Required[int]
    MaxCapacity: Required[int]
    SuspendedState: SuspendedState


class StepAdjustment(TypedDict, total=False):
    MetricIntervalLowerBound: float
    MetricIntervalUpperBound: float
    ScalingAdjustment: Required[int]


class StepScalingPolicyConfiguration(TypedDict, total=False):
    AdjustmentType: str
    StepAdjustments: list[StepAdjustment]
    MinAdjustmentMagnitude: int
    Cooldown: int
    MetricAggregationType: str


class TargetTrackingScalingPolicyConfiguration(TypedDict, total=False):
    TargetValue: Required[float]
    # the metric specification is kept whole and put back as it was: PutScalingPolicy takes it as it came
    PredefinedMetricSpecification: dict[str, object]
    CustomizedMetricSpecification: dict[str, object]
    ScaleOutCooldown: int
    ScaleInCooldown: int
    DisableScaleIn: bool


class Alarm(TypedDict):
    AlarmName: str
    AlarmARN: str


class ScalingPolicy(TypedDict, total=False):
    PolicyARN: Required[str]
    PolicyName: Required[str]
    PolicyType: Required[str]  # StepScaling | TargetTrackingScaling | PredictiveScaling
    StepScalingPolicyConfiguration: StepScalingPolicyConfiguration
    TargetTrackingScalingPolicyConfiguration: TargetTrackingScalingPolicyConfiguration
    Alarms: list[Alarm]


class MetricAlarm(TypedDict, total=False):
    """What has_wake_policy reads of an alarm; a step policy's alarms are kept whole (PolicyRecord.alarms)."""

    AlarmName: str
    AlarmActions: list[str]
    Dimensions: list[Dimension]


# -- the one boundary per shape: a botocore answer (Any) enters typed here -------------------------------


def described(sm: Any, name: str) -> DescribeEndpointOutput:
    """DescribeEndpoint; its ClientError (not found) is the caller's."""
    out: DescribeEndpointOutput = sm.describe_endpoint(EndpointName=name)
    return out


def endpoint_config(sm: Any, name: str) -> DescribeEndpointConfigOutput:
    out: DescribeEndpointConfigOutput = sm.describe_endpoint_config(EndpointConfigName=name)
    return out


def inference_component(sm: Any, name: str) -> DescribeInferenceComponentOutput:
    out: DescribeInferenceComponentOutput = sm.describe_inference_component(InferenceComponentName=name)
    return out


def component_summaries(page: Any) -> list[InferenceComponentSummary]:
    """A ListInferenceComponents page's summaries."""
    out: list[InferenceComponentSummary] = page.get("InferenceComponents", [])
    return out


def scalable_targets(page: Any) -> list[ScalableTarget]:
    """A DescribeScalableTargets page's targets."""
    out: list[ScalableTarget] = page.get("ScalableTargets", [])
    return out


def scaling_policies(page: Any) -> list[ScalingPolicy]:
    """A DescribeScalingPolicies page's policies."""
    out: list[ScalingPolicy] = page.get("ScalingPolicies", [])
    return out
