"""SageMaker Training Job State Change events.

- InProgress: check at once that the job carries ml:owner, ml:project, ml:stage and a ceiling of
  its own (a reaper:max-hours or reaper:max-usd tag, or MaxRuntimeInSeconds under the stack's
  runtime ceiling), and tell the owner what is missing. SageMaker sends InProgress again on every
  secondary-status change (Starting, Downloading, Training…) and may send an event twice, so the
  notice is claimed once per job, not per event.
- Completed / Failed / Stopped: record the job's final cost estimate in the action log, once.

The job is read back (DescribeTrainingJob and ListTags, which are consistent at once, unlike the
search index) rather than trusted from the event body.
"""

from __future__ import annotations

from datetime import datetime

from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field

from reaper.aws.faults import is_not_found
from reaper.aws.sagemaker_shapes import TrainingJob
from reaper.core.errors import BadEventError
from reaper.core.events import EventBridgeEvent, parse_model
from reaper.core.policy import experiment_gap, read_tags
from reaper.core.timeutil import human_duration
from reaper.kinds.base import Check, EventResult
from reaper.kinds.training_job.cost import cluster, hours
from reaper.kinds.training_job.model import KIND, CostRecord
from reaper.kinds.training_job.settings import TrainingJobSettings
from reaper.kinds.training_job.shapes import checkpoint_uri, describe_training_job
from reaper.record.message import NoticeMessage
from reaper.record.notices import post_notice
from reaper.record.runtime import Runtime

ENDED = ("Completed", "Failed", "Stopped")
KNOWN = ("InProgress", "Stopping", *ENDED)


class TrainingStateDetail(BaseModel):
    model_config = ConfigDict(extra="allow")

    TrainingJobName: str = Field(min_length=1, max_length=63)
    TrainingJobStatus: str


def route(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check | None = None) -> EventResult:
    """A "SageMaker Training Job State Change" from aws.sagemaker: the declaration routes only those here."""
    detail = parse_model(TrainingStateDetail, ev.detail, "a training job state change", "detail.")
    if detail.TrainingJobStatus not in KNOWN:
        raise BadEventError(f"unknown TrainingJobStatus {detail.TrainingJobStatus!r}")
    region = ev.region or rt.home_region
    name = detail.TrainingJobName
    if detail.TrainingJobStatus == "InProgress":
        return submission_check(rt, ev, region, name, now)
    if detail.TrainingJobStatus in ENDED:
        return final_cost(rt, ev, region, name, now)
    return {"event_id": ev.id, "checked": None, "skipped": f"{name} is {detail.TrainingJobStatus}"}


def _read(rt: Runtime, region: str, name: str) -> tuple[TrainingJob, dict[str, str]] | None:
    sm = rt.clients(region)("sagemaker")
    try:
        desc = describe_training_job(sm, name)
    except ClientError as exc:
        if is_not_found(exc):
            return None
        raise
    tags: dict[str, str] = {}
    request = {"ResourceArn": desc["TrainingJobArn"]}  # ListTags' arguments
    while True:
        page = sm.list_tags(**request)
        tags.update({t["Key"]: t["Value"] for t in page.get("Tags", [])})
        if not page.get("NextToken"):
            break
        request["NextToken"] = page["NextToken"]
    return desc, tags


def submission_check(rt: Runtime, ev: EventBridgeEvent, region: str, name: str, now: datetime) -> EventResult:
    read = _read(rt, region, name)
    if read is None:
        return {"event_id": ev.id, "checked": name, "problems": [], "posted": False, "skipped": "the job is gone"}
    desc, tags = read
    problems = problems_of(rt, desc, tags, region)
    result: EventResult = {"event_id": ev.id, "checked": name, "problems": problems, "posted": False}
    if not problems:
        return result
    arn = desc["TrainingJobArn"]
    view = read_tags(tags, rt.settings)
    if rt.log is not None and not rt.log.claim(f"training-submitted|{arn}", now):
        result["skipped"] = "the owner was told already"
        return result
    notice = NoticeMessage(
        kind=KIND,
        id=name,
        arn=arn,
        region=region,
        account=ev.account or arn.split(":")[4],
        owner=view.owner,
        title=f"Training job {name} started without what the reaper needs",
        text="\n".join(f"• {p}" for p in problems),
    )
    result["posted"] = post_notice(rt, notice, now, ev.id)
    # With the admin's opt-in, a spot job without checkpoints is stopped at once: the kind's sweep runs now
    # (the handler does it), so the stop passes the same gate as any other (protection, state, lease, claim).
    spot_bare = desc.get("EnableManagedSpotTraining") and not checkpoint_uri(desc)
    result["sweep_now"] = bool(spot_bare and rt.settings.of(TrainingJobSettings).spot_without_checkpoints == "stop" and not view.exempt)
    return result


def problems_of(rt: Runtime, desc: TrainingJob, tags: dict[str, str], region: str) -> list[str]:
    settings = rt.settings
    arn = desc["TrainingJobArn"]
    view = read_tags(tags, settings)
    problems = list(view.problems)
    present = {k.strip().lower(): v.strip() for k, v in tags.items()}
    for key in ("ml:owner", "ml:project", "ml:stage"):
        if not present.get(key):
            problems.append(f"no `{key}` tag: `aws sagemaker add-tags --resource-arn {arn} --tags Key={key},Value=...`")
    if view.exempt:
        return problems
    if desc.get("EnableManagedSpotTraining") and not checkpoint_uri(desc):
        # https://docs.aws.amazon.com/sagemaker/latest/dg/model-checkpoints.html: checkpoints reach S3 only with CheckpointConfig
        problems.append(
            "managed spot without CheckpointConfig: a spot interruption restarts it from scratch and bills the lost hours again; "
            "save to /opt/ml/checkpoints and set CheckpointConfig.S3Uri"
            + (
                " — stopped now (the stack's SpotWithoutCheckpoints=stop)"
                if settings.of(TrainingJobSettings).spot_without_checkpoints == "stop"
                else ""
            )
        )
    max_runtime = (desc.get("StoppingCondition") or {}).get("MaxRuntimeInSeconds")
    own_runtime = max_runtime is not None and max_runtime < settings.max_hours * 3600
    if view.max_hours is None and view.max_usd is None and not own_runtime:
        c = cluster(region, desc.get("ResourceConfig"), rt.clients(region).pricer)
        if c.hourly_usd:
            reach = (
                f"; at ${c.hourly_usd:,.2f}/h list price it reaches ${settings.max_usd:,.0f} after "
                f"{human_duration(settings.max_usd / c.hourly_usd * 60)}"
            )
        else:
            reach = f"; no list price for {c.instance_type or 'its instance type'} here, so only the runtime ceiling can be judged"
        problems.append(
            f"no ceiling of its own (a {settings.tag('max-hours')} or {settings.tag('max-usd')} tag, or MaxRuntimeInSeconds under "
            f"{settings.max_hours:g} h): the stack default applies — "
            + (
                "stopped"
                if settings.of(TrainingJobSettings).training_default_ceilings_act
                else "reported (not stopped: the stack's defaults are notify-only)"
            )
            + f" after {settings.max_hours:g} h or about ${settings.max_usd:,.0f}, whichever comes first{reach}"
        )
    gap = experiment_gap(view, settings)
    if gap is not None:
        problems.append(gap)
    return problems


def final_cost(rt: Runtime, ev: EventBridgeEvent, region: str, name: str, now: datetime) -> EventResult:
    read = _read(rt, region, name)
    if read is None:
        return {"event_id": ev.id, "checked": name, "recorded": False, "skipped": "the job is gone"}
    desc, tags = read
    record = cost_record(desc, tags, region, rt, now)
    result: EventResult = {"event_id": ev.id, "checked": name, "estimated_usd": record["estimated_usd"], "recorded": False}
    if rt.log is None:
        result["skipped"] = "no action log configured"
        return result
    if not rt.log.claim(f"training-final-cost|{desc['TrainingJobArn']}|{record['status']}", now):
        result["skipped"] = "recorded already"
        return result
    rt.log.record(dict(record), now, ev.id)
    result["recorded"] = True
    return result


def cost_record(desc: TrainingJob, tags: dict[str, str], region: str, rt: Runtime, now: datetime) -> CostRecord:
    view = read_tags(tags, rt.settings)
    c = cluster(region, desc.get("ResourceConfig"), rt.clients(region).pricer)
    status = desc.get("TrainingJobStatus", "Unknown")
    billable = desc.get("BillableTimeInSeconds")
    if billable is not None:
        ran = float(billable) / 3600.0
        basis = "billable time"
    else:
        ran = hours(desc.get("TrainingStartTime"), desc.get("TrainingEndTime") or now, now)
        basis = "wall time"
    spot = bool(desc.get("EnableManagedSpotTraining"))
    usd = None if c.hourly_usd is None else round(ran * c.hourly_usd, 2)
    if usd is None:
        reason = (
            f"{status} after {human_duration(ran * 60)}; cost not estimated: no list price for "
            f"{', '.join(c.unpriced) or 'its instance type'} in {region}"
        )
    else:
        bound = " (managed spot billed on wall time: an upper bound)" if spot and billable is None else ""
        reason = (
            f"{status} after {human_duration(ran * 60)} of {basis}: estimated ${usd:,.2f} ({c.count} x {c.instance_type} at "
            f"${c.hourly_usd:,.2f}/h list price{', ' + c.price.label if c.price is not None else ''}){bound}"
        )
    return {
        "type": "cost",
        "kind": KIND,
        "id": desc["TrainingJobName"],
        "arn": desc["TrainingJobArn"],
        "region": region,
        "account": desc["TrainingJobArn"].split(":")[4],
        "status": status,
        "action": "final-cost",
        "hours": round(ran, 3),
        "estimated_usd": usd,
        "hourly_usd": c.hourly_usd,
        "instance_type": c.instance_type,
        "instance_count": c.count,
        "upper_bound": spot and billable is None,
        "owner": view.owner,
        "project": view.project,
        "reason": reason,
    }
