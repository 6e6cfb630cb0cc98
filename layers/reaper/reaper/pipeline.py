"""One pipeline for every kind: discover -> signals -> decide -> act -> record -> notify.

A failure on one resource is an `error` verdict on that resource, never the end of the sweep.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from reaper import budgets
from reaper import kinds as kind_registry
from reaper.aws import AwsError, short
from reaper.courier import Courier
from reaper.deadline import Deadline
from reaper.errors import ActionRefused
from reaper.kinds.base import ActContext, Action, Kind
from reaper.model import Decision, Mode, Outcome, ProjectSpend, Resource, Result, ResultCode, Verdict
from reaper.policy import TagView, apply_grace, exempt_hint, is_production, kill_date, over_budget, production_guard, read_tags, screen
from reaper.runtime import Runtime
from reaper.settings import Settings
from reaper.tagging import current_tags, remove_tags, write_tags
from reaper.timeutil import iso

log = logging.getLogger("reaper")

Progress = Callable[[str], None]


def sweep(
    rt: Runtime,
    kinds: Iterable[str],
    now: datetime,
    event_id: str,
    regions: Iterable[str] | None = None,
    progress: Progress | None = None,
    deadline: Deadline | None = None,
) -> list[Outcome]:
    """Run every named kind in every region; return one Outcome per resource.

    Each outcome is recorded and queued for Slack right after its action, not at the end: a sweep
    that dies half-way has logged what it did, and the next sweep posts what it could not.
    """
    say = progress or (lambda _msg: None)
    deadline = deadline or Deadline.none()
    courier = Courier(rt, now, event_id)
    courier.replay_unposted()
    outcomes: list[Outcome] = []
    for region in regions or rt.regions:
        for name in kinds:
            kind = kind_registry.get(name)
            outcomes.extend(sweep_kind(rt, kind, region, now, event_id, say, courier, deadline))
    courier.report_not_reached(outcomes)
    courier.flush()
    return outcomes


def sweep_kind(
    rt: Runtime,
    kind: Kind,
    region: str,
    now: datetime,
    event_id: str,
    say: Progress,
    courier: Courier | None = None,
    deadline: Deadline | None = None,
) -> list[Outcome]:
    """One kind in one region. Without a courier (an event's targeted check) it records and posts itself."""
    if courier is None:
        own = Courier(rt, now, event_id)
        found = sweep_kind(rt, kind, region, now, event_id, say, own, deadline)
        own.flush()
        return found
    clients = rt.clients(region)
    settings = rt.settings
    deadline = deadline or Deadline.none()
    try:
        resources = kind.discover(clients, settings, now)
        say(f"{kind.name} {region}: {len(resources)} found, reading signals")
        signals = kind.signals(clients, resources, settings, now, log=rt.log)
    except AwsError as exc:
        # Not silent: one error outcome stands for the whole kind in this region.
        gone = Resource(kind=kind.name, id="*", arn="", region=region, state="unknown")
        reason = f"could not list or read {kind.name} resources in {region}: {short(exc)}"
        failed = Result(ResultCode.FAILED, message=reason)
        outcome = Outcome(gone, Decision(Verdict.ERROR, reason, action="sweep"), settings.mode_for(kind.name), result=failed)
        courier.take(outcome)
        return [outcome]
    spend: dict[str, ProjectSpend] = {}
    if kind.declaration.budgeted and settings.budget_topic_arn:
        account = settings.budget_topic_arn.split(":")[4] if settings.budget_topic_arn.count(":") >= 5 else ""
        spend = budgets.read(clients, settings, account, manage=kind.declaration.manages_budgets)
    ctx = ActContext(clients=clients, settings=settings, now=now, log=rt.log, event_id=event_id, deadline=deadline, spend=spend)
    outcomes: list[Outcome] = []
    for r in resources:
        outcome = process(kind, r, signals.get(r.id), ctx)
        courier.take(outcome)
        outcomes.append(outcome)
    counts = Counter(o.verdict.value for o in outcomes)
    say(f"{kind.name} {region}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) if counts else f"{kind.name} {region}: nothing found")
    return outcomes


def decide(
    kind: Kind, resource: Resource, signal: Any, settings: Settings, now: datetime, spend: Mapping[str, ProjectSpend] | None = None
) -> tuple[Decision, TagView]:
    """The whole decision for one resource, pure: tags, exemptions, the kind's rule, kill date, budget, production, grace."""
    view = read_tags(resource.tags, settings)
    decision = screen(view, settings, now) or kind.decide(resource, signal, view, settings, now)

    def pick(reason: str) -> Decision | None:
        return kind.kill_decision(resource, signal, view, settings, now, reason)

    decision = kill_date(decision, view, settings, now, pick)
    decision = over_budget(decision, view, settings, spend or {}, now, pick)
    decision = production_guard(decision, view, settings)
    if settings.mode_for(kind.name) is Mode.ENFORCE and decision.verdict in (Verdict.ACT, Verdict.KEEP):
        decision = apply_grace(decision, view, settings.grace_for(kind.name), now)
    return decision, view


def process(kind: Kind, resource: Resource, signal: Any, ctx: ActContext) -> Outcome:
    settings = ctx.settings
    try:
        decision, view = decide(kind, resource, signal, settings, ctx.now, ctx.spend)
    except Exception as exc:  # a bug in one rule must not end the sweep
        log.exception("decision failed for %s", resource.arn)
        decision, view = Decision(Verdict.ERROR, f"decision failed: {exc}"), TagView()
    outcome = Outcome(
        resource,
        decision,
        settings.mode_for(kind.name),
        owner=view.owner,
        project=view.project,
        stage=view.stage,
        undo=kind.undo_hint(resource, decision.action) if decision.action else None,
        opt_out=exempt_hint(resource.arn, settings),
    )
    if outcome.mode is Mode.ENFORCE:
        try:
            outcome.result = enforce(kind, outcome, ctx)
        except Exception as exc:  # a bug or an unexpected failure on one resource must not end the sweep
            log.exception("enforcing failed for %s", resource.arn)
            outcome.result = Result(ResultCode.FAILED, message=f"{decision.action or 'warning'} failed: {short(exc)}")
    return outcome


def enforce(kind: Kind, outcome: Outcome, ctx: ActContext) -> Result | None:
    """Carry out the decision; what happened is a Result, the decision stays as the rule made it.

    Before any change (an action, or the warning tag): time left, the lease, the claim, the state
    and the protection tags, each read again now.
    """
    d, r = outcome.decision, outcome.resource
    warned_key = ctx.settings.tag("warned-at")
    acting = d.verdict is Verdict.ACT and d.action is not None
    warning = d.verdict is Verdict.WARN and d.newly_warned
    if acting or warning:
        if ctx.deadline.nearly_over():
            return Result(ResultCode.NOT_REACHED, message="not reached: the sweep ran out of time; the next sweep decides again")
        action = kind.actions[d.action] if acting and d.action else None
        if action is not None and action.needs_log and ctx.log is None:
            return _refused(d, "no action log to keep the restore record in (set REAPER_TABLE)")
        try:
            if not _lease(ctx, outcome):
                return Result(ResultCode.DUPLICATE, message="another sweep is handling it right now")
        except AwsError as exc:
            return Result(ResultCode.FAILED, message=f"nothing done: the action log could not be written ({short(exc)})")
        try:
            return _act(kind, action, outcome, ctx, warned_key) if action is not None else _warn(outcome, ctx, warned_key)
        finally:
            _release(ctx, outcome)
    if d.clear_warning:
        try:
            remove_tags(ctx.clients, r.arn, [warned_key])
        except AwsError as exc:
            return Result(ResultCode.DONE, detail=f"could not remove {warned_key}: {short(exc)}")
    return None


def _warn(outcome: Outcome, ctx: ActContext, warned_key: str) -> Result:
    r = outcome.resource
    try:
        if not _claim(ctx, outcome):
            return Result(ResultCode.DUPLICATE, message="already handled by an earlier delivery of this event")
        protected, fresh = _protected_now(ctx, r)
        if protected:
            return Result(ResultCode.PROTECTED, message=protected)
        if any(k.strip().lower() == warned_key.lower() for k in fresh):
            return Result(ResultCode.DUPLICATE, message="warned already by another sweep")
        write_tags(ctx.clients, r.arn, {warned_key: iso(ctx.now)})
    except AwsError as exc:
        return Result(ResultCode.FAILED, message=f"could not write {warned_key}, so no warning was recorded: {short(exc)}")
    return Result(ResultCode.WARNED)


def _act(kind: Kind, action: Action, outcome: Outcome, ctx: ActContext, warned_key: str) -> Result:
    d, r = outcome.decision, outcome.resource
    try:
        if not _claim(ctx, outcome):
            return Result(ResultCode.DUPLICATE, message="already handled by an earlier delivery of this event")
        state = kind.current_state(ctx.clients, r)
        if state is None:
            return Result(ResultCode.GONE, message=f"gone before the action could run ({d.reason})")
        if state not in action.valid_origin_states:
            allowed = "/".join(sorted(action.valid_origin_states))
            return Result(ResultCode.STATE_CHANGED, message=f"now {state}, not {allowed}: nothing done")
        protected, _fresh = _protected_now(ctx, r)
        if protected:
            return Result(ResultCode.PROTECTED, message=protected)
        detail = action.runner()(ctx, r, d)
    except ActionRefused as exc:
        return _refused(d, exc.reason)
    except AwsError as exc:
        return Result(ResultCode.FAILED, message=f"{d.action} failed: {short(exc)}")
    if not action.removes_resource and (warned_key in r.tags or d.evidence.get("warned_at")):
        try:
            remove_tags(ctx.clients, r.arn, [warned_key])
        except AwsError as exc:
            detail = f"{detail or ''} (could not remove {warned_key}: {short(exc)})".strip()
    return Result(ResultCode.DONE, executed=True, detail=detail)


def _protected_now(ctx: ActContext, r: Resource) -> tuple[str | None, dict[str, str]]:
    """Protection read again from the resource's own service: a tag set after discovery still wins.

    Returns (why it is protected now, or None; the tags as they are now).
    """
    fresh = current_tags(ctx.clients, r.arn)
    view = read_tags(fresh, ctx.settings)
    screened = screen(view, ctx.settings, ctx.now)
    if screened is not None:
        return f"{screened.reason} (read again just before the change): nothing done", fresh
    if is_production(view, ctx.settings):
        return f"production stage {view.stage!r} (read again just before the change): nothing done", fresh
    return None, fresh


def _lease(ctx: ActContext, outcome: Outcome) -> bool:
    """One actor per resource: a CLI sweep, a scheduled sweep and an event never warn or act twice."""
    if ctx.log is None:
        return True
    return ctx.log.lease(outcome.resource.arn, ctx.event_id, ctx.now)


def _release(ctx: ActContext, outcome: Outcome) -> None:
    if ctx.log is None:
        return
    try:
        ctx.log.release(outcome.resource.arn, ctx.event_id)
    except AwsError as exc:  # it expires by itself in minutes; nothing is lost
        log.warning("could not release the lease on %s: %s", outcome.resource.arn, short(exc))


def _claim(ctx: ActContext, outcome: Outcome) -> bool:
    """Enforce actions and first warnings are claimed per event: a re-delivery finds the claim."""
    if ctx.log is None:
        return True
    d = outcome.decision
    return ctx.log.claim(f"{outcome.resource.arn}|{d.verdict.value}|{d.action}|event:{ctx.event_id}", ctx.now)


def _refused(d: Decision, why: str) -> Result:
    return Result(ResultCode.REFUSED, message=f"refused to {d.action}: {why}")
