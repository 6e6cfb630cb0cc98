"""Events the FSx function takes besides its schedule.

* `SageMaker Training Job State Change` to Completed, Failed or Stopped: look at once at the file
  systems the job read (its InputDataConfig is in the event), and arrange a one-off check for
  when their idle window ends — an EventBridge Scheduler `at(...)` schedule that invokes this
  function and deletes itself after it ran. No process waits in between.
* `FSx Idle Window Check` (source `mlreaper`): that one-off check.

A check is the ordinary pipeline on just those file systems (the `Check` its caller hands in): same rules, grace, claims and
messages, so a re-delivered event acts and posts once. The declaration routes each event here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reaper.aws.faults import create_one_off_schedule
from reaper.aws.sagemaker_shapes import Channel
from reaper.core.events import EventBridgeEvent, M, parse_model
from reaper.core.model import Outcome
from reaper.core.policy import read_tags
from reaper.core.timeutil import as_utc, iso
from reaper.kinds.base import Check, EventResult
from reaper.kinds.fsx import FS_ID_PATTERN
from reaper.kinds.fsx.jobs import lustre_inputs
from reaper.kinds.fsx.rules import idle_window
from reaper.kinds.fsx.settings import FsxSettings
from reaper.record.runtime import Runtime

JOB_STATE_CHANGE = "SageMaker Training Job State Change"
IDLE_CHECK = "FSx Idle Window Check"
ENDED = ("Completed", "Failed", "Stopped")
CHECK_MARGIN = timedelta(minutes=10)  # past the window's end, so CloudWatch has the last periods


class JobStateDetail(BaseModel):
    model_config = ConfigDict(extra="allow")

    TrainingJobName: str = Field(min_length=1)
    TrainingJobStatus: str = Field(min_length=1)
    InputDataConfig: list[Channel] | None = None
    TrainingEndTime: datetime | None = None
    LastModifiedTime: datetime | None = None


class IdleCheckDetail(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_system_ids: list[str] = Field(min_length=1, max_length=50)
    region: str | None = None

    @field_validator("file_system_ids")
    @classmethod
    def _ids(cls, v: list[str]) -> list[str]:
        for fs_id in v:
            if re.fullmatch(FS_ID_PATTERN, fs_id) is None:
                raise ValueError(f"{fs_id!r} is not a file system id")
        return v


def _parse(model: type[M], detail: Mapping[str, object], what: str) -> M:
    return parse_model(model, detail, f"a {what} event", "detail.")


def idle_window_check(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check) -> EventResult:
    """The one-off check a job's end arranged: are its file systems finished now?"""
    detail: IdleCheckDetail = _parse(IdleCheckDetail, ev.detail, IDLE_CHECK)
    region = detail.region or ev.region or rt.home_region
    outcomes = check(rt, "fsx", region, detail.file_system_ids, now, ev.id)
    result: EventResult = {"event_id": ev.id, "checked": sorted(o.resource.id for o in outcomes), **_verdicts(outcomes)}
    missing = sorted(set(detail.file_system_ids) - {o.resource.id for o in outcomes})
    if missing:
        result["gone"] = missing  # deleted since the check was arranged: nothing to look at (as job_state_changed says)
    return result


def job_state_changed(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check) -> EventResult:
    detail: JobStateDetail = _parse(JobStateDetail, ev.detail, JOB_STATE_CHANGE)
    result: EventResult = {"event_id": ev.id, "job": detail.TrainingJobName, "checked": [], "scheduled": {}}
    if detail.TrainingJobStatus not in ENDED:
        return {**result, "skipped": f"status {detail.TrainingJobStatus}: only ended jobs are looked at"}
    region = ev.region or rt.home_region
    inputs = detail.InputDataConfig
    if inputs is None:  # a trimmed event: ask SageMaker what the job read
        inputs = rt.clients(region)("sagemaker").describe_training_job(TrainingJobName=detail.TrainingJobName).get("InputDataConfig")
    fs_ids = list(lustre_inputs(inputs))
    if not fs_ids:
        return {**result, "skipped": "the job read no FSx for Lustre file system"}
    ended = as_utc(detail.TrainingEndTime or detail.LastModifiedTime or now)
    outcomes = check(rt, "fsx", region, fs_ids, now, ev.id)
    result.update({"checked": sorted(o.resource.id for o in outcomes), **_verdicts(outcomes)})
    for o in (o for o in outcomes if o.resource.id in fs_ids):
        window = idle_window(read_tags(o.resource.tags, rt.settings), rt.settings)
        result["scheduled"][o.resource.id] = arrange_check(rt, region, o.resource.id, ended + timedelta(minutes=window) + CHECK_MARGIN, now)
    missing = sorted(set(fs_ids) - {o.resource.id for o in outcomes})
    if missing:
        result["gone"] = missing  # deleted already, or not Lustre: nothing to look at
    return result


def arrange_check(rt: Runtime, region: str, fs_id: str, due: datetime, now: datetime) -> str:
    """A one-off EventBridge Scheduler schedule that invokes this function at `due` for `fs_id`."""
    s = rt.settings
    own = s.of(FsxSettings)
    if due <= now:
        return "not needed: the idle window has ended already"
    if not (own.check_function_arn and own.check_role_arn):
        return "not arranged: REAPER_FSX_CHECK_FUNCTION_ARN / REAPER_FSX_CHECK_ROLE_ARN are not set (the scheduled sweep will see it)"
    name = f"mlreaper-fsx-{fs_id}-{due:%Y%m%d%H%M}"
    payload = {
        "version": "0",
        "id": name,
        "detail-type": IDLE_CHECK,
        "source": "mlreaper",
        "account": "",
        "time": iso(due),
        "region": region,
        "resources": [],
        "detail": {"file_system_ids": [fs_id], "region": region},
    }
    created = create_one_off_schedule(
        rt.clients()("scheduler"),
        name=name,
        group=s.schedule_group,
        at=due,
        timezone="UTC",
        target_arn=own.check_function_arn,
        role_arn=own.check_role_arn,
        payload=payload,
        description=f"mlreaper: is {fs_id} finished now that its idle window has ended?",
    )
    return f"check at {iso(due)} ({name})" if created else f"arranged already for {iso(due)} ({name})"


def _verdicts(outcomes: list[Outcome]) -> EventResult:
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.verdict.value] = counts.get(o.verdict.value, 0) + 1
    return {
        "verdicts": counts,
        "acted": [o.resource.id for o in outcomes if o.executed],
        "reasons": {o.resource.id: o.reason for o in outcomes},
        "errors": [f"{o.resource.kind} {o.resource.id}: {o.reason}" for o in outcomes if o.verdict.value == "error"],
    }
