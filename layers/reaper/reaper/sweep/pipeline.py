"""One pipeline for every kind: discover -> signals -> decide -> act -> record -> notify.

A failure on one resource is an `error` verdict on that resource, never the end of the sweep.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Any

from reaper import kinds
from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, short
from reaper.aws.tagging import remove_tags, write_tags
from reaper.core import policy, scope
from reaper.core.deadline import RESERVE_SECONDS, Deadline
from reaper.core.errors import ActionRefused
from reaper.core.model import Decision, Mode, Outcome, ProjectSpend, Resource, Result, SweepAction, Verdict
from reaper.core.policy import TagView, exempt_hint
from reaper.core.settings import Settings
from reaper.core.timeutil import iso
from reaper.kinds.base import ActContext, Action, Kind, protection_now
from reaper.record.actionlog import Begun
from reaper.record.runtime import Runtime
from reaper.sweep.batch import Batch, Single, finished
from reaper.sweep.budget_changes import read_budgets
from reaper.sweep.continuation import MAX_PARTS, Cursor, Superseded
from reaper.sweep.courier import Courier, payload
from reaper.sweep.gate import gate

log = logging.getLogger("reaper")

Progress = Callable[[str], None]


# Resources per chunk (at most; a kind may declare fewer). Before each chunk the sweep asks whether
# it still fits in the time left, estimated from the slowest chunk so far; a kind with
# `chunked_signals` reads its per-resource evidence a chunk at a time, so what an invocation does
# not reach is not read either. 500 = one full GetMetricData batch of queries.
CHUNK = 500
# (the next part's cursor, seconds this part ran) -> what was arranged; raises when it cannot be
Continue = Callable[[Cursor, float], str]


@dataclass
class KindRun:
    """One kind in one region: its outcomes, and what time ran out before (in id order)."""

    outcomes: list[Outcome]
    left: list[Resource] = field(default_factory=list)
    last: str | None = None  # the id of the last resource handled
    handled: int = 0


@dataclass
class SweepRun:
    outcomes: list[Outcome]
    next_part: Cursor | None = None  # where the next part starts, when this one stopped early
    arranged: str | None = None  # the next part, as arranged; None when it could not be
    unreached: int = 0  # resources of the stopped region this part did not reach
    handled: int = 0
    superseded: str | None = None  # why no next part: another chain holds the chain record (reaper.sweep.chain)
    ended: str | None = None  # why the chain ended here on an error (stalled, part limit, not arranged)


def sweep(
    rt: Runtime,
    kind_names: Iterable[str],
    now: datetime,
    event_id: str,
    regions: Iterable[str] | None = None,
    progress: Progress | None = None,
    deadline: Deadline | None = None,
) -> list[Outcome]:
    """Run every named kind in every region; return one Outcome per resource.

    Each outcome is recorded and queued for Slack right after its action, not at the end: a sweep
    that dies half-way has logged what it did, and the next sweep posts what it could not. What the
    deadline leaves no time for is `not-reached`, said once (no continuation here: see sweep_run).
    """
    return sweep_run(rt, list(kind_names), now, event_id, regions, progress, deadline).outcomes


def sweep_run(
    rt: Runtime,
    kind_names: list[str],
    now: datetime,
    event_id: str,
    regions: Iterable[str] | None = None,
    progress: Progress | None = None,
    deadline: Deadline | None = None,
    resume: Cursor | None = None,
    continue_with: Continue | None = None,
    preface: Iterable[Outcome] = (),
) -> SweepRun:
    """A sweep, or one part of it. With `continue_with` (one kind), a sweep that runs short of time
    stops between resources and has its next part arranged; `resume` is where this part starts.

    Every part acts under the first part's event id (`event_id` is the cursor's), so the claims
    hold across parts. A part that handled nothing, or one past MAX_PARTS, ends the chain with one
    error outcome; a next part that cannot be arranged leaves one not-reached notice. `preface`
    outcomes (a dead chain's error, say) are recorded and posted first.
    """
    say = progress or (lambda _msg: None)
    deadline = deadline or Deadline.none()
    began = deadline.clock()
    if continue_with is not None and len(kind_names) != 1:
        raise ValueError("a sweep is continued one kind at a time")
    courier = Courier(rt, now, event_id, deadline=deadline)
    courier.replay_unposted(kind_names)
    region_list = list(regions or rt.regions)
    after: str | None = None
    if resume is not None:
        region_list = region_list[region_list.index(resume.region) :]
        after = resume.after
    run = SweepRun(list(preface))
    for o in run.outcomes:
        courier.take(o)
    for i, region in enumerate(region_list):
        for name in kind_names:
            kind = kinds.get(name)
            part = sweep_kind_run(rt, kind, region, now, event_id, say, courier, deadline, after if i == 0 else None)
            run.outcomes.extend(part.outcomes)
            run.handled += part.handled
            if not part.left:
                continue
            if continue_with is None:  # nothing carries on after this invocation: say so
                run.outcomes.extend(not_reached(kind, part.left, rt.settings))
                continue
            run.next_part = _next_cursor(part, name, region, after if i == 0 else None, resume, now, event_id)
            run.unreached = len(part.left)
            later = region_list[i + 1 :]
            _carry_on(rt, courier, run, continue_with, deadline.clock() - began, later)
            break
        if run.next_part is not None:
            break
    courier.report_not_reached(run.outcomes)
    courier.flush()
    return run


def _next_cursor(part: KindRun, kind: str, region: str, after: str | None, resume: Cursor | None, now: datetime, event_id: str) -> Cursor:
    """Where the next part starts: just after the last resource this part handled (or where it was asked to start)."""
    last = part.last if part.last is not None else after
    return Cursor(
        kind=kind,
        region=region,
        after=last or "",
        sweep_started=resume.sweep_started if resume else now,
        part=(resume.part if resume else 1) + 1,
        event_id=event_id,
    )


def _carry_on(rt: Runtime, courier: Courier, run: SweepRun, continue_with: Continue, elapsed: float, later: list[str]) -> None:
    """Arrange the next part, or end the chain with one error, or say once what is not reached."""
    cursor = run.next_part
    assert cursor is not None
    where = _unreached(run.unreached, later)
    problem: str | None = None
    if run.handled == 0:
        problem = f"part {cursor.part - 1} handled no resource before its time ran out ({where} not reached)"
    elif cursor.part > MAX_PARTS:
        problem = f"it passed the limit of {MAX_PARTS} parts ({where} not reached)"
    if problem is not None:
        reason = f"the {cursor.kind} sweep started {iso(cursor.sweep_started)} stopped: {problem}; the next full sweep starts again"
        log.error(reason)
        run.ended = reason
        run.outcomes.append(sweep_error(cursor.kind, cursor.region, rt.settings, reason, f"continuation:{cursor.event_id}"))
        courier.take(run.outcomes[-1])
        return
    try:
        run.arranged = continue_with(cursor, elapsed)
        log.info("sweep continues: %s after %r in %s (%s not reached yet)", run.arranged, cursor.after, cursor.region, where)
    except Superseded as exc:  # the chain that holds the record reaches them: nothing to tell
        run.superseded = str(exc)
        log.warning("part %d of the %s sweep not arranged: %s", cursor.part, cursor.kind, exc)
    except (*AwsError, ValueError) as exc:
        why = short(exc) if isinstance(exc, AwsError) else str(exc)
        log.error("could not arrange part %d of the %s sweep: %s", cursor.part, cursor.kind, why)
        run.ended = f"part {cursor.part} could not be arranged: {why}"
        courier.report_not_reached([], unreached=run.unreached, kind=cursor.kind, region=cursor.region, later=later, why=why)


def _unreached(n: int, later: list[str]) -> str:
    return f"{n} resource(s)" + (f", and regions {', '.join(later)}" if later else "")


def not_reached(kind: Kind, left: list[Resource], settings: Settings) -> list[Outcome]:
    """Outcomes for what a sweep without a next part had no time for: decided nothing, changed nothing."""
    why = "not reached: the sweep ran out of time; the next sweep decides again"
    return [Outcome(r, Decision(Verdict.KEEP, why), settings.mode_for(kind.name), result=Result.not_reached(why)) for r in left]


def sweep_error(kind: str, region: str, settings: Settings, reason: str, notify_key: str | None = None) -> Outcome:
    """One error outcome standing for the whole kind in this region."""
    gone = Resource(kind=kind, id="*", arn="", region=region, state="unknown")
    failed = Result.failed(reason)
    return Outcome(
        gone, Decision(Verdict.ERROR, reason, action=SweepAction.SWEEP, notify_key=notify_key), settings.mode_for(kind), result=failed
    )


# (kind, resource, the rule's whole decision, its tags) -> the decision to carry out instead: how a person's
# request (Stop now) turns what a sweep would decide into what was asked, before the same tail
Judge = Callable[[Kind, Resource, Decision, TagView], Decision]


def sweep_kind(
    rt: Runtime,
    kind: Kind,
    region: str,
    now: datetime,
    event_id: str,
    say: Progress,
    courier: Courier | None = None,
    deadline: Deadline | None = None,
    only: Collection[str] | None = None,
    judge: Judge | None = None,
) -> list[Outcome]:
    """One kind in one region. Without a courier (an event's targeted check) it records and posts itself.

    The one door for acting on named resources (an event's file systems or reservations, a Stop-now
    click): `only` names them (ids or ARNs); the kind reads just those where it can, and nothing else
    is decided or changed. `judge` turns each rule's decision into the one asked for.
    """
    own = courier or Courier(rt, now, event_id)
    run = sweep_kind_run(rt, kind, region, now, event_id, say, own, deadline, only=only, judge=judge)
    outcomes = run.outcomes + not_reached(kind, run.left, rt.settings)
    if courier is None:
        own.report_not_reached(outcomes)
        own.flush()
    return outcomes


def sweep_kind_run(
    rt: Runtime,
    kind: Kind,
    region: str,
    now: datetime,
    event_id: str,
    say: Progress,
    courier: Courier,
    deadline: Deadline | None = None,
    after: str | None = None,
    only: Collection[str] | None = None,
    judge: Judge | None = None,
) -> KindRun:
    """One kind in one region, in id order from just after `after`, a chunk at a time while time lasts
    (`only`, `judge`: see sweep_kind)."""
    clients = rt.clients(region)
    settings = rt.settings
    deadline = deadline or Deadline.none()
    chunked = kind.declaration.chunked_signals
    size = min(kind.declaration.chunk_size or CHUNK, CHUNK)
    try:
        resources = sorted(named(kind.discover(clients, settings, now, only=only), only), key=lambda r: r.id)
        todo = [r for r in resources if after is None or r.id > after]
        skipped = f" ({len(resources) - len(todo)} done by earlier parts)" if after is not None else ""
        say(f"{kind.name} {region}: {len(resources)} found{skipped}, reading signals")
        # a kind whose evidence is read across resources (sibling jobs, account-wide searches) reads it for all
        signals: Mapping[str, Any] = {} if chunked else kind.signals(clients, resources, settings, now, log=rt.log)
        if not chunked and resources:
            say(f"{kind.name} {region}: signals read for {len(resources)}, deciding")
    except AwsError as exc:
        # Not silent: one error outcome stands for the whole kind in this region.
        outcome = sweep_error(kind.name, region, settings, f"could not list or read {kind.name} resources in {region}: {short(exc)}")
        courier.take(outcome)
        return KindRun([outcome])
    ctx = _act_context(rt, kind, clients, now, event_id, deadline, courier)
    run = KindRun([])
    slowest = 0.0  # the longest chunk so far: the estimate for the next one
    with scope.opened():  # what a kind reads for one chunk it may keep for the next, not past this sweep
        for start in range(0, len(todo), size):
            chunk = todo[start : start + size]
            left = deadline.left()
            if left is not None and left - RESERVE_SECONDS < slowest:
                run.left = todo[start:]
                break
            began = deadline.clock()
            if chunked:
                read = _chunk_signals(rt, kind, clients, region, chunk, now, len(todo) - start, run, courier)
                if read is None:
                    break
                signals = read
            _process_chunk(kind, todo[start:], len(chunk), signals, ctx, courier, run, judge)
            if run.left:
                break
            say(f"{kind.name} {region}: {min(start + size, len(todo))} of {len(todo)} decided")
            slowest = max(slowest, deadline.clock() - began)
    say(_tally(kind, region, run))
    return run


def _chunk_signals(
    rt: Runtime,
    kind: Kind,
    clients: Clients,
    region: str,
    chunk: list[Resource],
    now: datetime,
    left: int,
    run: KindRun,
    courier: Courier,
) -> Mapping[str, Any] | None:
    """A chunk's signals, for a kind that reads them a chunk at a time; None when they could not be read, which is
    said (one error outcome: the `left` resources from this chunk on are not looked at, the next sweep tries again)."""
    try:
        return kind.signals(clients, chunk, rt.settings, now, log=rt.log)
    except AwsError as exc:
        reason = f"could not read {kind.name} signals in {region}: {short(exc)}; {left} not looked at, the next sweep tries again"
        run.outcomes.append(sweep_error(kind.name, region, rt.settings, reason))
        courier.take(run.outcomes[-1])
        return None


def named(found: list[Resource], only: Collection[str] | None) -> list[Resource]:
    """What discovery found, cut to the resources `only` names by id or ARN (None: all of them): a kind that
    cannot read just those reads more, and nothing it was not asked about is decided or changed."""
    if only is None:
        return found
    wanted = set(only)
    return [r for r in found if r.id in wanted or r.arn in wanted]


def check(rt: Runtime, kind: str, region: str, only: Collection[str], now: datetime, event_id: str) -> list[Outcome]:
    """The pipeline on the resources an event names, recorded and posted (kinds.base.Check: handed to a
    kind's event handler, so the kind never imports the pipeline)."""
    return sweep_kind(rt, kinds.get(kind), region, now, event_id, lambda _msg: None, only=only)


def _act_context(
    rt: Runtime, kind: Kind, clients: Clients, now: datetime, event_id: str, deadline: Deadline, courier: Courier
) -> ActContext:
    """What every change of this kind in this region acts with: the courier's unsettled changes ride along."""
    spend = _spend(rt, kind, clients, now, event_id)
    return ActContext(
        clients=clients,
        settings=rt.settings,
        now=now,
        log=rt.log,
        event_id=event_id,
        deadline=deadline,
        spend=spend,
        unsettled=courier.unsettled,
    )


def _spend(rt: Runtime, kind: Kind, clients: Clients, now: datetime, event_id: str) -> dict[str, ProjectSpend]:
    """The budgets of the projects a budgeted kind's resources belong to (none without a budget topic)."""
    settings = rt.settings
    if not (kind.declaration.budgeted and settings.budget_topic_arn):
        return {}
    # dry-run changes nothing in AWS (docs/safety.md, item 3: "not even tags"), so budgets are only said, not created
    enforcing = settings.mode_for(kind.name) is Mode.ENFORCE
    return read_budgets(rt, clients, settings, manage=kind.declaration.manages_budgets, create=enforcing, now=now, event_id=event_id)


def _process_chunk(
    kind: Kind,
    rest: list[Resource],
    size: int,
    signals: Mapping[str, Any],
    ctx: ActContext,
    courier: Courier,
    run: KindRun,
    judge: Judge | None = None,
) -> None:
    """Decide, act, record and queue each of the first `size` resources of `rest` while time lasts; the rest are left.

    A change whose action is batched (reaper.sweep.batch) is begun here and made with the others held,
    when the batch is full and before this returns; it is recorded and queued then.
    """
    batch = Batch(kind, ctx, _single(kind, ctx))
    held = replace(ctx, hold=batch.hold)  # the same courier list (`unsettled`) rides along
    for n, r in enumerate(rest[:size]):
        if ctx.deadline.nearly_over():
            run.left = rest[n:]
            break
        signal = signals.get(r.id)
        outcome = process(kind, r, signal, held) if judge is None else process(kind, r, signal, held, judge)
        run.outcomes.append(outcome)
        run.last, run.handled = r.id, run.handled + 1
        if not batch.holds(outcome):
            courier.take(outcome)
        elif batch.full:
            for made in batch.flush():
                courier.take(made)
    for made in batch.flush():
        courier.take(made)


def _single(kind: Kind, ctx: ActContext) -> Single:
    """The one-resource path for a held change (reaper.sweep.batch): gated again or not, made alone."""
    return lambda outcome, action, gate_again: _act(kind, action, outcome, ctx, gated=not gate_again)


def _tally(kind: Kind, region: str, run: KindRun) -> str:
    """One progress line: the verdicts counted, and how many were left for later."""
    counts = Counter(o.verdict.value for o in run.outcomes)
    tail = f"; {len(run.left)} left for later" if run.left else ""
    if not counts:
        return f"{kind.name} {region}: nothing found{tail}"
    return f"{kind.name} {region}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + tail


def decide(
    kind: Kind, resource: Resource, signal: Any, settings: Settings, now: datetime, spend: Mapping[str, ProjectSpend] | None = None
) -> tuple[Decision, TagView]:
    """The whole decision for one resource, pure, in one call (reaper.core.policy.decide): tags, exemptions,
    the kind's rule, kill date, budget, production, grace (in enforce)."""
    grace = settings.grace_for(kind.name) if settings.mode_for(kind.name) is Mode.ENFORCE else None
    rule, pick = partial(kind.decide, resource, signal), partial(kind.kill_decision, resource, signal)
    return policy.decide(resource.tags, settings, now, rule, pick, spend or {}, grace)


def process(kind: Kind, resource: Resource, signal: Any, ctx: ActContext, judge: Judge | None = None) -> Outcome:
    """One resource decided (and judged, when a person asked: see sweep_kind), and in enforce carried out;
    a batched change is begun and held by the sweep's batch (`ctx.hold`), which sets its result when the batch is made."""
    settings = ctx.settings
    try:
        decision, view = decide(kind, resource, signal, settings, ctx.now, ctx.spend)
        decision = judge(kind, resource, decision, view) if judge is not None else decision
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
            outcome.result = Result.failed(f"{decision.action or 'warning'} failed: {short(exc)}")
    return outcome


def enforce(kind: Kind, outcome: Outcome, ctx: ActContext) -> Result | None:
    """Carry out the decision; what happened is a Result, the decision stays as the rule made it.

    Before any change (an action, or the warning tag): time left; then the lease, the claim and the
    write-ahead record in one conditional write (`_begin`); then the state and the protection tags,
    each read again now. The courier settles the write-ahead record and gives the lease back with the
    outcome's own record (reaper.sweep.courier), batched.
    """
    d, r = outcome.decision, outcome.resource
    warned_key = ctx.settings.tag("warned-at")
    acting = d.verdict is Verdict.ACT and d.action is not None
    warning = d.verdict is Verdict.WARN and d.newly_warned
    if acting or warning:
        if ctx.deadline.nearly_over():
            return Result.not_reached("not reached: the sweep ran out of time; the next sweep decides again")
        action = kind.actions[d.action] if acting and d.action else None
        if action is not None and action.needs_log and ctx.log is None:
            return _refused(d, "no action log to keep the restore record in (set REAPER_TABLE)")
        started = Result.done(STOPPED_AFTER) if action is not None else Result.warned(STOPPED_AFTER)
        try:
            refused = _begin(ctx, outcome, started)
        except AwsError as exc:
            what = f"the {d.action}" if action is not None else warned_key
            return Result.failed(f"nothing done: the action log could not be written, so {what} was not made ({short(exc)})")
        if refused is not None:
            return refused
        if action is None:
            return _warn(outcome, ctx, warned_key)
        if ctx.hold is not None and ctx.hold(outcome, action):
            return None  # begun; gated, made and settled with the batch (reaper.sweep.batch)
        made = _act(kind, action, outcome, ctx)
        return finished(action, outcome, ctx, made)  # settled: a made change's warning tag goes
    if d.clear_warning:
        try:
            remove_tags(ctx.clients, r.arn, [warned_key])
        except AwsError as exc:
            return Result.done(f"could not remove {warned_key}: {short(exc)}", executed=False)
    return None


def _warn(outcome: Outcome, ctx: ActContext, warned_key: str) -> Result:
    r = outcome.resource
    try:
        protected, fresh = protection_now(ctx.clients, r, ctx.settings, ctx.now)
        if protected:
            return Result.protected(protected)
        if any(k.strip().lower() == warned_key.lower() for k in fresh):
            return Result.duplicate("warned already by another sweep")
        write_tags(ctx.clients, r.arn, {warned_key: iso(ctx.now)})
    except AwsError as exc:
        return Result.failed(f"could not write {warned_key}, so no warning was recorded: {short(exc)}")
    return Result.warned()


def _act(kind: Kind, action: Action, outcome: Outcome, ctx: ActContext, gated: bool = False) -> Result:
    """The gate (unless `gated`: a batch's, just passed), then the change alone; its caller settles it (`finished`)."""
    d, r = outcome.decision, outcome.resource
    try:
        stopped = (
            None if gated else gate(kind, action, r, ctx, d.reason, ruled=d)
        )  # state, protection and the kind's guards, read again now
        if stopped is not None:
            return stopped
        detail = action.runner()(ctx, r, d)
    except ActionRefused as exc:
        return _refused(d, exc.reason)
    except AwsError as exc:
        return Result.failed(f"{d.action} failed: {short(exc)}")
    finally:
        ctx.read_now.clear()  # the gate's reads were for this change only
    return Result.done(detail)


STOPPED_AFTER = "started, and the sweep stopped before it could record how it ended: look at the resource"


def _begin(ctx: ActContext, outcome: Outcome, started: Result) -> Result | None:
    """Lease, claim and write-ahead record in one conditional write, before the gate and the change.

    The lease: one actor per resource (a CLI sweep, a scheduled sweep and an event never warn or act
    twice at once). The claim: per decision per event, so a re-delivery finds it (docs/safety.md, item 6). The
    write-ahead record: the change about to be made, in the log and kept as unposted; the courier's
    record and message for the outcome use the same keys (the sweep's `now`, the resource, the event
    id) and replace these, and if they never come (the function timed out) the next sweep posts this
    message (docs/safety.md, item 7). All three are written or none; when none, nothing is changed.
    None when the change may go ahead; else why not.
    """
    if ctx.log is None:
        return None
    d = outcome.decision
    claim = f"{outcome.resource.arn}|{d.verdict.value}|{d.action}|event:{ctx.event_id}"
    # "unconfirmed": the change may or may not have been made (the courier's record, which replaces
    # this one, says which); `reaper log --json` and the message keep the flag
    key = uuid.uuid4().hex
    body = payload(replace(outcome, result=started)).model_copy(update={"message_key": key, "unconfirmed": True}).as_record()
    # the courier's earlier changes ride along: settled in this same write (ctx.unsettled is emptied)
    begun = ctx.log.begin(outcome.resource.arn, ctx.event_id, claim, body, ctx.now, ctx.event_id, settle=ctx.unsettled)
    if begun is Begun.LEASED:
        return Result.duplicate("another sweep is handling it right now")
    if begun is Begun.CLAIMED:
        return Result.duplicate("already handled by an earlier delivery of this event")
    outcome.written_ahead = True
    outcome.message_key = key  # the final message takes the same key: the notifier posts one key once
    return None


def _refused(d: Decision, why: str) -> Result:
    return Result.refused(f"refused to {d.action}: {why}")
