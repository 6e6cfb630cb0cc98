"""To zero, by endpoint type. Each action re-reads what it changes, records how to undo it, then acts.

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

from typing import Any, assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import error_code, is_not_found, short
from reaper.core.errors import ActionRefused
from reaper.core.model import Decision, KindAction, Resource
from reaper.core.timeutil import iso
from reaper.kinds.base import ActContext, Made, Unconfirmed, action_named
from reaper.kinds.endpoint import ActionName, autoscaling, wake
from reaper.kinds.endpoint.model import (
    ASYNC,
    CLASSIC,
    COMPONENT_DIMENSION,
    COMPONENTS,
    KIND,
    VARIANT_DIMENSION,
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
from reaper.kinds.endpoint.signals import DetailReader


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
    return "; " + wake.describe(name, at)


# -- classic: delete after the restore record ------------------------------------------------


def delete_classic(ctx: ActContext, r: Resource, d: Decision) -> str | None:
    if ctx.log is None:
        raise ActionRefused("DeleteEndpoint", "no action log to keep the restore record in (set REAPER_TABLE); nothing was deleted")
    sm = ctx.clients("sagemaker")
    desc = _described(ctx, r)
    config_name = desc["EndpointConfigName"]
    reader = DetailReader(ctx.clients)
    config = reader.config(config_name)
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
    resource_ids = [variant_resource_id(r.id, v["VariantName"]) for v in desc.get("ProductionVariants", [])]
    scaling = autoscaling.capture(ctx.clients("application-autoscaling"), ctx.clients("cloudwatch"), resource_ids, VARIANT_DIMENSION)
    warned = ctx.settings.tag("warned-at").lower()
    tags = [t for t in _tags_now(ctx, r) if t["Key"].strip().lower() != warned]
    record = _base_record(ctx, r, CLASSIC, d)
    record["config_name"] = config_name
    record["models"] = models
    record["variants"] = [
        VariantRecord(name=v["VariantName"], instance_type=v.get("InstanceType"), count=v.get("InitialInstanceCount")) for v in variants
    ]
    record["tags"] = tags
    record["autoscaling"] = scaling
    comeback = _schedule(ctx, r, d, record)
    ctx.log.put_restore(KIND, r.id, record, ctx.now)
    sm.delete_endpoint(EndpointName=r.id)
    note = ""
    if scaling:
        aas = ctx.clients("application-autoscaling")
        for t in scaling:
            autoscaling.deregister(aas, t["resource_id"], t["dimension"])
        note = f"; autoscaling recorded and deregistered ({len(scaling)} target{'s' if len(scaling) > 1 else ''})"
    return (
        f"deleted; config {config_name} and model{'s' if len(models) > 1 else ''} {', '.join(models)} kept; restore record "
        f"written{note}{comeback}"
    )


# -- inference components: copies to 0 --------------------------------------------------------


def zero_components(ctx: ActContext, r: Resource, d: Decision) -> str | None:
    sm = ctx.clients("sagemaker")
    names = [
        ic["InferenceComponentName"]
        for page in sm.get_paginator("list_inference_components").paginate(EndpointNameEquals=r.id)
        for ic in page.get("InferenceComponents", [])
    ]
    components = DetailReader(ctx.clients).components(names)
    if not components or all(c.copies == 0 for c in components):
        raise ActionRefused("UpdateInferenceComponentRuntimeConfig", "no inference component has copies any more; nothing to do")
    aas, cw = ctx.clients("application-autoscaling"), ctx.clients("cloudwatch")
    scaling = autoscaling.capture(aas, cw, [component_resource_id(c.name) for c in components], COMPONENT_DIMENSION)
    record = _base_record(ctx, r, COMPONENTS, d)
    record["components"] = [ComponentRecord(name=c.name, variant=c.variant, copies=c.copies) for c in components]
    record["autoscaling"] = scaling
    comeback = _schedule(ctx, r, d, record)
    assert ctx.log is not None  # scale_to_zero refused without one
    ctx.log.put_restore(KIND, r.id, record, ctx.now)
    for t in scaling:
        if t["min"] > 0:  # else autoscaling would put the copies straight back
            autoscaling.set_minimum(aas, t["resource_id"], COMPONENT_DIMENSION, 0, t["max"])
    for c in components:
        if c.copies > 0:
            sm.update_inference_component_runtime_config(InferenceComponentName=c.name, DesiredRuntimeConfig={"CopyCount": 0})
    was = ", ".join(f"{c.name} (was {c.copies})" for c in components)
    minimums = "; autoscaling minimums set to 0" if any(t["min"] > 0 for t in scaling) else ""
    return f"copies set to 0: {was}; managed instance scaling releases the instances{minimums}{comeback}"


# -- asynchronous: minimum 0, woken by backlog --------------------------------------------------


def zero_async(ctx: ActContext, r: Resource, d: Decision) -> str | None:
    """To zero the way AWS documents it for async endpoints: a scalable target with minimum 0 and a
    scale-in policy (the backlog target tracking, added where the variant has none), plus the step
    policy that wakes it on HasBacklogWithoutCapacity. Setting 0 instances directly is not in that
    page: it is asked for so the instances go now, and if AWS refuses it the scale-in policy takes
    the variant to 0 as the backlog stays empty.
    https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-autoscale.html
    """
    sm, aas, cw = ctx.clients("sagemaker"), ctx.clients("application-autoscaling"), ctx.clients("cloudwatch")
    desc = _described(ctx, r)
    variants = desc.get("ProductionVariants", [])
    found = autoscaling.targets(aas, [variant_resource_id(r.id, v["VariantName"]) for v in variants], VARIANT_DIMENSION)
    wake_there = autoscaling.has_wake_policy(cw, r.id)
    recorded: list[VariantRecord] = []
    for v in variants:
        rid = variant_resource_id(r.id, v["VariantName"])
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
    record = _base_record(ctx, r, ASYNC, d)
    record["variants"] = recorded
    record["wake_added"] = not wake_there
    comeback = _schedule(ctx, r, d, record)
    assert ctx.log is not None  # scale_to_zero refused without one
    ctx.log.put_restore(KIND, r.id, record, ctx.now)
    for v in recorded:
        rid = variant_resource_id(r.id, v["name"])
        target = v.get("target")
        maximum = target["max"] if target else max(v.get("desired", 1), 1)
        autoscaling.set_minimum(aas, rid, VARIANT_DIMENSION, 0, maximum)
        if v.get("scale_in_added"):
            autoscaling.add_backlog_tracking(aas, r.id, rid)
    if not wake_there and variants:
        autoscaling.add_wake_policy(aas, cw, r.id, variant_resource_id(r.id, variants[0]["VariantName"]))
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
    policy = "wake-on-backlog policy added" if not wake_there else "its wake-on-backlog policy was already there"
    return f"autoscaling minimum 0 on {was}, {now_or_later}{scale_in_note}; {policy}{comeback}"


def _target(t: dict[str, Any] | None) -> TargetRecord | None:
    return None if t is None else TargetRecord(min=t["MinCapacity"], max=t["MaxCapacity"])


def _was(v: VariantRecord) -> str:
    target = v.get("target")
    if target:
        return f"{v['name']} (min was {target['min']})"
    return f"{v['name']} (had no autoscaling; registered 0-{max(v.get('desired', 1), 1)})"


def scale_to_zero(ctx: ActContext, r: Resource, d: Decision) -> str | None:
    if ctx.log is None:  # the declaration says needs_log, so the pipeline refuses first; this holds without it
        raise ActionRefused("ScaleToZero", "no action log to keep the restore record in (set REAPER_TABLE); nothing was changed")
    details = r.facts_as(EndpointFacts).details
    kind_of = details.type if details else d.evidence.get("type")
    if kind_of == COMPONENTS:
        return zero_components(ctx, r, d)
    if kind_of == ASYNC:
        return zero_async(ctx, r, d)
    raise ActionRefused("ScaleToZero", f"a {kind_of or 'unknown'} endpoint cannot be scaled to zero")


# -- just before acting, and after ----------------------------------------------------------------


def current_read(clients: Clients, resource: Resource) -> tuple[str | None, dict[str, Any] | None]:
    """The endpoint's status now and the DescribeEndpoint it came from (the gate hands it to the action)."""
    try:
        desc: dict[str, Any] = clients("sagemaker").describe_endpoint(EndpointName=resource.id)
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
            return _at_zero(clients, change.id, desc or {})
        case None:
            return Made(None, f"nothing reads whether {change.action} was made")
        case other:
            assert_never(other)


def _at_zero(clients: Clients, name: str, desc: dict[str, Any]) -> Made:
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
    variants = desc.get("ProductionVariants") or []
    if variants and all(v.get("DesiredInstanceCount", v.get("CurrentInstanceCount")) == 0 for v in variants):
        return Made(True, "every variant at 0 instances")
    return Made(None, f"EndpointStatus {desc.get('EndpointStatus')}, its scale-in policy takes it to 0")


def current_state(clients: Clients, resource: Resource) -> str | None:
    return current_read(clients, resource)[0]


def _described(ctx: ActContext, r: Resource) -> dict[str, Any]:
    """The endpoint as the gate described it just now (its state check), else described here."""
    desc: dict[str, Any] | None = ctx.gated(r.arn, "described")
    return desc if desc is not None else ctx.clients("sagemaker").describe_endpoint(EndpointName=r.id)


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
