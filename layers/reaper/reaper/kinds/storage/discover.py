"""The storage left behind in a region, with its tags (each listing returns them):

* the reaper's own FSx backups: one DescribeBackups listing filtered to user-initiated Lustre backups
  (DescribeBackups takes no tag filter: https://docs.aws.amazon.com/fsx/latest/APIReference/API_Filter.html),
  of which those tagged `<prefix>source-fs` are kept, and one DescribeFileSystems to say which of their file
  systems still exist (a backup of a living file system is the fsx kind's phase 1, never this kind's);
* ML volumes attached to nothing: DescribeVolumes filtered on status `available` and tag-key `ml:*` (EC2
  filter values take `*` wildcards: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/Using_Filtering.html);
* the volumes of accelerated instances stopped for `StorageIdleWeeks`: DescribeInstances filtered on state
  `stopped`, DescribeInstanceTypes for the types found (100 a call: which have GpuInfo, NeuronInfo or
  InferenceAcceleratorInfo), then one DescribeVolumes by id per 500 volumes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from reaper.aws import pricing
from reaper.aws.clients import Clients
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.storage import spaces
from reaper.kinds.storage.model import (
    CARRY_ON_WINDOW,
    KIND,
    ML_TAG_KEYS,
    SNAPSHOT_TAG,
    SOURCE_FS_TAG,
    SOURCE_VOLUME_TAG,
    BackupFacts,
    ImportedModelFacts,
    OwnSnapshotFacts,
    VolumeFacts,
)
from reaper.kinds.storage.settings import StorageSettings
from reaper.kinds.storage.signals import snapshot_state

SNAPSHOT_PAGE = 1000  # DescribeSnapshots: MaxResults 5-1,000 (API_DescribeSnapshots)
PAGE = 500  # DescribeVolumes: MaxResults 5-500 (API_DescribeVolumes)
TYPES_PER_CALL = 100  # DescribeInstanceTypes: InstanceTypes, up to 100 (API_DescribeInstanceTypes)
ACCELERATORS = ("GpuInfo", "NeuronInfo", "InferenceAcceleratorInfo")
# "User initiated (2026-11-01 10:00:00 GMT)": the stop time EC2 writes in StateTransitionReason
_STOPPED_AT = re.compile(r"\((\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) (GMT|UTC)\)")


def discover(clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
    account = cache(lambda: account_of(clients, settings))  # asked at most once a sweep, and only for volumes
    listed = {str(s["SnapshotId"]): s for s in own_snapshots(clients, settings)}
    volumes = [seen(r, listed) for r in (*ml_volumes(clients, settings, account), *stopped_box_volumes(clients, settings, now, account))]
    marked = {f.snapshot_id for r in volumes if isinstance(f := r.facts, VolumeFacts) and f.snapshot_id}
    return [
        *backups(clients, settings),
        *volumes,
        *unmarked_snapshots(clients, settings, now, listed, marked),
        *imported_models(clients, settings, now),
        *spaces.studio_spaces(clients, settings, now),  # kinds/storage/spaces.py
    ]


def own_snapshots(clients: Clients, settings: Settings) -> list[dict[str, Any]]:
    """The reaper's own snapshots of volumes: one DescribeSnapshots of the account's own, filtered on the `source-volume`
    tag key the reaper writes at creation, paged 1,000 at a time
    (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeSnapshots.html). It gives the marked volumes'
    snapshots their state (signals reads by id only those it did not list) and the unmarked ones (unmarked_snapshots)."""
    filters = [{"Name": "tag-key", "Values": [settings.tag(SOURCE_VOLUME_TAG)]}]
    pages = (
        clients("ec2")
        .get_paginator("describe_snapshots")
        .paginate(OwnerIds=["self"], Filters=filters, PaginationConfig={"PageSize": SNAPSHOT_PAGE})
    )
    return [s for page in pages for s in page.get("Snapshots", [])]


def seen(resource: Resource, listed: Mapping[str, dict[str, Any]]) -> Resource:
    """A marked volume with its snapshot's state from the listing, when the listing holds it."""
    f = resource.facts
    if not isinstance(f, VolumeFacts) or not f.snapshot_id or f.snapshot_id not in listed:
        return resource
    return replace(resource, facts=replace(f, snapshot_seen=snapshot_state(listed[f.snapshot_id])))


def unmarked_snapshots(
    clients: Clients, settings: Settings, now: datetime, listed: Mapping[str, dict[str, Any]], marked: set[str]
) -> list[Resource]:
    """The reaper's own snapshots begun more than a day ago (CARRY_ON_WINDOW: until then the next phase 1 may carry one
    on) that no discovered volume's marker names, nor their own (phase 1 marks the snapshot with the volume, after its
    record; snapshots made before it did are not marked on themselves). Whether a restore record names each is read in
    signals; one that none names is reported, never deleted (docs/kinds/storage.md, *Snapshots left unrecorded*)."""
    before, key = now - CARRY_ON_WINDOW, settings.tag(SNAPSHOT_TAG)
    return [
        _own_snapshot(s, clients, settings)
        for sid, s in listed.items()
        if sid not in marked
        and _tag(_tags(s.get("Tags")), key) != sid  # marked on itself with the volume, once its record was written (actions._snapshots)
        and isinstance(s.get("StartTime"), datetime)
        and as_utc(s["StartTime"]) < before
    ]


def _own_snapshot(s: dict[str, Any], clients: Clients, settings: Settings) -> Resource:
    tags = _tags(s.get("Tags"))
    size = int(s["VolumeSize"]) if s.get("VolumeSize") else None
    source = _tag(tags, settings.tag(SOURCE_VOLUME_TAG)) or str(s.get("VolumeId") or "")
    return Resource(
        kind=KIND,
        id=str(s["SnapshotId"]),
        arn=f"arn:{partition(clients.region)}:ec2:{clients.region}::snapshot/{s['SnapshotId']}",  # a snapshot's ARN has no account
        region=clients.region,
        state=str(s.get("State", "unknown")),
        tags=tags,
        instance_type=f"EBS snapshot of {source}" + (f", {size:,} GiB volume" if size else ""),
        # the shipped copy has no EBS snapshot row: unpriced, never $0 (pricing.EBS_SNAPSHOT_GB_MONTH)
        price=clients.pricer.storage_hourly(pricing.EBS_SNAPSHOT_GB_MONTH, clients.region, "standard", size) if size else None,
        created_at=as_utc(s["StartTime"]),
        facts=OwnSnapshotFacts(source_volume=source, size_gib=size, started_at=as_utc(s["StartTime"])),
    )


def imported_models(clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
    """Bedrock imported models made at least StorageIdleWeeks ago: ListImportedModels (1,000 a page), and their tags,
    one ListTagsForResource each (the Tagging API does not list them; an account holds few: a quota AWS sets)."""
    bedrock = clients("bedrock")
    cutoff = now - timedelta(weeks=settings.of(StorageSettings).storage_idle_weeks)
    found = [
        m
        for page in bedrock.get_paginator("list_imported_models").paginate(PaginationConfig={"PageSize": 1000})
        for m in page.get("modelSummaries", [])
        if as_utc(m["creationTime"]) <= cutoff
    ]
    out = []
    for m in found:
        tags = {t["key"]: t.get("value", "") for t in bedrock.list_tags_for_resource(resourceARN=m["modelArn"]).get("tags", [])}
        out.append(
            Resource(
                kind=KIND,
                id=str(m["modelName"]),
                arn=str(m["modelArn"]),
                region=clients.region,
                state="imported",
                tags=tags,
                instance_type=f"Bedrock imported model ({m.get('modelArchitecture') or 'architecture not said'})",
                price=None,  # the price list's Custom Model Import storage is not in the shipped copy: unpriced, never $0
                created_at=as_utc(m["creationTime"]),
                facts=ImportedModelFacts(str(m["modelName"]), m.get("modelArchitecture")),
            )
        )
    return out


def _tags(pairs: list[dict[str, Any]] | None) -> dict[str, str]:
    return {t["Key"]: t.get("Value", "") for t in pairs or []}


def _tag(tags: dict[str, str], key: str) -> str | None:
    return next((v.strip() for k, v in tags.items() if k.strip().lower() == key.lower()), None)


def backups(clients: Clients, settings: Settings) -> list[Resource]:
    fsx = clients("fsx")
    filters = [{"Name": "backup-type", "Values": ["USER_INITIATED"]}, {"Name": "file-system-type", "Values": ["LUSTRE"]}]
    ours = [
        b
        for page in fsx.get_paginator("describe_backups").paginate(Filters=filters)
        for b in page.get("Backups", [])
        if _tag(_tags(b.get("Tags")), settings.tag(SOURCE_FS_TAG))
    ]
    if not ours:
        return []
    living = {fs["FileSystemId"] for page in fsx.get_paginator("describe_file_systems").paginate() for fs in page.get("FileSystems", [])}
    return [_backup(b, clients, settings, living) for b in ours]


def _backup(b: dict[str, Any], clients: Clients, settings: Settings, living: set[str]) -> Resource:
    tags = _tags(b.get("Tags"))
    source = _tag(tags, settings.tag(SOURCE_FS_TAG)) or ""
    size = (b.get("FileSystem") or {}).get("StorageCapacity")
    created = b.get("CreationTime")
    return Resource(
        kind=KIND,
        id=b["BackupId"],
        arn=b["ResourceARN"],
        region=clients.region,
        state=str(b.get("Lifecycle", "UNKNOWN")),
        tags=tags,
        instance_type=f"FSx backup of {source}" + (f", {size:,} GiB" if size else ""),
        price=clients.pricer.storage_hourly(pricing.FSX_BACKUP_GB_MONTH, clients.region, "lustre", int(size)) if size else None,
        created_at=as_utc(created) if isinstance(created, datetime) else None,
        facts=BackupFacts(source_fs=source, source_exists=source in living, size_gib=int(size) if size else None),
    )


def ml_volumes(clients: Clients, settings: Settings, account: Callable[[], str]) -> list[Resource]:
    filters = [{"Name": "status", "Values": ["available"]}, {"Name": "tag-key", "Values": list(ML_TAG_KEYS)}]
    pages = clients("ec2").get_paginator("describe_volumes").paginate(Filters=filters, PaginationConfig={"PageSize": PAGE})
    return [volume_resource(v, clients, account(), settings.tag_prefix) for page in pages for v in page.get("Volumes", [])]


def account_of(clients: Clients, settings: Settings) -> str:
    """The account a volume's ARN names: DescribeVolumes does not say it. The stack sets REAPER_ACCOUNT_ID; the CLI
    asks STS once a sweep, and only when there are volumes (GetCallerIdentity needs no permission: API_GetCallerIdentity)."""
    return settings.account_id or str(clients("sts").get_caller_identity()["Account"])


def volume_arn(region: str, account: str, volume_id: str) -> str:
    return f"arn:{partition(region)}:ec2:{region}:{account}:volume/{volume_id}"


def volume_resource(
    v: dict[str, Any], clients: Clients, account: str, prefix: str, instance_id: str | None = None, stopped_since: datetime | None = None
) -> Resource:
    tags = _tags(v.get("Tags"))
    size, vtype = int(v.get("Size") or 0), str(v.get("VolumeType") or "standard")
    created = v.get("CreateTime")
    return Resource(
        kind=KIND,
        id=v["VolumeId"],
        arn=volume_arn(clients.region, account, v["VolumeId"]),
        region=clients.region,
        state=str(v.get("State", "unknown")),
        tags=tags,
        instance_type=f"{vtype} {size:,} GiB",
        price=clients.pricer.storage_hourly(pricing.EBS_GB_MONTH, clients.region, vtype, size),
        created_at=as_utc(created) if isinstance(created, datetime) else None,
        facts=VolumeFacts(
            availability_zone=str(v.get("AvailabilityZone", "")),
            volume_type=vtype,
            size_gib=size,
            iops=v.get("Iops"),
            throughput=v.get("Throughput"),
            encrypted=bool(v.get("Encrypted")),
            kms_key_id=v.get("KmsKeyId"),
            snapshot_id=_tag(tags, prefix + SNAPSHOT_TAG),
            instance_id=instance_id,
            stopped_since=stopped_since,
        ),
    )


def stopped_since(instance: dict[str, Any]) -> datetime | None:
    """When EC2 says the instance stopped (StateTransitionReason), or None when it does not say."""
    found = _STOPPED_AT.search(str(instance.get("StateTransitionReason") or ""))
    return datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC) if found else None


def partition(region: str) -> str:
    return "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"


def _stopped(clients: Clients) -> Iterator[dict[str, Any]]:
    paginator = clients("ec2").get_paginator("describe_instances")
    filters = [{"Name": "instance-state-name", "Values": ["stopped"]}]
    for page in paginator.paginate(Filters=filters, PaginationConfig={"PageSize": 1000}):
        for reservation in page.get("Reservations", []):
            yield from reservation.get("Instances", [])


def accelerated(clients: Clients, types: list[str]) -> set[str]:
    """Which of these instance types have a GPU, Neuron or inference accelerator (DescribeInstanceTypes)."""
    ec2, out = clients("ec2"), set()
    for i in range(0, len(types), TYPES_PER_CALL):
        for info in ec2.describe_instance_types(InstanceTypes=types[i : i + TYPES_PER_CALL]).get("InstanceTypes", []):
            if any(info.get(k) for k in ACCELERATORS):
                out.add(str(info["InstanceType"]))
    return out


def stopped_box_volumes(clients: Clients, settings: Settings, now: datetime, account: Callable[[], str]) -> list[Resource]:
    """The EBS volumes of accelerated instances stopped at least StorageIdleWeeks ago: reported, never changed."""
    cutoff = now - timedelta(weeks=settings.of(StorageSettings).storage_idle_weeks)
    # a box that does not say when it stopped is listed too: kept as unknown (coverage `stop-time-unknown`), never guessed
    long_stopped = [(i, since) for i in _stopped(clients) if (since := stopped_since(i)) is None or since <= cutoff]
    if not long_stopped:
        return []
    gpu = accelerated(clients, sorted({str(i.get("InstanceType")) for i, _ in long_stopped}))
    boxes: dict[str, tuple[str, datetime | None]] = {}  # volume id -> (instance id, stopped since)
    for inst, since in long_stopped:
        if inst.get("InstanceType") not in gpu:
            continue
        for mapping in inst.get("BlockDeviceMappings", []):
            vol = (mapping.get("Ebs") or {}).get("VolumeId")
            if vol:
                boxes[vol] = (inst["InstanceId"], since)
    ids = sorted(boxes)
    ec2 = clients("ec2")
    out: list[Resource] = []
    for i in range(0, len(ids), PAGE):
        for v in ec2.describe_volumes(VolumeIds=ids[i : i + PAGE]).get("Volumes", []):
            out.append(volume_resource(v, clients, account(), settings.tag_prefix, *boxes[v["VolumeId"]]))
    return out
