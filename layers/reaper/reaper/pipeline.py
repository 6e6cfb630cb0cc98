"""One pipeline for every kind: discover -> signals -> decide -> act -> record -> notify.

A failure on one resource is an `error` verdict on that resource, never the end of the sweep.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from reaper import kinds as kind_registry
from reaper.aws import AwsError, short
from reaper.errors import ActionRefused
from reaper.kinds.base import ActContext, Kind
from reaper.model import Decision, Mode, Outcome, Resource, Result, ResultCode, Verdict
from reaper.policy import TagView, apply_grace, exempt_hint, production_guard, read_tags, screen
from reaper.runtime import Runtime
from reaper.settings import Settings
from reaper.tagging import remove_tags, write_tags
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
) -> list[Outcome]:
    """Run every named kind in every region; return one Outcome per resource."""
    say = progress or (lambda _msg: None)
    outcomes: list[Outcome] = []
    for region in regions or rt.regions:
        for name in kinds:
            kind = kind_registry.get(name)
            outcomes.extend(sweep_kind(rt, kind, region, now, event_id, say))
    deliver(rt, outcomes, now, event_id)
    return outcomes


def sweep_kind(rt: Runtime, kind: Kind, region: str, now: datetime, event_id: str, say: Progress) -> list[Outcome]:
    clients = rt.clients(region)
    settings = rt.settings
    try:
        resources = kind.discover(clients, settings, now)
        say(f"{kind.name} {region}: {len(resources)} found, reading signals")
        signals = kind.signals(clients, resources, settings, now)
    except AwsError as exc:
        # Not silent: one error outcome stands for the whole kind in this region.
        gone = Resource(kind=kind.name, id="*", arn="", region=region, state="unknown")
        reason = f"could not list or read {kind.name} resources in {region}: {short(exc)}"
        failed = Result(ResultCode.FAILED, message=reason)
        return [Outcome(gone, Decision(Verdict.ERROR, reason, action="sweep"), settings.mode_for(kind.name), result=failed)]
    ctx = ActContext(clients=clients, settings=settings, now=now, log=rt.log, event_id=event_id)
    outcomes = [process(kind, r, signals.get(r.id), ctx) for r in resources]
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.verdict.value] = counts.get(o.verdict.value, 0) + 1
    say(f"{kind.name} {region}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) if counts else f"{kind.name} {region}: nothing found")
    return outcomes


def decide(kind: Kind, resource: Resource, signal: Any, settings: Settings, now: datetime) -> tuple[Decision, TagView]:
    """The whole decision for one resource, pure: tags, exemptions, the kind's rule, production, grace."""
    view = read_tags(resource.tags, settings)
    decision = screen(view, settings, now) or kind.decide(resource, signal, view, settings, now)
    decision = production_guard(decision, view, settings)
    if settings.mode_for(kind.name) is Mode.ENFORCE and decision.verdict in (Verdict.ACT, Verdict.KEEP):
        decision = apply_grace(decision, view, settings.grace_for(kind.name), now)
    return decision, view


def process(kind: Kind, resource: Resource, signal: Any, ctx: ActContext) -> Outcome:
    settings = ctx.settings
    try:
        decision, view = decide(kind, resource, signal, settings, ctx.now)
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
        outcome.result = enforce(kind, outcome, ctx)
    return outcome


def enforce(kind: Kind, outcome: Outcome, ctx: ActContext) -> Result | None:
    """Carry out the decision; what happened is a Result, the decision stays as the rule made it."""
    d, r = outcome.decision, outcome.resource
    warned_key = ctx.settings.tag("warned-at")
    if d.verdict is Verdict.ACT and d.action:
        action = kind.actions[d.action]
        if action.needs_log and ctx.log is None:
            return _refused(d, "no action log to keep the restore record in (set REAPER_TABLE)")
        if not _claim(ctx, outcome):
            return Result(ResultCode.DUPLICATE, message="already handled by an earlier delivery of this event")
        try:
            state = kind.current_state(ctx.clients, r)
            if state is None:
                return Result(ResultCode.GONE, message=f"gone before the action could run ({d.reason})")
            if state not in action.valid_origin_states:
                allowed = "/".join(sorted(action.valid_origin_states))
                return Result(ResultCode.STATE_CHANGED, message=f"now {state}, not {allowed}: nothing done")
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
    if d.verdict is Verdict.WARN and d.newly_warned:
        if not _claim(ctx, outcome):
            return Result(ResultCode.DUPLICATE, message="already handled by an earlier delivery of this event")
        try:
            write_tags(ctx.clients, r.arn, {warned_key: iso(ctx.now)})
        except AwsError as exc:
            return Result(ResultCode.FAILED, message=f"could not write {warned_key}, so no warning was recorded: {short(exc)}")
        return Result(ResultCode.WARNED)
    if d.clear_warning:
        try:
            remove_tags(ctx.clients, r.arn, [warned_key])
        except AwsError as exc:
            return Result(ResultCode.DONE, detail=f"could not remove {warned_key}: {short(exc)}")
    return None


def _claim(ctx: ActContext, outcome: Outcome) -> bool:
    """Enforce actions and first warnings are claimed per event: a re-delivery finds the claim."""
    if ctx.log is None:
        return True
    d = outcome.decision
    return ctx.log.claim(f"{outcome.resource.arn}|{d.verdict.value}|{d.action}|event:{ctx.event_id}", ctx.now)


def _refused(d: Decision, why: str) -> Result:
    return Result(ResultCode.REFUSED, message=f"refused to {d.action}: {why}")


def payload(outcome: Outcome, kind: Kind | None = None) -> dict[str, Any]:
    data = outcome.to_json()
    data["type"] = "verdict"
    action = outcome.decision.action
    if kind is not None and action is not None and action in kind.actions:
        data["past"] = kind.actions[action].past
    return data


def deliver(rt: Runtime, outcomes: list[Outcome], now: datetime, event_id: str) -> None:
    """Record every warn/act/error (and notify-only finding) in the log, then post each, once per decision."""
    to_send: list[tuple[Outcome, dict[str, Any]]] = []
    for o in outcomes:
        if not o.should_notify():
            continue
        kind = kind_registry.REGISTRY.get(o.resource.kind)
        body = payload(o, kind)
        if rt.log is not None:
            try:
                if not _message_claim(rt, o, now, event_id):
                    continue  # told already: neither logged nor posted again
                rt.log.record(body, now, event_id)
            except AwsError as exc:
                log.error("action log write failed for %s: %s", o.resource.arn, exc)
                body["reason"] += f" (action log write failed: {short(exc)})"
        to_send.append((o, body))
    if not to_send:
        return
    problems = rt.outbox.send([body for _, body in to_send])
    for o, _ in to_send:
        o.posted = not problems
    for p in problems:
        log.error(p)


def _message_claim(rt: Runtime, o: Outcome, now: datetime, event_id: str) -> bool:
    """Enforce act/warn messages were claimed with the action; the rest once a day per finding."""
    assert rt.log is not None
    d = o.decision
    if o.mode is Mode.ENFORCE and d.verdict in (Verdict.ACT, Verdict.WARN):
        return True  # the action's claim already made this unique to the event
    token = f"key:{d.notify_key}" if d.notify_key else f"day:{now:%Y-%m-%d}"
    key = f"{o.resource.arn or o.resource.kind + '/' + o.resource.region}|msg|{o.mode.value}|{d.verdict.value}|{d.action}|{token}"
    return rt.log.claim(key, now)
