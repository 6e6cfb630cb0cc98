"""What the notebook kind does (stop; attach the agent), its state check just before, and undo."""

from __future__ import annotations

from typing import assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.core.model import Decision, KindAction, Resource
from reaper.kinds.base import ActContext, Made, Unconfirmed, action_named
from reaper.kinds.notebook import ActionName
from reaper.kinds.notebook.settings import NotebookSettings


def stop(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    ctx.clients("sagemaker").stop_notebook_instance(NotebookInstanceName=resource.id)
    return "stopping; the notebook's ML storage volume is kept"


def attach_agent(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    ctx.clients("sagemaker").update_notebook_instance(
        NotebookInstanceName=resource.id, LifecycleConfigName=ctx.settings.of(NotebookSettings).agent_lifecycle_config
    )
    return f"lifecycle configuration {ctx.settings.of(NotebookSettings).agent_lifecycle_config} attached; it reports from the next start"


def current_state(clients: Clients, resource: Resource) -> str | None:
    try:
        desc = clients("sagemaker").describe_notebook_instance(NotebookInstanceName=resource.id)
    except ClientError as exc:
        if "RecordNotFound" in str(exc) or exc.response.get("Error", {}).get("Code") == "ResourceNotFound":
            return None
        raise
    state: str = desc.get("NotebookInstanceStatus", "Unknown")
    return state


def confirm(clients: Clients, change: Unconfirmed) -> Made:
    """A stop is made once the notebook is Stopping or Stopped (DescribeNotebookInstance's NotebookInstanceStatus)."""
    if action_named(ActionName, change.action) is not ActionName.STOP:
        return Made(None, f"nothing reads whether {change.action} was made")
    state = current_state(clients, Resource("notebook", change.id, change.arn, "", ""))
    return Made.by_state("NotebookInstanceStatus", state, {"Stopping", "Stopped"}, {"InService", "Pending", "Updating"})


def undo_hint(resource: Resource, action: KindAction | None) -> str | None:
    name = action_named(ActionName, action)
    if name is None:
        return None
    match name:
        case ActionName.STOP:
            return (
                f"aws sagemaker start-notebook-instance --notebook-instance-name {resource.id} --region {resource.region}"
                "   # the ML storage volume and its files are kept"
            )
        case ActionName.ATTACH_AGENT:
            return (
                f"aws sagemaker update-notebook-instance --notebook-instance-name {resource.id} "
                f"--disassociate-lifecycle-config --region {resource.region}"
            )
        case _:
            assert_never(name)
