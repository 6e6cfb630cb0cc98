"""Application Auto Scaling for SageMaker, where moto 5.2.5 falls short.

* The inference-component dimension: `sagemaker:inference-component:DesiredCopyCount` on
  resource id `inference-component/<name>` (moto refused it as an unknown dimension).
* DeregisterScalableTarget also deletes the target's scaling policies, as AWS does
  (moto left them behind, so a test could not tell whether a restore put them back).
* DescribeScalingPolicies lists, under Alarms, the CloudWatch alarms whose actions invoke a
  step-scaling policy, as AWS does (moto listed only the alarms it made for target tracking).

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
    backend_cls._reaper_sagemaker = True
