"""SageMaker managed MLflow tracking servers: stopped (their experiments kept), started again by `reaper restore NAME`.

Evidence: SageMaker documents no CloudWatch metric for a tracking server (docs/aws-assumptions.md, "MLflow
tracking servers"); `IsActive` (`Active`/`Inactive`) says whether it runs, not whether anyone uses it. So by
default a running server is unknown, never idle (`mlflow-no-usage-signal`): its owner is told once, with what
it costs, and `reaper coverage` counts it. With the admin's opt-in (MlflowReads=on) it is judged by its own
MLflow REST API (its newest run and experiment activity, signed for `sagemaker-mlflow`) and CloudTrail's record
of its UI being opened (CreatePresignedMlflowTrackingServerUrl): none of those within MlflowIdleHours is idle;
a read that fails is unknown (docs/kinds/mlflow.md). It is stopped by what its owner or admin declares: a kill date
(`reaper:kill-after`), through the usual warning and grace, or a Stop-now button.

Only a running server (`Created`, `Updated`, `Started`, `MaintenanceComplete`) is stopped; one
Creating, Updating, Stopping, Starting, Deleting, in maintenance or failed is reported, never acted on.
Stopping writes a restore record when there is an action log, so `reaper restore NAME` finds it and
starts it (StartMlflowTrackingServer) with its experiments, which live in its backing store and
artifact bucket, not in the running server.

This module is the declaration only; the parts it names are imported on first use.
"""

from reaper.core.model import KindAction
from reaper.kinds.base import Action, EventRoute, KindDeclaration, Restorer, standard_parts

_P = "reaper.kinds.mlflow"


class ActionName(KindAction):
    """What this kind can do to a resource: the keys of its declared actions, and the cases its
    dispatch (`actions.undo_hint`) matches exhaustively."""

    STOP = "stop"


# TrackingServerStatus values of a server that runs (and bills):
# https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeMlflowTrackingServer.html
RUNNING = frozenset({"Created", "Updated", "Started", "MaintenanceComplete"})
# TrackingServerName, as CreateMlflowTrackingServer takes it:
# https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateMlflowTrackingServer.html
NAME_PATTERN = r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,255}"

# a sweep's stops made together (reaper.kinds.recorded): each begun and gated alone, their restore records
# written in one TransactWriteItems, each stopped in its own call
ACT_BATCH = 20

DECLARATION = KindDeclaration(
    name="mlflow",
    doc="SageMaker MLflow tracking servers: stopped (experiments kept), started again by reaper restore",
    tag_resource_types=("sagemaker:mlflow-tracking-server",),
    tag_service="sagemaker",
    read_permissions=(
        "sagemaker:ListMlflowTrackingServers",
        "sagemaker:DescribeMlflowTrackingServer",  # its size (the price) and the state check just before a stop
        "sagemaker:ListTags",  # the creation-time notice reads the new server's tags
        "tag:GetResources",  # the tags of what discovery found, in bulk
    ),
    # MlflowReads=on: the server's own MLflow API (kinds/mlflow/tracking_api.py) and its UI opens in CloudTrail
    # (kinds/mlflow/ui_opens.py); the MLflow reads are denied on exempt and production servers like a change
    # MlflowReads reads each server's own API: a long sweep reads only what each part reaches (CloudTrail once a chunk)
    chunked_signals=True,
    conditional_permissions={
        "MlflowReadsOn": ("sagemaker-mlflow:SearchExperiments", "sagemaker-mlflow:SearchRuns", "cloudtrail:LookupEvents")
    },
    confirm=f"{_P}.actions:confirm",
    # an event's named server and the gate's tag re-read (a sweep reads tags with tag:GetResources)
    change_reads=("sagemaker:ListTags",),
    actions={
        ActionName.STOP: Action(
            ActionName.STOP,
            "stopped",
            ("sagemaker:DescribeMlflowTrackingServer", "sagemaker:StopMlflowTrackingServer"),
            RUNNING,
            f"{_P}.actions:stop",
            batch=f"{_P}.actions:stop_many",
            batch_size=ACT_BATCH,
        ),
    },
    **standard_parts(_P),
    default_action=ActionName.STOP,
    # CloudTrail's record of CreateMlflowTrackingServer, delivered to EventBridge by a trail (docs/kinds/mlflow.md)
    events=(EventRoute("aws.sagemaker", ("AWS API Call via CloudTrail",), f"{_P}.events:created"),),
    restorer=Restorer(
        name_pattern=NAME_PATTERN,
        run=f"{_P}.restore:run",
        permissions=("sagemaker:DescribeMlflowTrackingServer", "sagemaker:StartMlflowTrackingServer"),
    ),
)
