"""`reaper restore cr-…`: make a new reservation like one the reaper cancelled.

A cancelled Capacity Reservation cannot be reactivated. The restore record keeps what
CreateCapacityReservation needs (type, platform, zone, count, tenancy, match criteria, EBS
optimisation) and the owner's tags; the new reservation gets `reaper:restored-from`. It is a new
reservation with a new id, and AWS grants it only if the zone has the capacity now
(InsufficientInstanceCapacity otherwise, said as it is).
https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateCapacityReservation.html
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import cast

from botocore.exceptions import ClientError

from reaper.aws.faults import error_code
from reaper.core.errors import NoRestoreRecord, RestoreError
from reaper.core.timeutil import iso
from reaper.kinds.base import Say
from reaper.kinds.capacity.model import KIND, RestoreRecord
from reaper.record.runtime import Runtime


def run(rt: Runtime, name: str, now: datetime, say: Say) -> str:
    name = name.strip()
    assert rt.log is not None  # reaper.restore.run.restore refuses without the action log
    found = rt.log.latest_restore(KIND, name)
    if found is None:
        raise NoRestoreRecord(f"no restore record for {name}: the reaper never cancelled it")
    record = cast(RestoreRecord, found)
    if record.get("restored_as"):
        return f"{name} was restored already, as {record['restored_as']} on {record.get('restored_at', '?')}"
    spec = dict(record.get("spec") or {})
    if not spec.get("InstanceType") or not spec.get("InstanceCount"):
        raise RestoreError(f"the restore record for {name} has no instance type or count")
    tags = {**(record.get("tags") or {}), rt.settings.tag("restored-from"): name}
    ec2 = rt.clients(record.get("region") or rt.home_region)("ec2")
    say(
        f"creating a new capacity reservation like {name}: {spec['InstanceCount']} x {spec['InstanceType']} in "
        f"{spec.get('AvailabilityZone')}"
    )
    try:
        made = ec2.create_capacity_reservation(
            **spec,
            # the same restore asked twice makes one reservation
            ClientToken=hashlib.sha256(f"mlreaper-restore|{name}|{record.get('arn', '')}".encode()).hexdigest()[:64],
            TagSpecifications=[{"ResourceType": "capacity-reservation", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}],
        )
    except ClientError as exc:
        if error_code(exc) == "InsufficientInstanceCapacity":
            raise RestoreError(
                f"AWS has no capacity for {spec['InstanceCount']} x {spec['InstanceType']} in {spec.get('AvailabilityZone')} now: try "
                "later or another zone"
            ) from None
        raise
    new_id = str(made["CapacityReservation"]["CapacityReservationId"])
    rt.log.put_restore(KIND, name, {**record, "status": "restored", "restored_as": new_id, "restored_at": iso(now)}, now)
    return (
        f"{name} is cancelled for good; {new_id} is a new reservation like it ({spec['InstanceCount']} x {spec['InstanceType']}, "
        f"{spec.get('AvailabilityZone')})"
    )
