"""One gate before every change, whatever asks for it: a sweep, a state event, a Slack button, a
budget notification, a kill date.

Every one of them reaches a kind's action through `pipeline.enforce`, whose last step before the
call is `gate`: the resource's state read again (gone, or no longer in a state the action may start
from; a kind's state check also reads what it alone knows, e.g. EC2 stop protection), its
protection tags read again from its own service (exempt, snoozed, bad tag, production stage), and
the kind's own reasons to keep (`KindDeclaration.guard`) judged on those fresh tags: all three read by one
call down, `Kind.fresh` (reaper.kinds.base), each only when what came before lets the change go on. A button asks
the same guard against the rule's fresh decision before it asks for anything (`refusal`), so it can
do what a sweep would do now, or less: skip the idle wait and the grace period, never a guard.

A batch's gates (reaper.sweep.batch) may take the state and tags from one read of all its members made
just before them (`KindDeclaration.read_many`: EC2's DescribeInstances by instance-id filter, capacity's
DescribeCapacityReservations by id), instead of one read each: the same reads, of the same service, as
close to the call; the kind's own per-resource checks (EC2 stop protection) are still made in that read,
one per member. Where that read does not return the tags (FSx's DescribeFileSystems is not documented to),
it gives the state only and each gate reads its member's tags alone, as without a batch.

What the gate read for a change it lets through (the tags, and the description a kind's `current_read`
returns with the state) goes to that change's action in `ActContext.read_now`: the action does not read
the same again a moment later, and never gets what was read for another change.
"""

from __future__ import annotations

from reaper.core.model import Decision, Resource, Result
from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.kinds.base import AGAIN, ActContext, Action, Kind, ReadNow


def gate(
    kind: Kind,
    action: Action,
    resource: Resource,
    ctx: ActContext,
    reason: str = "",
    read: ReadNow | None = None,
    ruled: Decision | None = None,
) -> Result | None:
    """None when the change may be made now; else the Result that says why nothing was done.

    `read`: the state and tags a batch's one read of its members (`Kind.read_many`) found just now for
    this resource; without it, both are read (and tags it gives as None). `ruled`: the decision about
    to be carried out, which the kind's guard may read (EC2: an instance store read empty this sweep, or a
    recorded consent). One call down reads it all (`Kind.fresh`). AWS errors of the reads propagate: the
    caller reports them as a failure, nothing changed.
    """
    ctx.read_now.clear()
    now = kind.fresh(ctx.clients, ctx.settings, ctx.now, resource, action, read, ruled)
    if now.state is None:
        return Result.gone(f"gone before the action could run ({reason})" if reason else "gone before the action could run")
    if now.state not in action.valid_origin_states:
        allowed = "/".join(sorted(action.valid_origin_states))
        return Result.state_changed(f"now {now.state}, not {allowed}: nothing done")
    if now.protected is not None:
        return Result.protected(now.protected)
    if now.guarded is not None:
        return Result.refused(f"refused to {action.name}: {now.guarded} ({AGAIN}): nothing done")
    # the action takes what was read here rather than reading it again (ActContext.gated)
    ctx.read_now.update(arn=resource.arn, tags=now.tags, described=now.described)
    return None


def refusal(kind: Kind, resource: Resource, view: TagView, settings: Settings, ruled: Decision) -> str | None:
    """For a change a person asks for (Stop now): the kind's guard against the rule's fresh decision."""
    return kind.guard(resource, view, settings, ruled)
