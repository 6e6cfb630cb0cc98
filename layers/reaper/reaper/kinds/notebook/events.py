"""Checks on a notebook that was just created or started, so the owner hears about a missing
agent or tag before the notebook has idled for an hour.

The event is `SageMaker Notebook Instance State Change`, which SageMaker sends to EventBridge
itself ("SageMaker AI sends the following events directly to EventBridge: ... SageMaker Notebook
Instance State Change": https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-sagemaker.html).
A notebook reaches InService only from Pending, i.e. after CreateNotebookInstance or
StartNotebookInstance, so InService is the moment to check; every other status is skipped.
The CloudTrail API-call events for those two calls are still understood (an account whose trail
delivers them to EventBridge can route them here), but the stack does not rely on a trail.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TypedDict

from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field

from reaper.core.errors import BadEventError
from reaper.core.events import EventBridgeEvent, parse_cloudtrail, parse_model
from reaper.core.policy import TagView, experiment_gap, read_tags
from reaper.kinds.base import Check, EventResult
from reaper.kinds.notebook.settings import NotebookSettings
from reaper.record.message import NoticeMessage
from reaper.record.notices import post_notice
from reaper.record.runtime import Runtime

WATCHED_CALLS = ("CreateNotebookInstance", "StartNotebookInstance")
STATE_CHANGE = "SageMaker Notebook Instance State Change"
CLOUDTRAIL = "AWS API Call via CloudTrail"
# A notebook InService within this long of its creation was just created; later, it was started.
JUST_CREATED = timedelta(minutes=30)


class NotebookStateDetail(BaseModel):
    model_config = ConfigDict(extra="allow")

    NotebookInstanceName: str = Field(min_length=1)
    NotebookInstanceStatus: str = Field(min_length=1)
    NotebookInstanceArn: str = ""


def _status(value: str) -> str:
    """`InService` (API) and `IN_SERVICE` (the style of other SageMaker events) compare equal."""
    return value.replace("_", "").replace(" ", "").upper()


def route(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check | None = None) -> EventResult:
    if ev.detail_type == STATE_CHANGE:
        return _state_change(rt, ev, now)
    return _cloudtrail(rt, ev, now)


def _state_change(rt: Runtime, ev: EventBridgeEvent, now: datetime) -> EventResult:
    detail = parse_model(NotebookStateDetail, ev.detail, "a notebook instance state change", "detail.")
    name = detail.NotebookInstanceName
    if _status(detail.NotebookInstanceStatus) != "INSERVICE":
        return {
            "event_id": ev.id,
            "checked": None,
            "skipped": f"{name} is {detail.NotebookInstanceStatus}: checked only when it comes InService",
        }
    region = ev.region or rt.home_region
    return _check_and_tell(rt, ev, now, region, name, None)


def _cloudtrail(rt: Runtime, ev: EventBridgeEvent, now: datetime) -> EventResult:
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
    return _check_and_tell(rt, ev, now, region, name, "created" if detail.eventName.startswith("Create") else "started")


def _check_and_tell(rt: Runtime, ev: EventBridgeEvent, now: datetime, region: str, name: str, how: str | None) -> EventResult:
    """`how`: "created" or "started" from a CloudTrail call; None from a state change, where a notebook
    InService within JUST_CREATED of its creation counts as created."""
    problems, facts = check(rt, region, name)
    result: EventResult = {"event_id": ev.id, "checked": name, "problems": problems, "posted": False}
    if facts is None:
        return result
    if how is None:
        created = facts.get("created")
        how = "created" if isinstance(created, datetime) and now - created <= JUST_CREATED else "started"
    gap = experiment_gap(facts["view"], rt.settings) if how == "created" else None
    # at creation only, and once per notebook: the CloudTrail call and the state change (or a
    # re-delivered event) tell one creation, as the other kinds' admissions do
    if gap is not None and (rt.log is None or rt.log.claim(f"notebook-created|{facts['arn']}", now)):
        problems.append(gap)
    if problems:
        notice = NoticeMessage(
            kind="notebook",
            id=name,
            arn=facts["arn"],
            region=region,
            account=ev.account or facts["arn"].split(":")[4],
            owner=facts.get("owner"),
            title=f"Notebook {name} was {how} without what the reaper needs",
            text="\n".join(f"• {p}" for p in problems),
        )
        result["posted"] = post_notice(rt, notice, now, ev.id)
    return result


class NotebookFacts(TypedDict):
    """What `check` read of the notebook for its notice: ARN, ml:owner, creation time (DescribeNotebookInstance's
    CreationTime) and its tags read as policy reads them."""

    arn: str
    owner: str | None
    created: datetime | None
    view: TagView


def check(rt: Runtime, region: str, name: str) -> tuple[list[str], NotebookFacts | None]:
    """What the notebook lacks now (agent, owner and stage tags), and its ARN, owner, creation time and tags."""
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
    if desc.get("NotebookInstanceLifecycleConfigName") != settings.of(NotebookSettings).agent_lifecycle_config:
        current = desc.get("NotebookInstanceLifecycleConfigName") or "none"
        problems.append(
            f"no activity agent (lifecycle configuration is {current}): the reaper cannot see when it is idle. "
            f"Stop it and run `aws sagemaker update-notebook-instance --notebook-instance-name {name} "
            f"--lifecycle-config-name {settings.of(NotebookSettings).agent_lifecycle_config}`"
        )
    for key in ("ml:owner", "ml:stage"):
        if not tags.get(key):
            problems.append(f"no `{key}` tag: `aws sagemaker add-tags --resource-arn {arn} --tags Key={key},Value=...`")
    view = read_tags(raw_tags, settings)
    return problems, {"arn": arn, "owner": tags.get("ml:owner"), "created": desc.get("CreationTime"), "view": view}
