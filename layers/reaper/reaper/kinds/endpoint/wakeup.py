"""What a wake does when its schedule fires: bring the endpoint back only while it is still the reaper's.

A wake (wake.py made the schedule, the restore function runs this) restores an endpoint only when
  * its restore record is open: `reaped`, or `restoring` started by this same wake (a retried delivery);
  * the record names this wake (a wake left from an earlier reap does nothing);
  * the endpoint is as the reaper left it: a classic endpoint absent (the reaper deleted it), an
    inference-component or async endpoint still there at zero;
  * the endpoint is not tagged `reaper:exempt`.
Someone else's deletion, recreation or exemption instead closes the record (`cancelled`), deletes
the schedule and is said once ("restore cancelled: deleted by someone else"). The same happens when
the endpoint's state-change event shows it first (events.py), and when the change lands between the
check and the restore's own call (the call's refusal is read as that). docs/kinds/endpoint.md, "Wake".
"""

from __future__ import annotations

from datetime import datetime

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import error_code, is_not_found
from reaper.core.errors import RestoreError
from reaper.core.observability import logger
from reaper.core.policy import read_tags
from reaper.kinds.base import Say
from reaper.kinds.endpoint import restore
from reaper.kinds.endpoint.model import CLASSIC, OPEN, RestoreRecord
from reaper.record.runtime import Runtime

DELETED = "deleted by someone else"
RECREATED = "recreated by someone else"


def exempted(settings_tag: str) -> str:
    return f"tagged {settings_tag}=true while at zero"


def wake_endpoint(rt: Runtime, name: str, schedule: str, now: datetime, say: Say) -> str:
    """The wake named `schedule` fired for endpoint `name` (an empty `schedule`: a wake made before
    wakes were named, recognised by its reason)."""
    if rt.log is None:
        raise RestoreError("a wake needs the action log, where restore records are kept: set REAPER_TABLE")
    record = restore.latest_record(rt, name)
    if record is None:
        return f"wake for endpoint {name}: no restore record, nothing to do"
    idle = _not_this_wakes(record, schedule)
    if idle is not None:
        logger.info("wake did nothing", extra={"endpoint": name, "schedule": schedule, "why": idle})
        return f"wake for endpoint {name}: {idle}; nothing done"
    clients = rt.clients(record.get("region") or rt.home_region)
    why = someone_else(rt, clients, record)
    if why is not None:
        return cancel(rt, record, now, why)
    try:
        return restore.run_record(rt, clients, record, now, say, by=schedule or "wake")
    except (ClientError, RestoreError) as exc:  # did the endpoint change hands between the check and the restore's call?
        race = _taken_meanwhile(rt, clients, record, exc)
        if race is None:
            raise
        return cancel(rt, restore.latest_record(rt, name) or record, now, race)


def _not_this_wakes(record: RestoreRecord, schedule: str) -> str | None:
    """Why this wake is not the one to act on the record, or None."""
    status = record.get("status")
    mine = bool(schedule) and record.get("restore_by") == schedule
    if status != OPEN and not (status == "restoring" and mine):
        said = f" ({record['cancelled']})" if record.get("cancelled") else ""
        return f"its restore record is {status}{said}"
    if schedule and record.get("schedule") and record.get("schedule") != schedule:
        return f"the open restore record is woken by {record.get('schedule')}, not by this schedule"
    return None


def someone_else(rt: Runtime, clients: Clients, record: RestoreRecord) -> str | None:
    """Who took the endpoint out of the reaper's hands, read now: deleted, recreated or exempted; None if nobody."""
    desc = restore.describe_endpoint(clients("sagemaker"), record["name"])
    if record.get("type") == CLASSIC:
        if desc is not None and record.get("status") == OPEN:
            return RECREATED  # the reaper deleted it and has not recreated it: whoever did owns it
        return None  # absent (as the reaper left it), or being recreated by this very wake
    if desc is None:
        return DELETED  # inference-component and async endpoints stay while at zero
    sm = clients("sagemaker")
    try:
        pages = sm.get_paginator("list_tags").paginate(ResourceArn=desc["EndpointArn"])
        tags = {t["Key"]: t["Value"] for page in pages for t in page["Tags"]}
    except ClientError as exc:
        if is_not_found(exc):  # deleted since the DescribeEndpoint just above
            return DELETED
        raise
    if read_tags(tags, rt.settings).exempt:
        return exempted(rt.settings.tag("exempt"))
    return None


def _taken_meanwhile(rt: Runtime, clients: Clients, record: RestoreRecord, exc: Exception) -> str | None:
    """After the restore failed: did someone else take the endpoint meanwhile? A classic endpoint's
    CreateEndpoint refused because one of that name exists (someone else's: this wake had checked it
    absent); an endpoint at zero deleted or exempted since the check (read again). Else None."""
    if record.get("type") == CLASSIC:
        message = str(exc.response.get("Error", {}).get("Message", "")).lower() if isinstance(exc, ClientError) else ""
        exists = isinstance(exc, ClientError) and error_code(exc) == "ValidationException" and "already exist" in message
        return RECREATED if exists else None
    return someone_else(rt, clients, record)


def cancel(rt: Runtime, record: RestoreRecord, now: datetime, why: str) -> str:
    """Close the record (its wake schedule is deleted with it) and say so once per reap."""
    name = record["name"]
    closed = restore.mark(rt, record, now, "cancelled", cancelled=why)
    text = (
        f"restore cancelled: {why}. The reaper will not bring it back (its wake is deleted); "
        f"`reaper restore {name}` still can, if you want it back."
    )
    restore.notice(rt, closed, now, "cancelled", f"Endpoint {name} will not be restored", text)
    logger.info("restore cancelled", extra={"endpoint": name, "why": why, "schedule": record.get("schedule")})
    return f"endpoint {name}: {text}"


def closes(record: RestoreRecord | None, status: str) -> str | None:
    """What an endpoint state change (EndpointStatus as events.status_of reads it) says of an open
    record: a classic endpoint Creating that the reaper is not recreating, or an endpoint at zero Deleting."""
    if record is None or record.get("status") != OPEN:
        return None
    if record.get("type") == CLASSIC:
        return RECREATED if status == "CREATING" else None
    return DELETED if status == "DELETING" else None
