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
from reaper.kinds.storage.model import SnapshotState, StorageSignal, VolumeFacts

IDS_PER_CALL = 200


def snapshots(ec2: Any, ids: list[str]) -> dict[str, SnapshotState]:
    """{snapshot id: its state now}; an id EC2 no longer lists is `found=False`."""
    out = {i: SnapshotState(i, found=False, state="gone") for i in ids}
    for n in range(0, len(ids), IDS_PER_CALL):
        filters = [{"Name": "snapshot-id", "Values": ids[n : n + IDS_PER_CALL]}]
        for page in ec2.get_paginator("describe_snapshots").paginate(OwnerIds=["self"], Filters=filters):
            for s in page.get("Snapshots", []):
                started = s.get("StartTime")
                out[s["SnapshotId"]] = SnapshotState(
                    s["SnapshotId"],
                    state=str(s.get("State", "unknown")),
                    started_at=as_utc(started) if isinstance(started, datetime) else None,
                    progress=s.get("Progress"),
                    message=s.get("StateMessage"),
                )
    return out


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, StorageSignal]:
    phased = {r.id: f.snapshot_id for r in resources if isinstance(f := r.facts, VolumeFacts) and f.snapshot_id}
    if not phased:
        return {}
    found = snapshots(clients("ec2"), sorted(set(phased.values())))
    return {vol: StorageSignal(snapshot=found[snap]) for vol, snap in phased.items()}
