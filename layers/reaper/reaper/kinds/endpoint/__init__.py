"""SageMaker endpoints: take idle dev endpoints to zero; `reaper restore NAME` brings them back.

Signal: requests over the idle window (default 120 min; `reaper:idle-minutes` overrides),
summed over every variant and component, in one batched GetMetricData for every endpoint.
AWS publishes these metrics only when there are requests, so no data counts as no traffic
only when the endpoint has been InService (not created or changed) for the whole window.
Which metric depends on the endpoint type: see model.py.

Only dev stages (`ml:stage` in REAPER_DEV_STAGES) are taken to zero; production stages get
the notify-only message; other endpoints are kept, and an idle one is reported once.

This module is the declaration only; the parts it names are imported on first use.
"""

from reaper.core.model import KindAction
from reaper.kinds.base import Action, EventRoute, KindDeclaration, Restorer, standard_parts

_P = "reaper.kinds.endpoint"


class ActionName(KindAction):
    """What this kind can do to a resource: the keys of its declared actions, and the cases its
    dispatch (`actions.undo_hint`) matches exhaustively."""

    DELETE = "delete"
    SCALE_TO_ZERO = "scale-to-zero"


# a sweep's endpoint changes made together (reaper.kinds.endpoint.actions.act_many): each begun and gated alone,
# their scalable targets read in one call (50 ids a call) and their restore records written in one transaction
ACT_BATCH = 20

# what the parts call, by part (the declaration is data: these are not imported from the parts)
_AUTOSCALING_READ = (  # autoscaling.capture / targets
    "application-autoscaling:DescribeScalableTargets",
    "application-autoscaling:DescribeScalingPolicies",
    "cloudwatch:DescribeAlarms",
)
# RegisterScalableTarget creates Application Auto Scaling's service-linked role for SageMaker the first
# time an account registers a target (a dependent action: reaper.sweep.iam.DEPENDENT_ACTIONS)
_FIRST_TARGET = "iam:CreateServiceLinkedRole"
# Application Auto Scaling checks its caller may describe, put and delete alarms before each write, and puts
# and deletes a target-tracking policy's alarms (reaper.sweep.iam.DEPENDENT_ACTIONS)
_ALARMS = ("cloudwatch:DescribeAlarms", "cloudwatch:PutMetricAlarm", "cloudwatch:DeleteAlarms")
_AUTOSCALING_REAPPLY = (  # autoscaling.reapply
    "application-autoscaling:RegisterScalableTarget",
    _FIRST_TARGET,
    "application-autoscaling:PutScalingPolicy",
    *_ALARMS,
)
_WAKE = ("scheduler:CreateSchedule", "iam:PassRole")  # wake.schedule_restore; PassRole: the role the schedule invokes with
_WAKE_CLOSE = "scheduler:DeleteSchedule"  # restore.close_wake: a restore record that closes deletes its wake

_DELETE = (
    "sagemaker:DescribeEndpoint",
    "sagemaker:DescribeEndpointConfig",
    "sagemaker:DescribeModel",
    "sagemaker:ListTags",
    "sagemaker:DeleteEndpoint",
    *_AUTOSCALING_READ,
    "application-autoscaling:DeregisterScalableTarget",
    *_ALARMS,
    *_WAKE,
)
_SCALE_TO_ZERO = (
    "sagemaker:DescribeEndpoint",
    "sagemaker:ListInferenceComponents",
    "sagemaker:DescribeInferenceComponent",
    "sagemaker:UpdateInferenceComponentRuntimeConfig",
    "sagemaker:UpdateEndpointWeightsAndCapacities",
    *_AUTOSCALING_READ,
    "application-autoscaling:RegisterScalableTarget",
    _FIRST_TARGET,
    "application-autoscaling:PutScalingPolicy",
    "cloudwatch:DescribeAlarmsForMetric",
    *_ALARMS,
    *_WAKE,
)
# the state-change route finishes a classic restore (restore.finish_classic) and reads a new endpoint's tags
# and cancels a restore someone else took back (wakeup.cancel), deleting its wake
_EVENTS = ("sagemaker:DescribeEndpoint", *_AUTOSCALING_REAPPLY, "sagemaker:ListTags", _WAKE_CLOSE)
_RESTORE = (
    "sagemaker:DescribeEndpoint",
    "sagemaker:DescribeEndpointConfig",
    "sagemaker:DescribeModel",
    "sagemaker:CreateEndpoint",
    "sagemaker:AddTags",  # CreateEndpoint with tags
    "sagemaker:DescribeInferenceComponent",
    "sagemaker:UpdateInferenceComponentRuntimeConfig",
    "sagemaker:UpdateEndpointWeightsAndCapacities",
    "application-autoscaling:RegisterScalableTarget",
    _FIRST_TARGET,
    "application-autoscaling:PutScalingPolicy",
    "application-autoscaling:DeregisterScalableTarget",
    "application-autoscaling:DeleteScalingPolicy",
    "cloudwatch:DescribeAlarms",  # a dependent action of Put/DeleteScalingPolicy
    "cloudwatch:PutMetricAlarm",
    "cloudwatch:DeleteAlarms",
    "sagemaker:ListTags",  # a wake reads whether the endpoint at zero was exempted (wakeup.someone_else)
    _WAKE_CLOSE,
)

# An endpoint name (1-63 alphanumerics and hyphens, no leading or trailing hyphen). An endpoint may be
# called like an FSx file system id (`fs-0123abcd`): reaper.restore.run asks both kinds for a record.
# https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateEndpoint.html#sagemaker-CreateEndpoint-request-EndpointName
ENDPOINT_NAME_PATTERN = r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}"

DECLARATION = KindDeclaration(
    name="endpoint",
    doc="SageMaker real-time, async and inference-component endpoints: to zero, restorable",
    tag_resource_types=("sagemaker:endpoint",),
    tag_service="sagemaker",
    read_permissions=(
        "sagemaker:Search",
        "sagemaker:ListInferenceComponents",
        "sagemaker:DescribeEndpoint",
        "sagemaker:DescribeEndpointConfig",
        "sagemaker:DescribeModel",
        "sagemaker:ListModels",  # whether a dev endpoint's models exist, 100 a page (signals.py)
        "sagemaker:DescribeInferenceComponent",
        "cloudwatch:GetMetricData",
        "pricing:GetProducts",  # list prices (reaper.aws.pricing)
    ),
    confirm=f"{_P}.actions:confirm",
    # reads a dry run may make that the test kit cannot bring about (docs/try-read-only.md)
    untriggered_reads={
        "sagemaker:DescribeEndpoint": "discover.variant_summaries describes an InService endpoint only when its Search "
        "result left ProductionVariants out; the kit's Search (moto_ext/sagemaker_inference.py) returns every "
        "endpoint's, as the API reference's Endpoint shape holds them",
    },
    actions={
        ActionName.DELETE: Action(
            ActionName.DELETE,
            "deleted",
            _DELETE,
            frozenset({"InService"}),
            f"{_P}.actions:delete_classic",
            needs_log=True,
            removes_resource=True,
            batch=f"{_P}.actions:act_many",  # a sweep's: targets read and records written once per batch
            batch_size=ACT_BATCH,
        ),
        # the copy and instance counts and autoscaling settings it overwrites are kept only in the
        # restore record: without an action log it is refused like delete
        ActionName.SCALE_TO_ZERO: Action(
            ActionName.SCALE_TO_ZERO,
            "scaled to zero",
            _SCALE_TO_ZERO,
            frozenset({"InService"}),
            f"{_P}.actions:scale_to_zero",
            needs_log=True,
            batch=f"{_P}.actions:act_many",
            batch_size=ACT_BATCH,
        ),
    },
    **standard_parts(_P),
    budgeted=True,
    default_action=ActionName.SCALE_TO_ZERO,  # classic endpoints cannot scale to zero: kill_decision picks delete for them
    events=(EventRoute("aws.sagemaker", ("SageMaker Endpoint State Change",), f"{_P}.events:route"),),
    event_permissions=_EVENTS,
    restorer=Restorer(
        name_pattern=ENDPOINT_NAME_PATTERN, run=f"{_P}.restore:restore_endpoint", permissions=_RESTORE, wake=f"{_P}.wakeup:wake_endpoint"
    ),
    chunked_signals=True,  # configurations per candidate; traffic in one GetMetricData batch per chunk of 500
)
