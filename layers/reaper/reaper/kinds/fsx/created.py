"""CreateFileSystem, as CloudTrail records it: the creation-time notice (reaper.kinds.creation).

FSx's calls reach EventBridge as "AWS API Call via CloudTrail" with source `aws.fsx`
(https://docs.aws.amazon.com/fsx/latest/LustreGuide/logging-using-cloudtrail.html); the file system is
`responseElements.fileSystem` (its `fileSystemId`, `resourceARN`), found wherever the answer holds it
(events/fsx-cloudtrail-create.json). Only Lustre file systems are this kind's.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from reaper.core.events import CloudTrailDetail, EventBridgeEvent
from reaper.kinds.base import Check
from reaper.kinds.creation import WatchedCreate, found_in, notice
from reaper.record.runtime import Runtime

FS_ID = re.compile(r"fs-[0-9a-f]{8,21}")


def locate(detail: CloudTrailDetail, region: str, account: str) -> tuple[str, str] | None:
    if str((detail.requestParameters or {}).get("fileSystemType", "LUSTRE")).upper() != "LUSTRE":
        return None
    fs_id = found_in(detail, FS_ID)
    return None if fs_id is None else (fs_id, f"arn:aws:fsx:{region}:{account}:file-system/{fs_id}")


WATCHED = WatchedCreate(
    "fsx",
    "FSx for Lustre file system",
    ("CreateFileSystem", "CreateFileSystemFromBackup"),
    locate,
    "aws fsx tag-resource --resource-arn {arn} --tags Key={key},Value=...",
)


def created(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check | None = None) -> dict[str, Any]:
    return notice(rt, ev, now, WATCHED)
