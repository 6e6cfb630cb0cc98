"""SageMaker Endpoint State Change events, for the endpoint function.

* A restore in progress (a classic endpoint the restore function recreated and left Creating)
  is followed: on InService its autoscaling goes back and the owner is told; on Failed, why.
* An endpoint the reaper would wake (its restore record open) that someone else recreates (a classic
  one Creating) or deletes (one at zero Deleting): the restore is cancelled and its wake deleted.
* A new or updated endpoint (Creating / Updating) in a dev stage, or with no stage, and no
  `ml:owner` is reported at once: otherwise nobody hears before it is taken to zero.
Each is done and posted once per event, however often the event is delivered.
"""

from __future__ import annotations

from datetime import datetime

from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field

from reaper.aws.faults import is_not_found
from reaper.core.events import EventBridgeEvent, parse_model
from reaper.core.policy import experiment_gap, is_dev, read_tags
from reaper.kinds.base import Check, EventResult
from reaper.kinds.endpoint import wakeup
from reaper.kinds.endpoint.model import CLASSIC, KIND, RestoreRecord
from reaper.kinds.endpoint.restore import failed, finish_classic, latest_record
from reaper.record.message import NoticeMessage
from reaper.record.notices import post_notice
from reaper.record.runtime import Runtime


class EndpointStateDetail(BaseModel):
    model_config = ConfigDict(extra="allow")

    EndpointName: str = Field(min_length=1)
    EndpointStatus: str = Field(min_length=1)
    EndpointArn: str = ""
    EndpointConfigName: str = ""
    Tags: dict[str, str] | list[dict[str, str]] = Field(default_factory=dict)


def status_of(value: str) -> str:
    """Events say IN_SERVICE, the API says InService: compare them as INSERVICE."""
    return value.replace("_", "").replace(" ", "").upper()


def route(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check | None = None) -> EventResult:
    """A SageMaker Endpoint State Change (the declaration routes only those here)."""
    detail = parse_model(EndpointStateDetail, ev.detail, "an endpoint state change", "detail.")
    status = status_of(detail.EndpointStatus)
    region = ev.region or rt.home_region
    result: EventResult = {"event_id": ev.id, "endpoint": detail.EndpointName, "status": detail.EndpointStatus}
    if rt.log is not None:
        record = latest_record(rt, detail.EndpointName)
        if record is not None and record.get("region", region) != region:
            record = None
        if record and record.get("type") == CLASSIC and record.get("status") == "restoring":
            return {**result, **_follow_restore(rt, record, status, now, ev)}
        taken = wakeup.closes(record, status)
        if record and taken:  # someone else recreated or deleted it: the reaper's wake must not bring it back
            result["restore"] = _cancel_once(rt, record, taken, now)
    if status in ("CREATING", "UPDATING"):
        return {**result, **_owner_check(rt, region, detail, ev, now)}
    return {**result, "checked": None}


def _follow_restore(rt: Runtime, record: RestoreRecord, status: str, now: datetime, ev: EventBridgeEvent) -> EventResult:
    assert rt.log is not None
    clients = rt.clients(record.get("region") or rt.home_region)
    started = record.get("restore_started_at") or record.get("reaped_at")
    if status == "INSERVICE":
        if not rt.log.claim(f"endpoint-restore-finish|{record['name']}|{started}", now):
            return {"restore": "already finished by an earlier delivery"}
        return {"restore": "finished", "result": finish_classic(rt, clients, record, now)}
    if status == "FAILED":
        if not rt.log.claim(f"endpoint-restore-failed|{record['name']}|{started}", now):
            return {"restore": "failure already reported"}
        return {"restore": "failed", "result": str(failed(rt, clients("sagemaker"), record, now))}
    return {"restore": "in progress"}


def _cancel_once(rt: Runtime, record: RestoreRecord, why: str, now: datetime) -> str:
    assert rt.log is not None
    if not rt.log.claim(f"endpoint-restore-cancel|{record['name']}|{record.get('reaped_at')}", now):
        return "already cancelled by an earlier delivery"
    return wakeup.cancel(rt, record, now, why)


def _owner_check(rt: Runtime, region: str, detail: EndpointStateDetail, ev: EventBridgeEvent, now: datetime) -> EventResult:
    sm = rt.clients(region)("sagemaker")
    name = detail.EndpointName
    arn = detail.EndpointArn or next((r for r in ev.resources if ":endpoint/" in r), "")
    tags = _event_tags(detail.Tags)
    try:
        if not arn:
            arn = sm.describe_endpoint(EndpointName=name)["EndpointArn"]
        tags = {t["Key"]: t["Value"] for page in sm.get_paginator("list_tags").paginate(ResourceArn=arn) for t in page.get("Tags", [])}
    except ClientError as exc:
        if not is_not_found(exc):
            raise
        return {"checked": name, "problems": [], "posted": False, "skipped": "deleted since"}
    view = read_tags(tags, rt.settings)
    problems: list[str] = []
    if view.owner is None and (view.stage is None or is_dev(view, rt.settings)):
        problems.append(
            "no `ml:owner` tag: nobody can be told before the reaper takes it to zero. "
            f"`aws sagemaker add-tags --resource-arn {arn} --tags Key=ml:owner,Value=you@example.com`"
        )
    if view.stage is None:
        problems.append(
            "no `ml:stage` tag: only dev-stage endpoints are taken to zero when idle, so this one would stay up, and bill, however idle. "
            f"`aws sagemaker add-tags --resource-arn {arn} --tags Key=ml:stage,Value=dev`"
        )
    gap = experiment_gap(view, rt.settings) if status_of(detail.EndpointStatus) == "CREATING" else None
    if gap is not None:
        problems.append(gap)
    result: EventResult = {"checked": name, "problems": problems, "posted": False}
    if problems:
        what = "created" if status_of(detail.EndpointStatus) == "CREATING" else "updated"
        notice = NoticeMessage(
            kind=KIND,
            id=name,
            arn=arn,
            region=region,
            account=ev.account or (arn.split(":")[4] if arn.count(":") > 4 else ""),
            owner=view.owner,
            title=f"Endpoint {name} was {what} without what the reaper needs",
            text="\n".join(f"• {p}" for p in problems),
        )
        result["posted"] = post_notice(rt, notice, now, ev.id)
    return result


def _event_tags(tags: dict[str, str] | list[dict[str, str]]) -> dict[str, str]:
    if isinstance(tags, dict):
        return dict(tags)
    return {t.get("Key", ""): t.get("Value", "") for t in tags}
