"""What the storage rule weighs beyond discovery: the snapshots phase 1 started, as EC2 reports them now.

One DescribeSnapshots per 200 ids, by a `snapshot-id` filter of the account's own snapshots (a filter,
not SnapshotIds: a snapshot someone deleted is then simply not found, where SnapshotIds would fail the
whole call with InvalidSnapshot.NotFound).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from reaper.aws.clients import Clients
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.storage.model import KIND, OwnSnapshotFacts, SnapshotState, StorageSignal, VolumeFacts
from reaper.record.actionlog import ActionLog

IDS_PER_CALL = 200


def snapshots(ec2: Any, ids: list[str]) -> dict[str, SnapshotState]:
    """{snapshot id: its state now}; an id EC2 no longer lists is `found=False`."""
    out = {i: SnapshotState(i, found=False, state="gone") for i in ids}
    for n in range(0, len(ids), IDS_PER_CALL):
        filters = [{"Name": "snapshot-id", "Values": ids[n : n + IDS_PER_CALL]}]
        for page in ec2.get_paginator("describe_snapshots").paginate(OwnerIds=["self"], Filters=filters):
            out.update({s["SnapshotId"]: snapshot_state(s) for s in page.get("Snapshots", [])})
    return out


def snapshot_state(s: Mapping[str, Any]) -> SnapshotState:
    """A DescribeSnapshots answer's Snapshot, as the rule reads it."""
    started = s.get("StartTime")
    return SnapshotState(
        str(s["SnapshotId"]),
        state=str(s.get("State", "unknown")),
        started_at=as_utc(started) if isinstance(started, datetime) else None,
        progress=s.get("Progress"),
        message=s.get("StateMessage"),
    )


def signals(
    clients: Clients, resources: list[Resource], settings: Settings, now: datetime, log: ActionLog | None = None
) -> Mapping[str, StorageSignal]:
    phased = {r.id: f.snapshot_id for r in resources if isinstance(f := r.facts, VolumeFacts) and f.snapshot_id}
    # discovery's listing of the reaper's snapshots found most (discover.own_snapshots); the others are read by id
    seen = {f.snapshot_seen.id: f.snapshot_seen for r in resources if isinstance(f := r.facts, VolumeFacts) and f.snapshot_seen}
    unread = sorted(set(phased.values()) - seen.keys())
    found = {**seen, **(snapshots(clients("ec2"), unread) if unread else {})}
    out = {vol: StorageSignal(snapshot=found[snap]) for vol, snap in phased.items()}
    out.update(recorded(log, resources))
    return out


def recorded(log: ActionLog | None, resources: list[Resource]) -> dict[str, StorageSignal]:
    """For each of the reaper's own snapshots discovery found unmarked and past the carry-on day: whether its volume's
    latest restore record names it. One Query per such snapshot (restore records are keyed by volume and time, so no
    batched read by key exists: reaper.record.actionlog); a snapshot a live volume's marker names, or younger than a
    day, is never read. Without the action log, not read (None: kept as unknown, never reported as unrecorded)."""
    own = [(r.id, f.source_volume) for r in resources if isinstance(f := r.facts, OwnSnapshotFacts)]
    if log is None:
        return {snap: StorageSignal(recorded=None) for snap, _ in own}
    return {snap: StorageSignal(recorded=(log.latest_restore(KIND, vol) or {}).get("snapshot_id") == snap) for snap, vol in own}
