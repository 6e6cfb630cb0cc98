"""SageMaker notebook instances: stopped when the activity agent reports them idle.

Signal: the activity agent's 5-minute reports (1 = something active in the period, 0 = nothing):
the agent's metric MLReaper/NotebookActivity (docs/kinds/notebook.md) (AgentChannel=metric, the default), or with
AgentChannel=logs one CloudWatch Logs event each in the stack's log group (stream = notebook), the
metric still read for agents installed before until their notebook restarts. Idle means every
period of the idle window reported 0; a gap anywhere in the window is unknown, and unknown is keep.

This module is the declaration only; the parts it names are imported on first use.
"""

from reaper.core.model import KindAction
from reaper.kinds.base import Action, EventRoute, KindDeclaration, standard_parts

_P = "reaper.kinds.notebook"


class ActionName(KindAction):
    """What this kind can do to a resource: the keys of its declared actions, and the cases its
    dispatch (`actions.undo_hint`) matches exhaustively."""

    STOP = "stop"
    ATTACH_AGENT = "attach-agent"


DECLARATION = KindDeclaration(
    name="notebook",
    doc="SageMaker notebook instances: stopped when idle",
    tag_resource_types=("sagemaker:notebook-instance",),
    tag_service="sagemaker",
    read_permissions=(
        "sagemaker:ListNotebookInstances",
        "sagemaker:DescribeNotebookInstance",
        "sagemaker:ListTags",
        "cloudwatch:GetMetricData",
        "pricing:GetProducts",  # list prices (reaper.aws.pricing)
        "tag:GetResources",  # the tags of what discovery found, in bulk
    ),
    # AgentChannel=logs: the agent's samples are read from the stack's log group
    # JupyterReads=on: a notebook without the agent is judged by its own Jupyter server (kinds/notebook/notebook_jupyter.py);
    # the grant is denied on exempt and production notebooks like every change (template.yaml)
    conditional_permissions={
        "UseLogsChannel": ("logs:FilterLogEvents",),
        "JupyterReadsOn": ("sagemaker:CreatePresignedNotebookInstanceUrl",),
    },
    confirm=f"{_P}.actions:confirm",
    # the gate's state re-read and its tag re-read, and the state-change event's; a dry run lists and reads metrics only
    change_reads=("sagemaker:DescribeNotebookInstance", "sagemaker:ListTags"),
    actions={
        ActionName.STOP: Action(
            ActionName.STOP, "stopped", ("sagemaker:StopNotebookInstance",), frozenset({"InService"}), f"{_P}.actions:stop"
        ),
        ActionName.ATTACH_AGENT: Action(
            ActionName.ATTACH_AGENT,
            "attached the activity agent to",
            ("sagemaker:UpdateNotebookInstance",),
            frozenset({"Stopped"}),
            f"{_P}.actions:attach_agent",
        ),
    },
    **standard_parts(_P),
    budgeted=True,
    default_action=ActionName.STOP,
    # SageMaker sends the state change itself; CloudTrail calls only reach EventBridge with a trail
    # (the stack makes none), and are still understood if an account routes them here.
    events=(
        EventRoute("aws.sagemaker", ("SageMaker Notebook Instance State Change", "AWS API Call via CloudTrail"), f"{_P}.events:route"),
    ),
)
