"""Changes that keep a restore record, made many at a time (reaper.sweep.batch): each begun and gated alone,
then the batch's records written in one TransactWriteItems (all or none:
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html), then each
change in its own call. A record write that fails changes nothing of the batch; a change refused or failed
is its own. An event or a button makes one change the same way, a batch of one (its record one PutItem).
What it costs and why: docs/performance.md, *Restore records in batches*.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from reaper.aws.faults import AwsError
from reaper.core.model import Decision, Resource
from reaper.kinds.base import ActContext, BatchAnswer

# (context, resource, decision) -> its restore record, built after its gate; raises to refuse that one
Plan = Callable[[ActContext, Resource, Decision], Mapping[str, Any]]
# (context, resource, decision, its record, written) -> the change's detail
Make = Callable[[ActContext, Resource, Decision, Mapping[str, Any]], str | None]


def record_then_change(ctx: ActContext, kind: str, items: Sequence[tuple[Resource, Decision]], plan: Plan, make: Make) -> BatchAnswer:
    """Plan each (its refusals its own), write every planned record in one write, then make each change alone."""
    own: dict[str, BaseException] = {}
    planned: list[tuple[Resource, Decision, Mapping[str, Any]]] = []
    for r, d in items:
        try:
            planned.append((r, d, plan(ctx, r, d)))
        except Exception as exc:  # refused, an AWS error, or a bug: this resource's (reaper.sweep.batch._own_error)
            own[r.id] = exc
    if not planned:
        return BatchAnswer(own=own)
    assert ctx.log is not None  # every plan refuses without the action log
    try:
        ctx.log.put_restores(kind, [(r.id, record) for r, _, record in planned], ctx.now)
    except AwsError as exc:  # no record, no change
        return BatchAnswer(own={**own, **{r.id: exc for r, _, _ in planned}})
    done: dict[str, str | None] = {}
    for r, d, record in planned:
        try:
            done[r.id] = make(ctx, r, d, record)
        except Exception as exc:
            own[r.id] = exc
    return BatchAnswer(done=done, own=own)


def alone(answer: BatchAnswer, resource: Resource) -> str | None:
    """The one-resource path's answer from its batch of one: its error raised, as `run` raises it."""
    if resource.id in answer.own:
        raise answer.own[resource.id]
    return answer.done[resource.id]


# one action's part of a batch -> its answer
Run = Callable[[ActContext, Sequence[tuple[Resource, Decision]]], BatchAnswer]
Name = TypeVar("Name", bound=Hashable)


def by_action(
    ctx: ActContext,
    items: Sequence[tuple[Resource, Decision]],
    name_of: Callable[[Decision], Name],
    runs: Mapping[Name, Run],
    refuse: Callable[[str, str], BaseException],
) -> BatchAnswer:
    """A kind's batch split by action, in the order the actions first come, each part to its run; an action the
    kind never makes in a batch (its declaration has no batch) is refused for each of its resources, unchanged."""
    done: dict[str, str | None] = {}
    own: dict[str, BaseException] = {}
    for name in dict.fromkeys(name_of(d) for _, d in items):
        mine = [(r, d) for r, d in items if name_of(d) == name]
        run = runs.get(name)
        if run is None:
            own.update({r.id: refuse(str(d.action), "not an action made in a batch; nothing was changed") for r, d in mine})
            continue
        answer = run(ctx, mine)
        done.update(answer.done)
        own.update(answer.own)
    return BatchAnswer(done=done, own=own)
