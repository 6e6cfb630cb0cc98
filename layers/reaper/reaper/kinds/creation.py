"""The creation-time notice every kind gives, as the training job's admission does: a resource created
without `ml:owner`, `ml:stage` or `ml:project` (or with a `reaper:` tag that cannot be read, or with
neither a kill date nor a budgeted project) is told so once, when it is created.

The event is CloudTrail's record of the Create call, delivered to EventBridge as detail-type
"AWS API Call via CloudTrail" ("AWS services deliver events to CloudTrail on a best effort basis":
https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-service-event-cloudtrail.html): source
`aws.<service>`, `detail.eventName` the call, `detail.requestParameters` and `detail.responseElements`
its request and answer. Each kind says which calls it watches and how to find the new resource from
the event; its tags are then read from its own service (what the call's parameters said may have
changed since), never trusted from the event body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from reaper.aws.faults import is_not_found
from reaper.aws.tagging import current_tags
from reaper.core.events import CloudTrailDetail, EventBridgeEvent, parse_cloudtrail
from reaper.core.policy import OWNER, PROJECT, STAGE, experiment_gap, read_tags
from reaper.record.message import NoticeMessage
from reaper.record.notices import post_notice
from reaper.record.runtime import Runtime

CLOUDTRAIL = "AWS API Call via CloudTrail"
ASKED_FOR = (OWNER, STAGE, PROJECT)


@dataclass(frozen=True)
class Created:
    """The new resource, with its tags as its own service reads them now."""

    kind: str
    id: str
    arn: str
    what: str  # "MLflow tracking server", in the notice's title
    tags: dict[str, str]
    tag_command: str  # a command to copy, with {arn} {id} {key} placeholders


@dataclass(frozen=True)
class WatchedCreate:
    """What a kind watches: its Create calls, and how to find the resource one made (id, ARN) from the event."""

    kind: str
    what: str
    calls: tuple[str, ...]
    locate: Callable[[CloudTrailDetail, str, str], tuple[str, str] | None]  # (detail, region, account) -> (id, ARN)
    tag_command: str


def param(detail: CloudTrailDetail, *names: str) -> str | None:
    """The first of these request parameters (or response elements) that is a non-blank string."""
    for source in (detail.requestParameters or {}, detail.responseElements or {}):
        for name in names:
            value = source.get(name)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def found_in(detail: CloudTrailDetail, pattern: re.Pattern[str]) -> str | None:
    """The first match of `pattern` anywhere in the call's answer (services nest it differently)."""
    m = pattern.search(json.dumps(detail.responseElements or {}))
    return m.group(0) if m else None


def read_created(rt: Runtime, region: str, account: str, detail: CloudTrailDetail, watched: WatchedCreate) -> Created | None:
    located = watched.locate(detail, region, account)
    if located is None:
        return None
    rid, arn = located
    try:
        tags = current_tags(rt.clients(region), arn)
    except ClientError as exc:
        if is_not_found(exc):
            return None  # deleted since: nothing to say
        raise
    return Created(watched.kind, rid, arn, watched.what, tags, watched.tag_command)


def missing(created: Created, rt: Runtime) -> list[str]:
    """What the new resource lacks: unreadable reaper tags, the three ml: tags, and a kill date or budget."""
    view = read_tags(created.tags, rt.settings)
    present = {k.strip().lower(): v.strip() for k, v in created.tags.items()}
    problems = list(view.problems)
    for key in ASKED_FOR:
        if not present.get(key):
            problems.append(f"no `{key}` tag: `{created.tag_command.format(arn=created.arn, key=key, id=created.id)}`")
    gap = experiment_gap(view, rt.settings)
    if gap is not None:
        problems.append(gap)
    return problems


def notice(rt: Runtime, ev: EventBridgeEvent, now: datetime, watched: WatchedCreate) -> dict[str, Any]:
    """Check the resource a watched Create call made, and tell its owner (or the admin channel) once what it lacks."""
    detail = parse_cloudtrail(ev)
    calls = watched.calls
    result: dict[str, Any] = {"event_id": ev.id, "checked": None, "problems": [], "posted": False}
    if detail.eventName not in calls:
        return {**result, "skipped": f"CloudTrail {detail.eventName!r}: not a call this function watches ({', '.join(calls)})"}
    if detail.errorCode:
        return {**result, "skipped": f"the call failed ({detail.errorCode})"}
    region = detail.awsRegion or ev.region or rt.home_region
    account = str((detail.model_extra or {}).get("recipientAccountId") or ev.account or "")
    created = read_created(rt, region, account, detail, watched)
    if created is None:
        return {**result, "skipped": "the resource is gone (or the event names none)"}
    problems = missing(created, rt)
    result.update(checked=created.id, problems=problems)
    if not problems:
        return result
    if rt.log is not None and not rt.log.claim(f"created|{created.kind}|{created.arn}", now):
        return {**result, "skipped": "the owner was told already"}
    told = NoticeMessage(
        kind=created.kind,
        id=created.id,
        arn=created.arn,
        region=region,
        account=ev.account or created.arn.split(":")[4],
        owner=read_tags(created.tags, rt.settings).owner,
        title=f"{created.what} {created.id} was created without what the reaper needs",
        text="\n".join(f"• {p}" for p in problems),
    )
    result["posted"] = post_notice(rt, told, now, ev.id)
    return result
