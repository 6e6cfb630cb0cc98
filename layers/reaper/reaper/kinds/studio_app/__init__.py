"""SageMaker Studio apps (JupyterLab, Code Editor, Canvas; classic KernelGateway and JupyterServer
where billable): the idle app is deleted; its space, its storage volume and the user profile stay.

Evidence: for Canvas apps, the `TimeSinceLastActive` metric Canvas publishes per user. For
JupyterLab and Code Editor apps AWS publishes no user activity the reaper can read (DescribeApp's
`LastUserActivityTimestamp` follows the health checks), so they are kept as unknown, with a reason
code; SageMaker's built-in idle shutdown is what reclaims them (on in the domain, unless the app's user
profile turned it off: kinds/studio_app/profiles.py). With JupyterReads on, a JupyterLab app
nothing else covers (idle shutdown off, a custom image) and a classic JupyterServer app are judged by
their own Jupyter server, through CreatePresignedDomainUrl (kinds/studio_app/studio_jupyter.py). Domains whose built-in idle shutdown
is off are reported once a day; with REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES it is turned on
(the previous settings are kept in the action log so it can be turned back). A space's exempt,
snooze and production tags protect its apps.

This module is the declaration only; the parts it names are imported on first use.
"""

from reaper.core.model import KindAction
from reaper.kinds.base import Action, EventRoute, KindDeclaration, standard_parts

_P = "reaper.kinds.studio_app"


class ActionName(KindAction):
    """What this kind can do to a resource: the keys of its declared actions, and the cases its
    dispatch (`actions.undo_hint`) matches exhaustively."""

    DELETE = "delete"
    ENABLE_IDLE_SHUTDOWN = "enable-idle-shutdown"


DECLARATION = KindDeclaration(
    name="studio-app",
    doc="SageMaker Studio apps: the idle app is deleted, its space and storage never",
    tag_resource_types=("sagemaker:app", "sagemaker:space", "sagemaker:user-profile", "sagemaker:domain"),
    tag_service="sagemaker",
    read_permissions=(
        "sagemaker:ListDomains",
        "sagemaker:DescribeDomain",
        "sagemaker:ListApps",
        "sagemaker:DescribeApp",
        "sagemaker:ListSpaces",
        "sagemaker:DescribeUserProfile",  # a user profile can turn its domain's idle shutdown off (kinds/studio_app/profiles.py)
        "sagemaker:ListTags",
        "cloudwatch:GetMetricData",
        "pricing:GetProducts",  # list prices (reaper.aws.pricing)
        "tag:GetResources",  # the tags of what discovery found, in bulk
    ),
    # JupyterReads=on: an app nothing else judges is read through its own Jupyter server (kinds/studio_app/studio_jupyter.py);
    # the grant is denied on exempt and production user profiles like every change (template.yaml)
    conditional_permissions={"JupyterReadsOn": ("sagemaker:CreatePresignedDomainUrl",)},
    confirm=f"{_P}.actions:confirm",
    # the gate's state and tag re-reads (the Jupyter reading's DescribeApp is JupyterReadsOn's, which a trial leaves off)
    change_reads=("sagemaker:DescribeApp", "sagemaker:ListTags"),
    actions={
        ActionName.DELETE: Action(
            ActionName.DELETE,
            "deleted",
            ("sagemaker:DeleteApp",),
            frozenset({"InService"}),
            f"{_P}.actions:delete",
            removes_resource=True,
        ),
        ActionName.ENABLE_IDLE_SHUTDOWN: Action(
            ActionName.ENABLE_IDLE_SHUTDOWN,
            "turned on built-in idle shutdown for",
            ("sagemaker:UpdateDomain",),
            frozenset({"InService"}),
            f"{_P}.actions:enable_idle_shutdown",
        ),
    },
    **standard_parts(_P),
    default_action=ActionName.DELETE,
    chunked_signals=True,  # a DescribeApp per candidate: a long sweep describes only what each part reaches
    chunk_size=100,  # about 7 s of DescribeApp on AWS: a part ends within a few seconds of its deadline
    # the creation-time notice: CloudTrail's record of the Create call, where the stack's CreationNotices routes it (kinds/creation.py)
    events=(EventRoute("aws.sagemaker", ("AWS API Call via CloudTrail",), f"{_P}.created:created"),),
)
