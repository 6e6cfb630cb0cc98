"""`reaper restore NAME` for endpoints: back with the same name, config, tags and autoscaling.

Reads the latest restore record from the action log and puts back what it says:
  classic               CreateEndpoint (same name, config, tags); autoscaling is registered again
                        once it is InService (here, or by the endpoint function on the state-change
                        event when the restore function started it and returned at once).
  inference-components  the copy counts and autoscaling minimums as they were.
  async                 the autoscaling minimum and instance count as they were; the wake policy the
                        reaper added is removed.
Safe to run twice: what is already back is left alone. Anything it needs that someone deleted
meanwhile (config, model, component) stops it with a RestoreError that says what and what to do.
Progress is reported while the endpoint is Creating, for up to REAPER_RESTORE_WAIT_MINUTES.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, cast

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, is_not_found, short
from reaper.aws.sagemaker_shapes import DescribeEndpointOutput
from reaper.core.errors import NoRestoreRecord, ReaperError, RestoreError
from reaper.core.observability import logger
from reaper.core.timeutil import human_duration, iso, parse_instant
from reaper.kinds.base import Say
from reaper.kinds.endpoint import autoscaling, wake
from reaper.kinds.endpoint.model import (
    ASYNC,
    CLASSIC,
    COMPONENTS,
    IN_SERVICE,
    KIND,
    OPEN,
    VARIANT_DIMENSION,
    RestoreRecord,
    comeback_note,
    restore_command,
    variant_resource_id,
)
from reaper.kinds.endpoint.settings import EndpointSettings
from reaper.kinds.endpoint.shapes import described
from reaper.record.message import NoticeMessage
from reaper.record.notices import post_notice
from reaper.record.runtime import Runtime

POLL_SECONDS = 15
TRANSITIONAL = ("Creating", "Updating", "SystemUpdating", "RollingBack")

sleep: Callable[[float], None] = time.sleep  # tests replace it; the polling itself is counted, not timed


class RestoreFailed(ReaperError):
    """The endpoint was recreated but did not come back (Failed); exit status 1."""


def latest_record(rt: Runtime, name: str) -> RestoreRecord | None:
    """The endpoint's latest restore record, as the action wrote it (actions.py)."""
    assert rt.log is not None
    return cast(RestoreRecord | None, rt.log.latest_restore(KIND, name))


def restore_endpoint(rt: Runtime, name: str, now: datetime, say: Say) -> str:
    if rt.log is None:
        raise RestoreError("restore needs the action log, where restore records are kept: set REAPER_TABLE or pass --table")
    record = latest_record(rt, name)
    if record is None:
        raise NoRestoreRecord(
            f"no restore record for endpoint {name!r}: the reaper has not taken it to zero (or its record is in another table)"
        )
    return run_record(rt, rt.clients(record.get("region") or rt.home_region), record, now, say)


def run_record(rt: Runtime, clients: Clients, record: RestoreRecord, now: datetime, say: Say, by: str = "") -> str:
    """Put back what this record says; `by` names the wake schedule doing it (empty: a person asked)."""
    kind_of = record.get("type")
    if kind_of == CLASSIC:
        return _classic(rt, clients, record, now, say, by)
    if kind_of == COMPONENTS:
        return _components(rt, clients, record, now, say, by)
    if kind_of == ASYNC:
        return _async(rt, clients, record, now, say)
    raise RestoreError(f"the restore record for {record['name']} has an unknown type {kind_of!r}")


# -- classic -----------------------------------------------------------------------------------


def _classic(rt: Runtime, clients: Clients, record: RestoreRecord, now: datetime, say: Say, by: str = "") -> str:
    sm, name, config = clients("sagemaker"), record["name"], record["config_name"]
    desc = describe_endpoint(sm, name)
    if desc is None:
        _check_recreatable(sm, record)
        kwargs: dict[str, object] = {"EndpointName": name, "EndpointConfigName": config}  # CreateEndpoint's arguments
        settable, system = split_tags(record.get("tags") or [])
        if settable:
            kwargs["Tags"] = settable
        # marked before the create, so the endpoint's Creating event finds this restore ours, never someone else's
        record = mark(rt, record, now, "restoring", restore_started_at=iso(now), restore_by=by)
        sm.create_endpoint(**kwargs)
        notice(
            rt,
            record,
            now,
            "started",
            f"Restoring endpoint {name}",
            f"Recreating it from config {config} with its {len(settable)} tags{_lost_clause(system)}; {comeback_note(_types(record))}.",
        )
        say(f"creating endpoint {name} from config {config}")
        status = "Creating"
    else:
        status = desc["EndpointStatus"]
        if desc.get("EndpointConfigName") != config:
            return f"endpoint {name} exists again with config {desc.get('EndpointConfigName')} (the record has {config}): left as it is"
        if status == IN_SERVICE and record.get("status") == "restored":
            return f"endpoint {name} is already back (restored {record.get('restored_at')}) and InService: nothing to do"
        if status == "Deleting":
            raise RestoreError(f"endpoint {name} is still being deleted; run `{restore_command(name)}` again when it is gone")
        say(f"endpoint {name} is already {status}")
    status = _follow(sm, name, rt.settings.of(EndpointSettings).restore_wait_minutes, say)
    if status == IN_SERVICE:
        return finish_classic(rt, clients, record, now)
    if status == "Failed":
        raise failed(rt, sm, record, now)
    return (
        f"endpoint {name} is {status}: the endpoint function puts its autoscaling back and posts when it is InService "
        f"(or run `{restore_command(name)}` again to follow it)"
    )


def finish_classic(rt: Runtime, clients: Clients, record: RestoreRecord, now: datetime) -> str:
    """The endpoint is InService again: register its autoscaling as it was, and say so."""
    done = autoscaling.reapply(clients("application-autoscaling"), clients("cloudwatch"), record.get("autoscaling") or [])
    record = mark(rt, record, now, "restored", restored_at=iso(now))
    scaling = "autoscaling: " + "; ".join(done) if done else "no autoscaling to put back"
    settable, system = split_tags(record.get("tags") or [])
    text = f"InService with config {record['config_name']}, its {len(settable)} tags{_lost_clause(system)}, {scaling}."
    notice(rt, record, now, "done", f"Endpoint {record['name']} is back", text)
    return f"restored endpoint {record['name']}: {text}"


def _check_recreatable(sm: Any, record: RestoreRecord) -> None:
    name, config = record["name"], record["config_name"]
    try:
        sm.describe_endpoint_config(EndpointConfigName=config)
    except ClientError as exc:
        if not is_not_found(exc):
            raise
        variants = ", ".join(f"{v['name']}: {v.get('instance_type')} × {v.get('count')}" for v in record.get("variants", []))
        raise RestoreError(
            f"cannot restore endpoint {name}: its endpoint configuration {config} was deleted after the reaper took it to zero. "
            f"Recreate {config} (variants {variants or '?'}; models {', '.join(record.get('models', [])) or '?'}) "
            f"and run `{restore_command(name)}` again"
        ) from None
    missing = []
    for model in record.get("models", []):
        try:
            sm.describe_model(ModelName=model)
        except ClientError as exc:
            if not is_not_found(exc):
                raise
            missing.append(model)
    if missing:
        raise RestoreError(
            f"cannot restore endpoint {name}: model {', '.join(missing)} (named by config {config}) was deleted after the reaper "
            f"took it to zero. Recreate the model and run `{restore_command(name)}` again"
        )


def failed(rt: Runtime, sm: Any, record: RestoreRecord, now: datetime) -> RestoreFailed:
    desc = describe_endpoint(sm, record["name"])
    why = (desc.get("FailureReason") if desc else None) or "no reason given"
    record = mark(rt, record, now, "failed", failure=why)
    text = (
        f"It was recreated from config {record['config_name']} but is Failed: {why}. The config and models are kept; "
        f"delete the failed endpoint and run `{restore_command(record['name'])}` again."
    )
    notice(rt, record, now, "failed", f"Endpoint {record['name']} did not come back", text)
    return RestoreFailed(f"endpoint {record['name']} did not come back: {why}")


# -- inference components ------------------------------------------------------------------------


def _components(rt: Runtime, clients: Clients, record: RestoreRecord, now: datetime, say: Say, by: str = "") -> str:
    sm, name = clients("sagemaker"), record["name"]
    if describe_endpoint(sm, name) is None:
        raise RestoreError(
            f"cannot restore endpoint {name}: the endpoint itself was deleted after its copies went to zero, and its inference components "
            "with it"
        )
    current: dict[str, int] = {}
    missing: list[str] = []
    for c in record.get("components", []):
        try:
            ic = sm.describe_inference_component(InferenceComponentName=c["name"])
        except ClientError as exc:
            if not is_not_found(exc):
                raise
            missing.append(c["name"])
            continue
        current[c["name"]] = int((ic.get("RuntimeConfig") or {}).get("DesiredCopyCount") or 0)
    if missing:
        raise RestoreError(
            f"cannot restore endpoint {name}: inference component {', '.join(missing)} was deleted after its copies went to zero; nothing "
            "was changed"
        )
    todo = [c for c in record.get("components", []) if current[c["name"]] != c["copies"]]
    if not todo and record.get("status") == "restored":
        return f"endpoint {name} is already back (restored {record.get('restored_at')}): every component has its copies"
    aas = clients("application-autoscaling")
    for t in record.get("autoscaling") or []:
        autoscaling.set_minimum(aas, t["resource_id"], t["dimension"], t["min"], t["max"])
    for c in todo:
        sm.update_inference_component_runtime_config(InferenceComponentName=c["name"], DesiredRuntimeConfig={"CopyCount": c["copies"]})
        say(f"{c['name']}: {current[c['name']]} → {c['copies']} copies")
    copies = ", ".join(f"{c['name']} × {c['copies']}" for c in record.get("components", []))
    record = mark(rt, record, now, "restored", restored_at=iso(now), restore_by=by)
    text = f"copies back: {copies}; autoscaling minimums as they were. {_sentence(comeback_note(_types(record)))}."
    notice(rt, record, now, "done", f"Endpoint {name} is back", text)
    return f"restored endpoint {name}: {text}"


# -- asynchronous ------------------------------------------------------------------------------------


def _async(rt: Runtime, clients: Clients, record: RestoreRecord, now: datetime, say: Say) -> str:
    sm, name = clients("sagemaker"), record["name"]
    desc = describe_endpoint(sm, name)
    if desc is None:
        raise RestoreError(f"cannot restore endpoint {name}: it was deleted after it was scaled to zero")
    status = _follow(sm, name, rt.settings.of(EndpointSettings).restore_wait_minutes, say)
    if status != IN_SERVICE:
        raise RestoreError(f"endpoint {name} is {status}; run `{restore_command(name)}` again when it is InService")
    current = describe_endpoint(sm, name)
    now_variants = current.get("ProductionVariants", []) if current else []
    desired = {v["VariantName"]: int(v.get("DesiredInstanceCount") or 0) for v in now_variants}
    variants = record.get("variants", [])
    if record.get("status") == "restored" and all(desired.get(v["name"], 0) >= v["desired"] for v in variants):
        return f"endpoint {name} is already back (restored {record.get('restored_at')}): nothing to do"
    aas, cw = clients("application-autoscaling"), clients("cloudwatch")
    if record.get("wake_added") and variants:
        autoscaling.remove_wake_policy(aas, cw, name, variant_resource_id(name, variants[0]["name"]))
    for v in variants:
        rid = variant_resource_id(name, v["name"])
        target = v.get("target")
        if target:
            autoscaling.set_minimum(aas, rid, VARIANT_DIMENSION, target["min"], target["max"])
            if v.get("scale_in_added"):
                autoscaling.remove_backlog_tracking(aas, rid)  # the owner's own policies stay
        else:
            autoscaling.deregister(aas, rid, VARIANT_DIMENSION)  # there was none before the reaper's: its policies go with it
    changes = [
        {"VariantName": v["name"], "DesiredInstanceCount": v["desired"]} for v in variants if desired.get(v["name"], 0) < v["desired"]
    ]
    if changes:
        sm.update_endpoint_weights_and_capacities(EndpointName=name, DesiredWeightsAndCapacities=changes)
        say(f"{name}: instances back to " + ", ".join(f"{c['VariantName']} × {c['DesiredInstanceCount']}" for c in changes))
    record = mark(rt, record, now, "restored", restored_at=iso(now))
    text = (
        "instances and autoscaling as they were; the reaper's wake and scale-in policies removed. "
        f"{_sentence(comeback_note(_types(record)))}."
    )
    notice(rt, record, now, "done", f"Endpoint {name} is back", text)
    if changes:
        _follow(sm, name, rt.settings.of(EndpointSettings).restore_wait_minutes, say)
    return f"restored endpoint {name}: {text}"


# -- tags ----------------------------------------------------------------------------------------------


def split_tags(tags: list[dict[str, str]]) -> tuple[list[dict[str, str]], list[str]]:
    """(the tags a caller may set, the keys of AWS's own that no restore can bring back).

    A key starting with `aws:` (any case) is reserved for AWS: `aws:cloudformation:stack-name` and the
    like are written by CloudFormation/CDK/JumpStart, and CreateEndpoint refuses the whole request if
    one is passed ("Tag keys and values can't start with aws:",
    https://docs.aws.amazon.com/general/latest/gr/aws_tagging.html ; docs/aws-assumptions.md row 3).
    """
    settable = [t for t in tags if not str(t.get("Key", "")).strip().lower().startswith("aws:")]
    system = [str(t.get("Key", "")) for t in tags if str(t.get("Key", "")).strip().lower().startswith("aws:")]
    return settable, system


def _lost_clause(system: list[str]) -> str:
    if not system:
        return ""
    return f" (not {', '.join(sorted(system))}: AWS's own tags, which only the service that set them can write)"


# -- shared --------------------------------------------------------------------------------------------


def describe_endpoint(sm: Any, name: str) -> DescribeEndpointOutput | None:
    try:
        desc = described(sm, name)
    except ClientError as exc:
        if is_not_found(exc):
            return None
        raise
    return desc


def _follow(sm: Any, name: str, wait_minutes: int, say: Say) -> str:
    """Read the status; while it is transitional, poll (up to the wait) saying how it goes. Returns the last status."""
    polls = math.ceil(wait_minutes * 60 / POLL_SECONDS)
    n = 0
    while True:
        desc = describe_endpoint(sm, name)
        if desc is None:
            raise RestoreFailed(f"endpoint {name} was deleted while it was being restored")
        status: str = desc["EndpointStatus"]
        if n:
            waited = n * POLL_SECONDS
            say(
                f"{name}: {status} after {waited} s"
                if waited < 60
                else f"{name}: {status} after {human_duration(timedelta(seconds=waited))}"
            )
        if status not in TRANSITIONAL or n >= polls:
            return status
        sleep(POLL_SECONDS)
        n += 1


def mark(rt: Runtime, record: RestoreRecord, now: datetime, status: str, **extra: Any) -> RestoreRecord:
    """A new version of the record; always after the last one, so it is the one read next. When the record
    leaves `reaped` (restoring, restored, failed, cancelled), its wake schedule is deleted: a restore done
    or cancelled by any path leaves nothing scheduled to bring the endpoint back."""
    assert rt.log is not None
    last = parse_instant(str(record.get("updated_at") or record.get("reaped_at") or iso(now)))
    at = max(now, last + timedelta(seconds=1))
    updated = cast(RestoreRecord, {**record, **extra, "status": status, "updated_at": iso(at)})
    rt.log.put_restore(KIND, record["name"], updated, at)
    if record.get("status") == OPEN and status != OPEN:
        close_wake(rt, updated)
    return updated


def close_wake(rt: Runtime, record: RestoreRecord) -> str | None:
    """Delete the record's wake schedule. A failure (the CLI's credentials may not allow it) is logged and
    returned, not raised: the record is closed, so the wake finds nothing to do when it fires (wakeup.py)."""
    name = record.get("schedule")
    if not name:
        return None
    group = record.get("schedule_group") or rt.settings.schedule_group
    try:
        wake.delete_schedule(rt.clients(record.get("region") or rt.home_region)("scheduler"), name, group)
    except AwsError as exc:
        logger.warning("wake schedule not deleted", extra={"schedule": name, "group": group, "error": short(exc)})
        return f"the wake schedule {name} could not be deleted ({short(exc)}); it will find the restore closed and do nothing"
    return None


def notice(rt: Runtime, record: RestoreRecord, now: datetime, phase: str, title: str, text: str) -> None:
    """Post this phase of the record's restore once (per reap), however often it is reached."""
    message = NoticeMessage(
        kind=KIND,
        id=record["name"],
        arn=record.get("arn"),
        region=record.get("region"),
        account=record.get("account"),
        owner=record.get("owner"),
        title=title,
        text=text,
    )
    post_notice(rt, message, now, f"restore-{phase}-{record.get('reaped_at')}")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _types(record: RestoreRecord) -> list[str]:
    types = [v.get("instance_type") for v in record.get("variants", []) if isinstance(v, dict) and v.get("instance_type")]
    if not types and record.get("instance_type"):
        types = [t.strip() for t in str(record["instance_type"]).split("+")]
    return [t for t in types if t]
