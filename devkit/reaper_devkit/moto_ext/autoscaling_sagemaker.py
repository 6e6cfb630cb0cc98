"""Application Auto Scaling for SageMaker, where moto 5.2.5 falls short.

* The inference-component dimension: `sagemaker:inference-component:DesiredCopyCount` on
  resource id `inference-component/<name>` (moto refused it as an unknown dimension).
* DeregisterScalableTarget also deletes the target's scaling policies, as AWS does
  (moto left them behind, so a test could not tell whether a restore put them back).
* DescribeScalingPolicies lists, under Alarms, the CloudWatch alarms whose actions invoke a
  step-scaling policy, as AWS does (moto listed only the alarms it made for target tracking).

* A SageMaker target-tracking policy gets the two CloudWatch alarms Application Auto Scaling makes
  for it, `TargetTracking-<resource id>-AlarmHigh-<uuid>` and `-AlarmLow-<uuid>`, invoking the
  policy, as for ECS and DynamoDB (moto made none for SageMaker); they go with the policy
  (DeleteScalingPolicy, DeregisterScalableTarget, or a PutScalingPolicy that replaces it):
  "Deleting a target tracking scaling policy also deletes any associated CloudWatch alarms"
  https://docs.aws.amazon.com/autoscaling/application/userguide/delete-target-tracking-policy.html
  Every alarm made or deleted on a caller's behalf is journaled (`ON_BEHALF`), so the IAM check of
  the calls (reaper_devkit.calls) holds the caller to the alarm permissions they take.

* A SageMaker target registered without RoleARN reports the service-linked role Application Auto
  Scaling creates and uses, AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint (RoleARN is
  required in ScalableTarget; moto left it out).
  https://docs.aws.amazon.com/autoscaling/application/userguide/services-that-can-integrate-sagemaker.html
  https://docs.aws.amazon.com/autoscaling/application/userguide/application-auto-scaling-service-linked-roles.html

Patches moto's backend and response classes, so they hold in-process and in server mode.
"""

from __future__ import annotations

from typing import Any

from moto.applicationautoscaling import models, responses

IC_DIMENSION = "sagemaker:inference-component:DesiredCopyCount"
SAGEMAKER_SLR = "sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"


# (IAM action, region, account, alarm name, the alarm's actions): what AWS did to CloudWatch alarms on behalf
# of an Application Auto Scaling caller, in order (reaper_devkit.calls reads it after each call)
ON_BEHALF: list[tuple[str, str, str, str, tuple[str, ...]]] = []


def _sagemaker_alarms(policy: Any) -> list[Any]:
    """The high and low alarms of a SageMaker target-tracking policy, on the metric it tracks."""
    from moto.cloudwatch.models import cloudwatch_backends
    from moto.moto_api._internal import mock_random

    cloudwatch = cloudwatch_backends[policy.account_id][policy.region_name]
    config = policy.target_tracking_scaling_policy_configuration or {}
    custom = config.get("CustomizedMetricSpecification") or {}
    metric = custom.get("MetricName") or "InvocationsPerInstance"
    namespace = custom.get("Namespace") or "AWS/SageMaker"
    dimensions = custom.get("Dimensions") or _variant_dimensions(policy.resource_id)
    target = float(config.get("TargetValue") or 0)
    action = f"{policy.policy_arn}:createdBy/{mock_random.uuid4()}"
    alarms = []
    for suffix, operator, periods in (("AlarmHigh", "GreaterThanThreshold", 3), ("AlarmLow", "LessThanThreshold", 15)):
        alarms.append(
            cloudwatch.put_metric_alarm(
                name=f"TargetTracking-{policy.resource_id}-{suffix}-{mock_random.uuid4()}",
                namespace=namespace,
                metric_name=metric,
                metric_data_queries=[],
                comparison_operator=operator,
                evaluation_periods=periods,
                period=60,
                threshold=target if suffix == "AlarmHigh" else target * 0.9,
                statistic="Average",
                description=f"DO NOT EDIT OR DELETE. For TargetTrackingScaling policy {action}",
                dimensions=[{"Name": d["Name"], "Value": d["Value"]} for d in dimensions],
                alarm_actions=[action],
            )
        )
        ON_BEHALF.append(("cloudwatch:PutMetricAlarm", policy.region_name, policy.account_id, alarms[-1].name, (action,)))
    return alarms


def _variant_dimensions(resource_id: str) -> list[dict[str, str]]:
    parts = resource_id.split("/")
    if len(parts) == 4 and parts[0] == "endpoint":
        return [{"Name": "EndpointName", "Value": parts[1]}, {"Name": "VariantName", "Value": parts[3]}]
    return [{"Name": "InferenceComponentName", "Value": parts[-1]}]


def _is_component_target(namespace: str | None, resource_id: str | None, dimension: str | None) -> bool:
    return (
        namespace == "sagemaker" and dimension == IC_DIMENSION and bool(resource_id) and str(resource_id).startswith("inference-component/")
    )


def apply() -> None:
    backend_cls = models.ApplicationAutoscalingBackend
    if getattr(backend_cls, "_reaper_sagemaker", False):
        return

    original_target_init = models.FakeScalableTarget.__init__

    def target_init(self: Any, backend: Any, service_namespace: str, *args: Any, **kwargs: Any) -> None:
        original_target_init(self, backend, service_namespace, *args, **kwargs)
        if not self.role_arn and service_namespace == "sagemaker":
            self.role_arn = f"arn:aws:iam::{backend.account_id}:role/aws-service-role/{SAGEMAKER_SLR}"

    models.FakeScalableTarget.__init__ = target_init  # type: ignore[method-assign]

    original_valid = models._target_params_are_valid

    def _target_params_are_valid(namespace: str, r_id: str, dimension: str) -> bool:
        if _is_component_target(namespace, r_id, dimension):
            return True
        result: bool = original_valid(namespace, r_id, dimension)
        return result

    models._target_params_are_valid = _target_params_are_valid

    original_validate = responses.ApplicationAutoScalingResponse._validate_params

    def _validate_params(self: Any) -> None:
        if self._get_param("ServiceNamespace") == "sagemaker" and self._get_param("ScalableDimension") == IC_DIMENSION:
            return
        original_validate(self)

    responses.ApplicationAutoScalingResponse._validate_params = _validate_params

    original_deregister = backend_cls.deregister_scalable_target

    def deregister_scalable_target(self: Any, namespace: str, r_id: str, dimension: str) -> None:
        original_deregister(self, namespace, r_id, dimension)
        for key, policy in list(self.policies.items()):
            if (policy.service_namespace, policy.resource_id, policy.scalable_dimension) == (namespace, r_id, dimension):
                policy.delete_alarms(self.account_id, self.region_name)
                del self.policies[key]

    backend_cls.deregister_scalable_target = deregister_scalable_target

    original_build_alarms = responses._build_alarms

    def _build_alarms(policy: Any) -> list[dict[str, str]]:
        alarms: list[dict[str, str]] = original_build_alarms(policy)
        if policy.policy_type != "StepScaling":
            return alarms
        from moto.cloudwatch.models import cloudwatch_backends

        cloudwatch = cloudwatch_backends[policy.account_id][policy.region_name]
        for alarm in cloudwatch.alarms.values():
            actions = list(alarm.alarm_actions or []) + list(alarm.ok_actions or []) + list(alarm.insufficient_data_actions or [])
            if policy.policy_arn in actions:
                alarms.append({"AlarmARN": alarm.alarm_arn, "AlarmName": alarm.name})
        return alarms

    responses._build_alarms = _build_alarms
    original_create_alarms = models.FakeApplicationAutoscalingPolicy.create_alarms

    def create_alarms(self: Any) -> None:
        original_create_alarms(self)
        if self.policy_type == "TargetTrackingScaling" and self.service_namespace == "sagemaker":
            self.alarms.extend(_sagemaker_alarms(self))

    models.FakeApplicationAutoscalingPolicy.create_alarms = create_alarms  # type: ignore[method-assign]

    original_delete_alarms = models.FakeApplicationAutoscalingPolicy.delete_alarms

    def delete_alarms(self: Any, account_id: str, region_name: str) -> None:
        if self.service_namespace == "sagemaker":
            ON_BEHALF.extend(("cloudwatch:DeleteAlarms", region_name, account_id, a.name, ()) for a in self.alarms)
        original_delete_alarms(self, account_id, region_name)

    models.FakeApplicationAutoscalingPolicy.delete_alarms = delete_alarms  # type: ignore[method-assign]

    original_put = backend_cls.put_scaling_policy

    def put_scaling_policy(
        self: Any, policy_name: str, service_namespace: str, resource_id: str, scalable_dimension: str, **kw: Any
    ) -> Any:
        key = models.FakeApplicationAutoscalingPolicy.formulate_key(service_namespace, resource_id, scalable_dimension, policy_name)
        old = self.policies.get(key)
        policy = original_put(self, policy_name, service_namespace, resource_id, scalable_dimension, **kw)
        if old is not None and service_namespace == "sagemaker":  # the policy is replaced: its old alarms go
            old.delete_alarms(self.account_id, self.region_name)
        return policy

    backend_cls.put_scaling_policy = put_scaling_policy  # type: ignore[method-assign,assignment]

    backend_cls._reaper_sagemaker = True
