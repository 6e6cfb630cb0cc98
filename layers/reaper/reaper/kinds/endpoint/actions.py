"""To zero, by endpoint type. Each action re-reads what it changes, records how to undo it, then acts.
A sweep's batch of them (`act_many`) shares the reads AWS takes many in one call and one write of their
restore records; each change is still gated alone and made in its own call.

delete          classic endpoints. Refused (verdict `error`) unless the action log can keep
                the restore record and the config and every model it names still exist;
                the record (name, config, tags, autoscaling) is written before the delete.
scale-to-zero   inference-component endpoints: every component to 0 copies (autoscaling
                minimums to 0 first, so they do not scale back); asynchronous endpoints: the
                autoscaling minimum to 0, the documented backlog scale-in policy where the variant
                has none, a wake-on-backlog policy if none is there, 0 instances.
                Refused like delete without an action log: the copy counts, instance counts and
                autoscaling settings it overwrites live only in the restore record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, error_code, is_not_found, short
from reaper.aws.sagemaker_shapes import DescribeEndpointOutput, ProductionVariantSummary
from reaper.core.errors import ActionRefused
from reaper.core.model import Decision, KindAction, Resource
from reaper.core.timeutil import iso
from reaper.kinds.base import ActContext, BatchAnswer, Made, Unconfirmed, action_named
from reaper.kinds.endpoint import ActionName, autoscaling, wake
from reaper.kinds.endpoint.model import (
    ASYNC,
    CLASSIC,
    COMPONENT_DIMENSION,
    COMPONENTS,
    KIND,
    VARIANT_DIMENSION,
    Component,
    ComponentRecord,
    EndpointFacts,
    RestoreRecord,
    TargetRecord,
    VariantRecord,
    comeback_note,
    component_resource_id,
    restore_command,
    variant_resource_id,
)
from reaper.kinds.endpoint.shapes import (
    DescribeEndpointConfigOutput,
    ScalableTarget,
    described,
)
from reaper.kinds.endpoint.signals import DetailReader, reader_for


def _base_record(ctx: ActContext, r: Resource, kind_of: str, decision: Decision) -> RestoreRecord:
    return {
        "kind": KIND,
        "type": kind_of,
        "name": r.id,
        "arn": r.arn,
        "region": r.region,
        "account": r.account,
        "owner": next((v for k, v in r.tags.items() if k.strip().lower() == "ml:owner"), None),
        "instance_type": r.instance_type,
        "instance_count": r.instance_count,
        "hourly_usd": r.hourly_usd,
        "reason": decision.reason,
        "reaped_at": iso(ctx.now),
        "event_id": ctx.event_id,
        "status": "reaped",
    }


def _schedule(ctx: ActContext, r: Resource, d: Decision, record: RestoreRecord) -> str:
    """Before going to zero: the schedule that brings it back (start of working hours, or before its usual traffic)."""
    if not wake.wanted(ctx, d):
        return ""
    if ctx.log is None:
        return "; not scheduled to come back: no action log to keep the restore record in"
    learned = wake.learned_at(ctx, d)
    name, at = wake.schedule_restore(ctx, r, learned)
    record["wake_at"], record["schedule"], record["schedule_group"] = at.isoformat(), name, ctx.settings.schedule_group
    if learned is not None:  # pre-warm: up before its usual traffic, which the report does not count as saved
        record["usual_start"], record["prewarm_minutes"] = str(d.evidence["usual_start"]), int(d.evidence["prewarm_minutes"])
        warned = d.evidence.get("rhythm_warned_at") or d.evidence.get("warned_at")  # made after its grace (grace.py)
        if warned:
            record["rhythm_warned_at"] = str(warned)
    return "; " + wake.describe(name, at)


# -- one change, or a batch's: planned after its gate, recorded, then made ------------------------
# A sweep makes up to ACT_BATCH (reaper.kinds.endpoint) endpoints' changes together (reaper.sweep.batch): each begun and gated
# alone, then their scalable targets read in one DescribeScalableTargets (ResourceIds takes up to 50:
# https://docs.aws.amazon.com/autoscaling/application/APIReference/API_DescribeScalableTargets.html),
# their restore records written in one TransactWriteItems (all or none), then each change made in its
# own call. An event or a button makes one change the same way, a batch of one (docs/performance.md).


@dataclass
class _Change:
    """One endpoint's change after its gate: its restore record (autoscaling still to add), the resource ids
    of the scalable targets the record keeps, and what the change needs once the record is written."""

    resource: Resource
    decision: Decision
    record: RestoreRecord
    dimension: str
    scaled: list[str]
    type: str
    variants: list[ProductionVariantSummary] = field(default_factory=list)  # async: DescribeEndpoint's, as the gate read them
    components: tuple[Component, ...] = ()
    comeback: str = ""


def act_many(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    """Plan each change (its refusals included), read the batch's scalable targets at once, write every restore
    record in one write, then make each change alone. A change refused or failed is its own (`own`); a record
    write that fails changes nothing of the batch."""
    own: dict[str, BaseException] = {}
    reader = DetailReader(ctx.clients)  # a model read once per batch, whichever endpoints name it
    planned: list[_Change] = []
    _list_models(ctx, reader, items)
    for r, d in items:
        try:
            planned.append(_plan(ctx, r, d, reader))
        except Exception as exc:  # refused, an AWS error, or a bug: this endpoint's (reaper.sweep.batch._own_error)
            own[r.id] = exc
    try:
        found = _targets(ctx, planned)
    except AwsError as exc:
        return BatchAnswer(own={**own, **{c.resource.id: exc for c in planned}})
    recorded: list[_Change] = []
    for c in planned:
        try:
            _complete(ctx, c, found)
            recorded.append(c)
        except Exception as exc:
            own[c.resource.id] = exc
    assert ctx.log is not None  # _plan refuses without one
    try:
        ctx.log.put_restores(KIND, [(c.resource.id, c.record) for c in recorded], ctx.now)
    except AwsError as exc:  # no record, no change
        return BatchAnswer(own={**own, **{c.resource.id: exc for c in recorded}})
    done: dict[str, str | None] = {}
    for c in recorded:
        try:
            done[c.resource.id] = _make(ctx, c)
        except Exception as exc:
            own[c.resource.id] = exc
    return BatchAnswer(done=done, own=own)


def _alone(ctx: ActContext, r: Resource, d: Decision) -> str | None:
    """The one-resource path (an event, a button, a batch too small): a batch of one."""
    answer = act_many(ctx, [(r, d)])
    if r.id in answer.own:
        raise answer.own[r.id]
    return answer.done[r.id]


def delete_classic(ctx: ActContext, r: Resource, d: Decision) -> str | None:
    return _alone(ctx, r, d)


def scale_to_zero(ctx: ActContext, r: Resource, d: Decision) -> str | None:
    return _alone(ctx, r, d)


def _plan(ctx: ActContext, r: Resource, d: Decision, reader: DetailReader) -> _Change:
    match action_named(ActionName, d.action):
        case ActionName.DELETE:
            if ctx.log is None:
                raise ActionRefused("DeleteEndpoint", "no action log to keep the restore record in (set REAPER_TABLE); nothing was deleted")
            return _plan_classic(ctx, r, d, reader)
        case ActionName.SCALE_TO_ZERO:
            if ctx.log is None:  # the declaration says needs_log, so the pipeline refuses first; this holds without it
                raise ActionRefused("ScaleToZero", "no action log to keep the restore record in (set REAPER_TABLE); nothing was changed")
            details = r.facts_as(EndpointFacts).details
            kind_of = details.type if details else d.evidence.get("type")
            if kind_of == COMPONENTS:
                return _plan_components(ctx, r, d, reader)
            if kind_of == ASYNC:
                desc = _described(ctx, r)
                variants = list(desc.get("ProductionVariants", []))
                ids = [variant_resource_id(r.id, v["VariantName"]) for v in variants]
                return _Change(r, d, _base_record(ctx, r, ASYNC, d), VARIANT_DIMENSION, ids, ASYNC, variants=variants)
            raise ActionRefused("ScaleToZero", f"a {kind_of or 'unknown'} endpoint cannot be scaled to zero")
        case None:
            raise ActionRefused(str(d.action), "not an endpoint action")
        case other:
            assert_never(other)


def _targets(ctx: ActContext, planned: list[_Change]) -> dict[str, ScalableTarget]:
    """The batch's scalable targets, one DescribeScalableTargets per 50 ids of a dimension."""
    found: dict[str, ScalableTarget] = {}
    aas = ctx.clients("application-autoscaling")
    for dimension in sorted({c.dimension for c in planned}):
        ids = [rid for c in planned if c.dimension == dimension for rid in c.scaled]
        if ids:
            found.update(autoscaling.targets(aas, ids, dimension))
    return found


def _complete(ctx: ActContext, c: _Change, found: dict[str, ScalableTarget]) -> None:
    """The record's autoscaling from the batch's targets (their policies read only where there is a target),
    and the schedule that brings it back."""
    aas, cw = ctx.clients("application-autoscaling"), ctx.clients("cloudwatch")
    if c.type == ASYNC:
        _complete_async(ctx, c, found)
    else:
        c.record["autoscaling"] = autoscaling.recorded(aas, cw, c.scaled, c.dimension, found)
    c.comeback = _schedule(ctx, c.resource, c.decision, c.record)


def _make(ctx: ActContext, c: _Change) -> str:
    if c.type == CLASSIC:
        return _delete(ctx, c)
    if c.type == COMPONENTS:
        return _zero_components(ctx, c)
    return _zero_async(ctx, c)


# -- classic: delete after the restore record ------------------------------------------------


def _plan_classic(ctx: ActContext, r: Resource, d: Decision, reader: DetailReader) -> _Change:
    """Refused unless it can be recreated: its configuration (the one the gate's DescribeEndpoint names, as this
    sweep read it: a configuration cannot be changed, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateEndpointConfig.html)
    and every model it names, each model read again now."""
    desc = _described(ctx, r)
    config_name = desc["EndpointConfigName"]
    config = _config(ctx, reader, config_name)
    if config is None:
        raise ActionRefused(
            "DeleteEndpoint",
            f"its endpoint configuration {config_name} no longer exists, so it could not be recreated; nothing was deleted",
        )
    variants = config.get("ProductionVariants", [])
    if config.get("AsyncInferenceConfig") or any(not v.get("ModelName") for v in variants):
        raise ActionRefused("DeleteEndpoint", f"its configuration {config_name} is no longer a classic real-time one; nothing was deleted")
    models = sorted({v["ModelName"] for v in variants})
    missing = [m for m in models if not reader.model_exists(m)]
    if missing:
        raise ActionRefused(
            "DeleteEndpoint",
            f"model {', '.join(missing)} named by {config_name} no longer exists, so it could not be recreated; nothing was deleted",
        )
    warned = ctx.settings.tag("warned-at").lower()
    record = _base_record(ctx, r, CLASSIC, d)
    record["config_name"] = config_name
    record["models"] = models
    record["variants"] = [
        VariantRecord(name=v["VariantName"], instance_type=v.get("InstanceType"), count=v.get("InitialInstanceCount")) for v in variants
    ]
    record["tags"] = [t for t in _tags_now(ctx, r) if t["Key"].strip().lower() != warned]
    ids = [variant_resource_id(r.id, v["VariantName"]) for v in desc.get("ProductionVariants", [])]
    return _Change(r, d, record, VARIANT_DIMENSION, ids, CLASSIC)


def _list_models(ctx: ActContext, reader: DetailReader, items: Sequence[tuple[Resource, Decision]]) -> None:
    """The models a batch of deletes names, read now in ListModels pages when this sweep's own listing held
    every model in at most half as many pages as the batch has models (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ListModels.html:
    up to 100 a page); else each is described in `_plan_classic`. Either way at most one call per model."""
    names: set[str] = set()
    for r, d in items:
        if action_named(ActionName, d.action) is not ActionName.DELETE:
            continue
        try:
            config = _config(ctx, reader, _described(ctx, r)["EndpointConfigName"])
        except AwsError:
            continue  # its plan reads again, and says why
        names.update(v["ModelName"] for v in (config.get("ProductionVariants", []) if config else []) if v.get("ModelName"))
    pages = reader_for(ctx.clients).pages_for_all
    if pages is not None and 0 < pages <= len(names) // 2:
        reader.list_all_models()


def _config(ctx: ActContext, reader: DetailReader, name: str) -> DescribeEndpointConfigOutput | None:
    """The configuration as this sweep's signals read it (reaper.kinds.endpoint.signals.reader_for), else read now."""
    swept = reader_for(ctx.clients)
    return swept.config(name) if swept.has_config(name) else reader.config(name)


def _delete(ctx: ActContext, c: _Change) -> str:
    r, record = c.resource, c.record
    ctx.clients("sagemaker").delete_endpoint(EndpointName=r.id)
    scaling = record.get("autoscaling") or []
    note = ""
    if scaling:
        aas = ctx.clients("application-autoscaling")
        for t in scaling:
            autoscaling.deregister(aas, t["resource_id"], t["dimension"])
        note = f"; autoscaling recorded and deregistered ({len(scaling)} target{'s' if len(scaling) > 1 else ''})"
    models = record.get("models") or []
    return (
        f"deleted; config {record.get('config_name')} and model{'s' if len(models) > 1 else ''} {', '.join(models)} kept; restore record "
        f"written{note}{c.comeback}"
    )


# -- inference components: copies to 0 --------------------------------------------------------


def _plan_components(ctx: ActContext, r: Resource, d: Decision, reader: DetailReader) -> _Change:
    sm = ctx.clients("sagemaker")
    names = [
        ic["InferenceComponentName"]
        for page in sm.get_paginator("list_inference_components").paginate(EndpointNameEquals=r.id)
        for ic in page.get("InferenceComponents", [])
    ]
    components = reader.components(names)
    if not components or all(c.copies == 0 for c in components):
        raise ActionRefused("UpdateInferenceComponentRuntimeConfig", "no inference component has copies any more; nothing to do")
    record = _base_record(ctx, r, COMPONENTS, d)
    record["components"] = [ComponentRecord(name=c.name, variant=c.variant, copies=c.copies) for c in components]
    ids = [component_resource_id(c.name) for c in components]
    return _Change(r, d, record, COMPONENT_DIMENSION, ids, COMPONENTS, components=components)


def _zero_components(ctx: ActContext, c: _Change) -> str:
    sm, aas = ctx.clients("sagemaker"), ctx.clients("application-autoscaling")
    scaling = c.record.get("autoscaling") or []
    for t in scaling:
        if t["min"] > 0:  # else autoscaling would put the copies straight back
            autoscaling.set_minimum(aas, t["resource_id"], COMPONENT_DIMENSION, 0, t["max"])
    for ic in c.components:
        if ic.copies > 0:
            sm.update_inference_component_runtime_config(InferenceComponentName=ic.name, DesiredRuntimeConfig={"CopyCount": 0})
    was = ", ".join(f"{ic.name} (was {ic.copies})" for ic in c.components)
    minimums = "; autoscaling minimums set to 0" if any(t["min"] > 0 for t in scaling) else ""
    return f"copies set to 0: {was}; managed instance scaling releases the instances{minimums}{c.comeback}"


# -- asynchronous: minimum 0, woken by backlog --------------------------------------------------


def _complete_async(ctx: ActContext, c: _Change, found: dict[str, ScalableTarget]) -> None:
    """Each variant's target and whether it has a policy that scales in; whether a wake-on-backlog policy is
    there. A wake policy is a scaling policy, which exists only on a registered scalable target
    (https://docs.aws.amazon.com/autoscaling/application/APIReference/API_PutScalingPolicy.html; deregistering
    one deletes its policies): with no target on any variant there is none, and its alarms are not read."""
    aas, cw = ctx.clients("application-autoscaling"), ctx.clients("cloudwatch")
    recorded: list[VariantRecord] = []
    for v in c.variants:
        rid = variant_resource_id(c.resource.id, v["VariantName"])
        target = _target(found.get(rid))
        scale_in = target is not None and autoscaling.scales_in(autoscaling.policies(aas, rid, VARIANT_DIMENSION))
        recorded.append(
            VariantRecord(
                name=v["VariantName"],
                desired=int(v.get("DesiredInstanceCount") or v.get("CurrentInstanceCount") or 1),
                target=target,
                scale_in_added=not scale_in,
            )
        )
    wake_there = any(v.get("target") for v in recorded) and autoscaling.has_wake_policy(cw, c.resource.id)
    c.record["variants"] = recorded
    c.record["wake_added"] = not wake_there


def _zero_async(ctx: ActContext, c: _Change) -> str:
    """To zero the way AWS documents it for async endpoints: a scalable target with minimum 0 and a
    scale-in policy (the backlog target tracking, added where the variant has none), plus the step
    policy that wakes it on HasBacklogWithoutCapacity. Setting 0 instances directly is not in that
    page: it is asked for so the instances go now, and if AWS refuses it the scale-in policy takes
    the variant to 0 as the backlog stays empty.
    https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-autoscale.html
    """
    sm, aas, cw = ctx.clients("sagemaker"), ctx.clients("application-autoscaling"), ctx.clients("cloudwatch")
    r, recorded = c.resource, c.record.get("variants") or []
    for v in recorded:
        rid = variant_resource_id(r.id, v["name"])
        target = v.get("target")
        maximum = target["max"] if target else max(v.get("desired", 1), 1)
        autoscaling.set_minimum(aas, rid, VARIANT_DIMENSION, 0, maximum)
        if v.get("scale_in_added"):
            autoscaling.add_backlog_tracking(aas, r.id, rid)
    wake_added = bool(c.record.get("wake_added"))
    if wake_added and c.variants:
        autoscaling.add_wake_policy(aas, cw, r.id, variant_resource_id(r.id, c.variants[0]["VariantName"]))
    now_or_later = "0 instances"
    try:
        sm.update_endpoint_weights_and_capacities(
            EndpointName=r.id, DesiredWeightsAndCapacities=[{"VariantName": v["name"], "DesiredInstanceCount": 0} for v in recorded]
        )
    except ClientError as exc:
        if error_code(exc) != "ValidationException":
            raise
        now_or_later = f"AWS did not take 0 instances directly ({short(exc)}): the scale-in policy takes it to 0 as the backlog stays empty"
    was = ", ".join(_was(v) for v in recorded)
    added = [v["name"] for v in recorded if v.get("scale_in_added")]
    scale_in_note = f"; backlog scale-in policy added on {', '.join(added)}" if added else ""
    policy = "wake-on-backlog policy added" if wake_added else "its wake-on-backlog policy was already there"
    return f"autoscaling minimum 0 on {was}, {now_or_later}{scale_in_note}; {policy}{c.comeback}"


def _target(t: ScalableTarget | None) -> TargetRecord | None:
    return None if t is None else TargetRecord(min=t["MinCapacity"], max=t["MaxCapacity"])


def _was(v: VariantRecord) -> str:
    target = v.get("target")
    if target:
        return f"{v['name']} (min was {target['min']})"
    return f"{v['name']} (had no autoscaling; registered 0-{max(v.get('desired', 1), 1)})"


# -- just before acting, and after ----------------------------------------------------------------


def current_read(clients: Clients, resource: Resource) -> tuple[str | None, DescribeEndpointOutput | None]:
    """The endpoint's status now and the DescribeEndpoint it came from (the gate hands it to the action)."""
    try:
        desc = described(clients("sagemaker"), resource.id)
    except ClientError as exc:
        if is_not_found(exc):
            return None, None
        raise
    return str(desc.get("EndpointStatus", "Unknown")), desc


def confirm(clients: Clients, change: Unconfirmed) -> Made:
    """A deletion is made once DescribeEndpoint finds it Deleting or gone; a scaling to zero once every
    inference component's desired copy count is 0 (DescribeInferenceComponent), or every variant's
    DesiredInstanceCount is. Where that is not so, its scale-in policy may still take it there: that cannot tell."""
    state, desc = current_read(clients, Resource("endpoint", change.id, change.arn, "", ""))
    match action_named(ActionName, change.action):
        case ActionName.DELETE:
            if state is None:
                return Made(True, "gone")
            return Made.by_state("EndpointStatus", state, {"Deleting"}, {"InService", "Updating", "SystemUpdating", "Creating"})
        case ActionName.SCALE_TO_ZERO:
            if state is None:
                return Made(None, "gone")
            return _at_zero(clients, change.id, desc)
        case None:
            return Made(None, f"nothing reads whether {change.action} was made")
        case other:
            assert_never(other)


def _at_zero(clients: Clients, name: str, desc: DescribeEndpointOutput | None) -> Made:
    sm = clients("sagemaker")
    names = [
        ic["InferenceComponentName"]
        for page in sm.get_paginator("list_inference_components").paginate(EndpointNameEquals=name)
        for ic in page.get("InferenceComponents", [])
    ]
    if names:
        copies = {c.name: c.copies for c in DetailReader(clients).components(names)}
        if all(n == 0 for n in copies.values()):
            return Made(True, "every inference component at 0 copies")
        return Made(False, "copies of " + ", ".join(f"{k}: {v}" for k, v in sorted(copies.items())))
    variants = (desc.get("ProductionVariants") if desc else None) or []
    if variants and all(v.get("DesiredInstanceCount", v.get("CurrentInstanceCount")) == 0 for v in variants):
        return Made(True, "every variant at 0 instances")
    return Made(None, f"EndpointStatus {desc.get('EndpointStatus') if desc else None}, its scale-in policy takes it to 0")


def current_state(clients: Clients, resource: Resource) -> str | None:
    return current_read(clients, resource)[0]


def _described(ctx: ActContext, r: Resource) -> DescribeEndpointOutput:
    """The endpoint as the gate described it just now (its state check, `current_read`), else described here."""
    desc: DescribeEndpointOutput | None = ctx.gated(r.arn, "described")
    return desc if desc is not None else described(ctx.clients("sagemaker"), r.id)


def _tags_now(ctx: ActContext, r: Resource) -> list[dict[str, str]]:
    """The endpoint's tags as the gate read them just now (its protection check), else read here."""
    fresh: dict[str, str] | None = ctx.gated(r.arn, "tags")
    if fresh is not None:
        return [{"Key": k, "Value": v} for k, v in fresh.items()]
    sm = ctx.clients("sagemaker")
    return [t for page in sm.get_paginator("list_tags").paginate(ResourceArn=r.arn) for t in page.get("Tags", [])]


def undo_hint(resource: Resource, action: KindAction | None) -> str | None:
    name = action_named(ActionName, action)
    if name is None:
        return None
    facts = resource.facts_as(EndpointFacts)
    types = facts.details.instance_types if facts.details else ()
    restore = f"{restore_command(resource.id, facts.table)}   # {comeback_note(types)}"
    match name:
        case ActionName.DELETE:
            return restore
        case ActionName.SCALE_TO_ZERO:
            return "\n".join([restore, *_scale_back(resource, facts)])
        case _:
            assert_never(name)


def _scale_back(resource: Resource, facts: EndpointFacts) -> list[str]:
    """The AWS CLI lines that put the copies or instances back by hand, besides `reaper restore`."""
    details = facts.details
    if details is not None and details.type == COMPONENTS:
        return [
            f"or: aws sagemaker update-inference-component-runtime-config --inference-component-name {c.name} "
            f"--desired-runtime-config CopyCount={c.copies} --region {resource.region}"
            for c in details.components
            if c.copies > 0
        ]
    if details is not None and details.type == ASYNC:
        return [
            f"or: aws sagemaker update-endpoint-weights-and-capacities --endpoint-name {resource.id} "
            f"--desired-weights-and-capacities VariantName={v.name},DesiredInstanceCount={v.desired or 1} --region {resource.region}"
            "   # and set the autoscaling minimum back"
            for v in facts.variants
        ]
    return []
