"""`reaper restore vol-…`: make again an EBS volume the reaper deleted, from the snapshot it took first.

It reads the restore record the reaper kept in the action log, checks the snapshot is still there and
completed, and creates a volume from it in the same Availability Zone with the same type, size, IOPS,
throughput and tags (plus `reaper:restored-from`). The new volume is attached to nothing: it says so.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from reaper.core.errors import NoRestoreRecord, RestoreError
from reaper.core.timeutil import iso
from reaper.kinds.base import Say
from reaper.kinds.storage.actions import describe_volume
from reaper.kinds.storage.model import KIND, RestoreRecord
from reaper.kinds.storage.signals import snapshots
from reaper.record.runtime import Runtime

# CreateVolume takes Iops for io1, io2 and gp3 only, and Throughput for gp3 only
# (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateVolume.html)
TAKES_IOPS = frozenset({"io1", "io2", "gp3"})
TAKES_THROUGHPUT = frozenset({"gp3"})


def run(rt: Runtime, name: str, now: datetime, say: Say) -> str:
    """The declaration's restorer: NAME is a volume id (its IAM permissions are declared there)."""
    name = name.strip()
    assert rt.log is not None  # reaper.restore.run.restore refuses without the action log
    found = rt.log.latest_restore(KIND, name)
    if found is None:
        raise NoRestoreRecord(f"no restore record for {name}: the reaper never snapshotted or deleted it")
    record = cast(RestoreRecord, found)
    ec2 = rt.clients(record.get("region") or rt.home_region)("ec2")
    clients = rt.clients(record.get("region") or rt.home_region)
    if record.get("restored_as") and describe_volume(clients, record["restored_as"]) is not None:
        return f"{name} was restored already, as {record['restored_as']} on {record.get('restored_at', '?')}"
    if describe_volume(clients, name) is not None:
        raise RestoreError(f"{name} still exists: nothing to restore; its snapshot {record.get('snapshot_id')} is kept")
    snap_id = record["snapshot_id"]
    snap = snapshots(ec2, [snap_id])[snap_id]
    if not snap.found:
        raise RestoreError(f"snapshot {snap_id} of {name} no longer exists (someone deleted it): nothing to restore from")
    if not snap.done:
        raise RestoreError(f"snapshot {snap_id} of {name} is {snap.state}: restore it once it is completed")
    params = volume_params(record, rt.settings.tag("restored-from"), name)
    say(f"creating a volume from {snap_id} in {record['availability_zone']}")
    created = ec2.create_volume(**params)
    new_id = created["VolumeId"]
    rt.log.put_restore(KIND, name, {**record, "status": "restored", "restored_as": new_id, "restored_at": iso(now)}, now)
    return (
        f"{name} restored as {new_id} from {snap_id}: {record['volume_type']}, {record['size_gib']} GiB in "
        f"{record['availability_zone']}, {len(params['TagSpecifications'][0]['Tags'])} tags. It is {created.get('State', 'creating')} "
        f"and attached to nothing: attach it to an instance in {record['availability_zone']} "
        f"(aws ec2 attach-volume --volume-id {new_id} --instance-id INSTANCE --device /dev/sdf)"
    )


def volume_params(record: RestoreRecord, restored_from: str, name: str) -> dict[str, Any]:
    """CreateVolume's parameters for the volume as the record says it was."""
    vtype = record["volume_type"]
    tags = {**(record.get("tags") or {}), restored_from: name}
    params: dict[str, Any] = {
        "SnapshotId": record["snapshot_id"],
        "AvailabilityZone": record["availability_zone"],
        "VolumeType": vtype,
        "Size": record["size_gib"],
        "TagSpecifications": [{"ResourceType": "volume", "Tags": [{"Key": k, "Value": v} for k, v in list(tags.items())[:50]]}],
    }
    if vtype in TAKES_IOPS and record.get("iops"):
        params["Iops"] = record["iops"]
    if vtype in TAKES_THROUGHPUT and record.get("throughput"):
        params["Throughput"] = record["throughput"]
    return params
