"""Application Auto Scaling for endpoints: what to record before going to zero, and how to put it back.

A scalable target is recorded with its capacities and policies; a step-scaling policy also with
the CloudWatch alarms that invoke it, because a new policy gets a new ARN and those alarms must
be pointed at it again. Target-tracking alarms belong to AWS and come back with their policy.
Every write here is idempotent: RegisterScalableTarget and PutScalingPolicy update in place.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from reaper.aws.faults import is_not_found
from reaper.kinds.endpoint.model import NAMESPACE, SCALE_IN_POLICY, VARIANT_DIMENSION, WAKE_POLICY, PolicyRecord, ScalingRecord
from reaper.kinds.endpoint.shapes import MetricAlarm, ScalableTarget, ScalingPolicy, scalable_targets, scaling_policies

SERVICE = "sagemaker"
ALARM_FIELDS = (
    "AlarmName",
    "AlarmDescription",
    "ActionsEnabled",
    "OKActions",
    "AlarmActions",
    "InsufficientDataActions",
    "MetricName",
    "Namespace",
    "Statistic",
    "ExtendedStatistic",
    "Dimensions",
    "Period",
    "Unit",
    "EvaluationPeriods",
    "DatapointsToAlarm",
    "Threshold",
    "ComparisonOperator",
    "TreatMissingData",
    "EvaluateLowSampleCountPercentile",
    "Metrics",
    "ThresholdMetricId",
)


def targets(aas: Any, resource_ids: list[str], dimension: str) -> dict[str, ScalableTarget]:
    """{resource id: scalable target} for the ids that have one (50 ids a call, the API's limit)."""
    out: dict[str, ScalableTarget] = {}
    for i in range(0, len(resource_ids), 50):
        paginator = aas.get_paginator("describe_scalable_targets")
        for page in paginator.paginate(ServiceNamespace=SERVICE, ResourceIds=resource_ids[i : i + 50], ScalableDimension=dimension):
            for t in scalable_targets(page):
                out[t["ResourceId"]] = t
    return out


def policies(aas: Any, resource_id: str, dimension: str) -> list[ScalingPolicy]:
    out: list[ScalingPolicy] = []
    paginator = aas.get_paginator("describe_scaling_policies")
    for page in paginator.paginate(ServiceNamespace=SERVICE, ResourceId=resource_id, ScalableDimension=dimension):
        out.extend(scaling_policies(page))
    return out


def capture(aas: Any, cloudwatch: Any, resource_ids: list[str], dimension: str) -> list[ScalingRecord]:
    """Everything needed to register these targets again exactly as they are now."""
    return recorded(aas, cloudwatch, resource_ids, dimension, targets(aas, resource_ids, dimension))


def recorded(aas: Any, cloudwatch: Any, resource_ids: list[str], dimension: str, found: dict[str, ScalableTarget]) -> list[ScalingRecord]:
    """`capture` from targets already read (a batch's, in one DescribeScalableTargets): the policies of
    each target found, and a step policy's alarms; an id without a target has none to read."""
    out: list[ScalingRecord] = []
    for rid in resource_ids:
        t = found.get(rid)
        if t is None:
            continue
        out.append(
            ScalingRecord(
                resource_id=rid,
                dimension=dimension,
                min=t["MinCapacity"],
                max=t["MaxCapacity"],
                suspended=t.get("SuspendedState"),
                policies=[_policy_record(cloudwatch, p) for p in policies(aas, rid, dimension)],
            )
        )
    return out


def _policy_record(cloudwatch: Any, p: ScalingPolicy) -> PolicyRecord:
    step = p.get("PolicyType") == "StepScaling"
    record = PolicyRecord(
        name=p["PolicyName"],
        type=p["PolicyType"],
        arn=p.get("PolicyARN"),
        config=p.get("StepScalingPolicyConfiguration") if step else p.get("TargetTrackingScalingPolicyConfiguration"),
        alarms=[],
    )
    names = [a["AlarmName"] for a in p.get("Alarms", [])]
    if step and names:
        # DescribeAlarms' MetricAlarm, kept whole (PolicyRecord.alarms says why): read only to copy ALARM_FIELDS
        found: list[dict[str, object]] = cloudwatch.describe_alarms(AlarmNames=names).get("MetricAlarms", [])
        record["alarms"] = [{k: a[k] for k in ALARM_FIELDS if a.get(k) not in (None, [], "")} for a in found]
    return record


def reapply(aas: Any, cloudwatch: Any, recorded: list[ScalingRecord]) -> list[str]:
    """Register each target and put each policy back; point step-scaling alarms at the new policies."""
    done: list[str] = []
    for t in recorded:
        kwargs: dict[str, object] = {  # RegisterScalableTarget's arguments
            "ServiceNamespace": SERVICE,
            "ResourceId": t["resource_id"],
            "ScalableDimension": t["dimension"],
            "MinCapacity": t["min"],
            "MaxCapacity": t["max"],
        }
        if t.get("suspended"):
            kwargs["SuspendedState"] = t["suspended"]
        aas.register_scalable_target(**kwargs)
        for p in t.get("policies", []):
            key = "StepScalingPolicyConfiguration" if p["type"] == "StepScaling" else "TargetTrackingScalingPolicyConfiguration"
            new_arn = aas.put_scaling_policy(
                PolicyName=p["name"],
                ServiceNamespace=SERVICE,
                ResourceId=t["resource_id"],
                ScalableDimension=t["dimension"],
                PolicyType=p["type"],
                **{key: p["config"]},
            )["PolicyARN"]
            for alarm in p.get("alarms", []):
                cloudwatch.put_metric_alarm(**_repointed(alarm, p.get("arn"), new_arn))
        names = ", ".join(p["name"] for p in t.get("policies", [])) or "no policies"
        done.append(f"{t['resource_id']} min {t['min']} max {t['max']} ({names})")
    return done


def _repointed(alarm: dict[str, object], old_arn: str | None, new_arn: str) -> dict[str, object]:
    out = dict(alarm)
    for key in ("AlarmActions", "OKActions", "InsufficientDataActions"):
        actions = out.get(key)
        if isinstance(actions, list):
            out[key] = [new_arn if a == old_arn else a for a in actions]
    return out


def set_minimum(aas: Any, resource_id: str, dimension: str, minimum: int, maximum: int) -> None:
    aas.register_scalable_target(
        ServiceNamespace=SERVICE, ResourceId=resource_id, ScalableDimension=dimension, MinCapacity=minimum, MaxCapacity=maximum
    )


def deregister(aas: Any, resource_id: str, dimension: str) -> None:
    """Deregistering deletes the target's policies too. A target already gone is fine."""
    try:
        aas.deregister_scalable_target(ServiceNamespace=SERVICE, ResourceId=resource_id, ScalableDimension=dimension)
    except ClientError as exc:
        if not is_not_found(exc):
            raise


# -- async endpoints: the policy that scales in to zero -----------------------------------------
# "Unlike other hosted models ... with Asynchronous Inference you can also scale down your
# asynchronous endpoints instances to zero": a scalable target with MinCapacity 0 and, as the page
# strongly recommends, a target-tracking policy on ApproximateBacklogSizePerInstance, which scales
# in as the backlog empties. https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-autoscale.html
BACKLOG_TARGET = 5.0  # the page's example target value
SCALE_IN_COOLDOWN = 600
SCALE_OUT_COOLDOWN = 300


def scales_in(found: list[ScalingPolicy]) -> bool:
    """A policy that can take the variant down: any target tracking, or a step with a negative adjustment."""
    for p in found:
        if p.get("PolicyName") == WAKE_POLICY:
            continue
        if p.get("PolicyType") == "TargetTrackingScaling":
            tracking = p.get("TargetTrackingScalingPolicyConfiguration")
            if not (tracking and tracking.get("DisableScaleIn")):
                return True
            continue
        steps = (p.get("StepScalingPolicyConfiguration") or {}).get("StepAdjustments") or []
        if any(s.get("ScalingAdjustment", 0) < 0 for s in steps):
            return True
    return False


def add_backlog_tracking(aas: Any, endpoint: str, resource_id: str) -> str:
    """The documented target-tracking policy on the endpoint's backlog per instance."""
    arn: str = aas.put_scaling_policy(
        PolicyName=SCALE_IN_POLICY,
        ServiceNamespace=SERVICE,
        ResourceId=resource_id,
        ScalableDimension=VARIANT_DIMENSION,
        PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": BACKLOG_TARGET,
            "CustomizedMetricSpecification": {
                "MetricName": "ApproximateBacklogSizePerInstance",
                "Namespace": NAMESPACE,
                "Dimensions": [{"Name": "EndpointName", "Value": endpoint}],
                "Statistic": "Average",
            },
            "ScaleInCooldown": SCALE_IN_COOLDOWN,
            "ScaleOutCooldown": SCALE_OUT_COOLDOWN,
        },
    )["PolicyARN"]
    return arn


def remove_backlog_tracking(aas: Any, resource_id: str) -> None:
    try:
        aas.delete_scaling_policy(
            PolicyName=SCALE_IN_POLICY, ServiceNamespace=SERVICE, ResourceId=resource_id, ScalableDimension=VARIANT_DIMENSION
        )
    except ClientError as exc:
        if not is_not_found(exc):
            raise


# -- async endpoints: the policy that wakes a scaled-to-zero endpoint when requests queue ------


def wake_alarm_name(endpoint: str) -> str:
    return f"mlreaper-wake-{endpoint}"[:255]


def has_wake_policy(cloudwatch: Any, endpoint: str) -> bool:
    """An alarm on HasBacklogWithoutCapacity for this endpoint that invokes a scaling policy."""
    alarms: list[MetricAlarm] = cloudwatch.describe_alarms_for_metric(
        MetricName="HasBacklogWithoutCapacity", Namespace=NAMESPACE, Dimensions=[{"Name": "EndpointName", "Value": endpoint}]
    ).get("MetricAlarms", [])
    for a in alarms:
        dims = {d["Name"]: d["Value"] for d in a.get("Dimensions", [])}
        if dims.get("EndpointName") == endpoint and any(":scalingPolicy:" in x for x in a.get("AlarmActions", [])):
            return True
    return False


def add_wake_policy(aas: Any, cloudwatch: Any, endpoint: str, resource_id: str) -> str:
    """A step-scaling policy (+1 instance) and an alarm on HasBacklogWithoutCapacity >= 1 that invokes it."""
    arn: str = aas.put_scaling_policy(
        PolicyName=WAKE_POLICY,
        ServiceNamespace=SERVICE,
        ResourceId=resource_id,
        ScalableDimension=VARIANT_DIMENSION,
        PolicyType="StepScaling",
        StepScalingPolicyConfiguration={
            "AdjustmentType": "ChangeInCapacity",
            "MetricAggregationType": "Average",
            "Cooldown": 300,
            "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}],
        },
    )["PolicyARN"]
    cloudwatch.put_metric_alarm(
        AlarmName=wake_alarm_name(endpoint),
        AlarmDescription=f"mlreaper: wakes {endpoint} (scaled to zero while idle) when requests queue",
        MetricName="HasBacklogWithoutCapacity",
        Namespace=NAMESPACE,
        Statistic="Average",
        Dimensions=[{"Name": "EndpointName", "Value": endpoint}],
        Period=60,
        EvaluationPeriods=2,
        DatapointsToAlarm=2,
        Threshold=1,
        ComparisonOperator="GreaterThanOrEqualToThreshold",
        TreatMissingData="missing",
        AlarmActions=[arn],
    )
    return arn


def remove_wake_policy(aas: Any, cloudwatch: Any, endpoint: str, resource_id: str) -> None:
    try:
        aas.delete_scaling_policy(
            PolicyName=WAKE_POLICY, ServiceNamespace=SERVICE, ResourceId=resource_id, ScalableDimension=VARIANT_DIMENSION
        )
    except ClientError as exc:
        if not is_not_found(exc):
            raise
    cloudwatch.delete_alarms(AlarmNames=[wake_alarm_name(endpoint)])
