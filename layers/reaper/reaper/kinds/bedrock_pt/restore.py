"""`reaper restore NAME`: recreate a Provisioned Throughput the reaper deleted, in one step.

From the restore record: CreateProvisionedModelThroughput with the same name, model, model units
and tags (plus `reaper:restored-from`), without commitment (it had none).
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import cast

from reaper.core.errors import NoRestoreRecord, RestoreError
from reaper.core.timeutil import iso
from reaper.kinds.base import Say
from reaper.kinds.bedrock_pt.actions import read
from reaper.kinds.bedrock_pt.model import KIND, RestoreRecord
from reaper.record.runtime import Runtime


def run(rt: Runtime, name: str, now: datetime, say: Say) -> str:
    name = name.strip()
    assert rt.log is not None  # reaper.restore.run.restore refuses without the action log
    found = rt.log.latest_restore(KIND, name)
    if found is None:
        raise NoRestoreRecord(f"no restore record for Provisioned Throughput {name}: the reaper never deleted it")
    record = cast(RestoreRecord, found)
    clients = rt.clients(record.get("region") or rt.home_region)
    existing = read(clients, name)
    if existing is not None:
        if record.get("status") == "restored":
            return f"{name} was restored already on {record.get('restored_at', '?')} ({existing.get('status')})"
        raise RestoreError(f"a Provisioned Throughput named {name} exists ({existing.get('status')}): nothing to restore")
    tags = {k: v for k, v in (record.get("tags") or {}).items() if not k.lower().startswith("aws:")}
    tags[rt.settings.tag("restored-from")] = record.get("arn", name)
    token = hashlib.sha256(f"restore|{name}|{record.get('reaped_at')}".encode()).hexdigest()[:64]
    say(f"creating Provisioned Throughput {name}: {record['model_units']} model units of {record['model_arn']}, no commitment")
    created = clients("bedrock").create_provisioned_model_throughput(
        clientRequestToken=token,
        modelUnits=record["model_units"],
        provisionedModelName=name,
        modelId=record["model_arn"],
        tags=[{"key": k, "value": v} for k, v in list(tags.items())[:200]],
    )
    new_arn = created["provisionedModelArn"]
    rt.log.put_restore(KIND, name, {**record, "status": "restored", "restored_as": new_arn, "restored_at": iso(now)}, now)
    return (
        f"{name} restored as {new_arn}: {record['model_units']} model units of {record['model_arn']}, no commitment, "
        f"{len(tags)} tags. Invoke it by its new ARN (it is billed per model unit-hour again from now); it is reaped again "
        f"like any other if it sits idle: tag {rt.settings.tag('snooze-until')}=YYYY-MM-DD to keep it a while"
    )
