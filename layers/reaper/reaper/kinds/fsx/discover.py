"""Every FSx for Lustre file system in the region, its tags with it (DescribeFileSystems returns
them), and the data repository associations of those that may be linked to S3.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from reaper.aws.clients import Clients
from reaper.aws.pricing import Pricer
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.fsx.model import KIND, FsxFacts, phase_of, protection
from reaper.kinds.fsx.shapes import (
    DataRepositoryAssociation,
    DescribeDataRepositoryAssociationsResponse,
    FileSystem,
    LustreFileSystemConfiguration,
)


def discover(clients: Clients, settings: Settings, now: datetime, only: frozenset[str] | None = None) -> list[Resource]:
    """`only`: a targeted check (an event) looks at these file systems only."""
    fsx = clients("fsx")
    found: list[FileSystem] = []
    for page in fsx.get_paginator("describe_file_systems").paginate():
        for fs in cast(list[FileSystem], page.get("FileSystems", [])):
            if fs.get("FileSystemType") == "LUSTRE" and (only is None or fs["FileSystemId"] in only):
                found.append(fs)
    # Every file system's links, persistent ones too: AWS cannot back up a linked file system, so
    # a link decides between backup and export (API_CreateBackup).
    associations = _associations(fsx) if found else {}
    return [_resource(fs, clients.region, settings, associations.get(fs["FileSystemId"], []), clients.pricer) for fs in found]


def _resource(fs: FileSystem, region: str, settings: Settings, links: list[DataRepositoryAssociation], pricer: Pricer) -> Resource:
    lustre: LustreFileSystemConfiguration = fs.get("LustreConfiguration") or {}
    deployment = str(lustre.get("DeploymentType") or "SCRATCH_1")
    capacity = int(fs.get("StorageCapacity") or 0)
    per_unit = lustre.get("PerUnitStorageThroughput")
    tags = {t["Key"]: t["Value"] for t in fs.get("Tags", [])}
    created = fs.get("CreationTime")
    return Resource(
        kind=KIND,
        id=fs["FileSystemId"],
        arn=fs["ResourceARN"],
        region=region,
        state=fs.get("Lifecycle", "UNKNOWN"),
        tags=tags,
        instance_type=f"{deployment} {capacity:,} GiB",
        price=pricer.fsx_hourly(region, deployment, per_unit, capacity),
        created_at=as_utc(created) if created else None,
        facts=FsxFacts(
            deployment=deployment,
            capacity_gib=capacity,
            protection=protection(deployment, lustre, links),
            phase=phase_of(tags, settings.tag_prefix),
            storage_type=fs.get("StorageType"),
            per_unit_throughput=per_unit,
            subnet_ids=tuple(fs.get("SubnetIds") or ()),
            vpc_id=fs.get("VpcId"),
            network_interface_ids=tuple(fs.get("NetworkInterfaceIds") or ()),
            kms_key_id=fs.get("KmsKeyId"),
            file_system_type_version=fs.get("FileSystemTypeVersion"),
            lustre=lustre,
        ),
    )


def _associations(fsx: Any) -> dict[str, list[DataRepositoryAssociation]]:
    """Every data repository association in the region, by file system (25 per call: the API's limit)."""
    out: dict[str, list[DataRepositoryAssociation]] = {}
    token = ""
    while True:
        more = {"NextToken": token} if token else {}
        page = cast(DescribeDataRepositoryAssociationsResponse, fsx.describe_data_repository_associations(MaxResults=25, **more))
        for a in page.get("Associations", []):
            fs_id = a.get("FileSystemId")
            if fs_id:
                out.setdefault(fs_id, []).append(a)
        token = page.get("NextToken", "")
        if not token:
            return out
