"""Checks on a notebook that was just created or started (CloudTrail API call events).

Notebooks emit no state-change events; CloudTrail's CreateNotebookInstance and
StartNotebookInstance calls tell us at once, so the owner hears about a missing agent or tag
before the notebook has idled for an hour.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from reaper.errors import BadEventError
from reaper.events import EventBridgeEvent, parse_cloudtrail
from reaper.notices import post_notice
from reaper.policy import experiment_gap, read_tags
from reaper.runtime import Runtime

WATCHED_CALLS = ("CreateNotebookInstance", "StartNotebookInstance")


def route(rt: Runtime, ev: EventBridgeEvent, now: datetime) -> dict[str, Any]:
    detail = parse_cloudtrail(ev)
    if detail.eventName not in WATCHED_CALLS:
        raise BadEventError(f"notebook function does not handle CloudTrail {detail.eventName!r} calls")
    if detail.errorCode:
        return {"event_id": ev.id, "checked": None, "skipped": f"the call failed ({detail.errorCode})"}
    params = detail.requestParameters or {}
    name = params.get("notebookInstanceName") or params.get("NotebookInstanceName")
    if not isinstance(name, str) or not name:
        raise BadEventError("CloudTrail event has no requestParameters.notebookInstanceName")
    region = detail.awsRegion or ev.region or rt.home_region
    problems, facts = check(rt, region, name, created=detail.eventName == "CreateNotebookInstance")
    result: dict[str, Any] = {"event_id": ev.id, "checked": name, "problems": problems, "posted": False}
    if problems and facts:
        notice = {
            "kind": "notebook",
            "id": name,
            "arn": facts["arn"],
            "region": region,
            "account": ev.account or facts["arn"].split(":")[4],
            "owner": facts.get("owner"),
            "title": f"Notebook {name} was {'created' if detail.eventName.startswith('Create') else 'started'} without what the reaper needs",
            "text": "\n".join(f"• {p}" for p in problems),
        }
        result["posted"] = post_notice(rt, notice, now, ev.id)
    return result


def check(rt: Runtime, region: str, name: str, created: bool = False) -> tuple[list[str], dict[str, Any] | None]:
    sm = rt.clients(region)("sagemaker")
    settings = rt.settings
    try:
        desc = sm.describe_notebook_instance(NotebookInstanceName=name)
    except ClientError as exc:
        if "RecordNotFound" in str(exc) or "ResourceNotFound" in str(exc):
            return [], None  # deleted since: nothing to say
        raise
    arn = desc["NotebookInstanceArn"]
    raw_tags = {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=arn).get("Tags", [])}
    tags = {k.strip().lower(): v.strip() for k, v in raw_tags.items()}
    problems: list[str] = []
    if desc.get("NotebookInstanceLifecycleConfigName") != settings.agent_lifecycle_config:
        current = desc.get("NotebookInstanceLifecycleConfigName") or "none"
        problems.append(
            f"no activity agent (lifecycle configuration is {current}): the reaper cannot see when it is idle. "
            f"Stop it and run `aws sagemaker update-notebook-instance --notebook-instance-name {name} "
            f"--lifecycle-config-name {settings.agent_lifecycle_config}`"
        )
    for key in ("ml:owner", "ml:stage"):
        if not tags.get(key):
            problems.append(
                f"no `{key}` tag: `aws sagemaker add-tags --resource-arn {arn} --tags Key={key},Value=...`"
            )
    gap = experiment_gap(read_tags(raw_tags, settings), settings) if created else None  # at creation only: told once
    if gap is not None:
        problems.append(gap)
    return problems, {"arn": arn, "owner": tags.get("ml:owner")}
