"""FSx for Lustre file systems: delete the finished ones, each only after its data is safe.

Which: Lustre file systems tagged with a dev `ml:stage`, or read by a SageMaker training job
(FileSystemDataSource). Others — HPC clusters, other teams, other FSx types — are never touched.
Signals: the training jobs that use each file system (fsx_jobs), AWS/FSx client I/O (fsx_io),
and the backup or export a first phase started (fsx_artifacts). The rule is fsx_rules.decide;
the actions are in fsx_actions; `reaper restore fs-…` is fsx_restore; events are fsx_events.

Reads per sweep: DescribeFileSystems (tags come with it), DescribeDataRepositoryAssociations only
when a scratch or linked file system is present, ListTrainingJobs + DescribeTrainingJob (see
fsx_jobs for how few), GetMetricData (3 queries per candidate, 500 per call), and DescribeBackups /
DescribeDataRepositoryTasks for the file systems between phases (50 ids per call).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from reaper import pricing
from reaper.clients import Clients
from reaper.kinds import fsx_restore  # noqa: F401 - registers `reaper restore fs-…`
from reaper.kinds.base import Action, Kind
from reaper.kinds.fsx_actions import (
    BACKUP_PERMISSIONS,
    DELETE_PERMISSIONS,
    DISCARD_PERMISSIONS,
    EXPORT_PERMISSIONS,
    delete_confirmed,
    discard,
    start_backup,
    start_export,
)
from reaper.kinds.fsx_artifacts import backups, tasks
from reaper.kinds.fsx_io import read as read_io
from reaper.kinds.fsx_jobs import scan
from reaper.kinds.fsx_model import FsxSignal, JobRef, phase_of, protection
from reaper.kinds.fsx_rules import decide as decide_fsx
from reaper.kinds.fsx_rules import idle_window
from reaper.model import Decision, Resource
from reaper.policy import TagView, is_dev, read_tags
from reaper.settings import Settings
from reaper.timeutil import as_utc

AVAILABLE = frozenset({"AVAILABLE"})
EVENT_PERMISSIONS = ("scheduler:CreateSchedule", "iam:PassRole")


class FsxKind(Kind):
    name = "fsx"
    tag_resource_types = ("fsx:file-system",)
    tag_service = "fsx"
    read_permissions = (
        "fsx:DescribeFileSystems",
        "fsx:DescribeDataRepositoryAssociations",
        "fsx:DescribeBackups",
        "fsx:DescribeDataRepositoryTasks",
        "sagemaker:ListTrainingJobs",
        "sagemaker:DescribeTrainingJob",
        "cloudwatch:GetMetricData",
    )
    actions: Mapping[str, Action] = {
        "backup": Action("backup", "began backing up", BACKUP_PERMISSIONS, AVAILABLE, start_backup, needs_log=True),
        "export": Action("export", "began exporting", EXPORT_PERMISSIONS, AVAILABLE, start_export, needs_log=True),
        "delete": Action("delete", "deleted", DELETE_PERMISSIONS, AVAILABLE, delete_confirmed, needs_log=True, removes_resource=True),
        "discard": Action("discard", "deleted, data and all,", DISCARD_PERMISSIONS, AVAILABLE, discard, removes_resource=True),
    }

    def __init__(self, only: frozenset[str] | None = None) -> None:
        self.only = only  # a targeted check (an event) looks at these file systems only

    def permissions(self) -> set[str]:
        """Tags come with DescribeFileSystems, so no tag:GetResources; the event route arranges
        one-off checks with EventBridge Scheduler (passing it the role that may invoke us)."""
        from reaper.tagging import TAG_WRITE_PERMISSIONS

        perms = set(self.read_permissions) | set(TAG_WRITE_PERMISSIONS[self.tag_service]) | set(EVENT_PERMISSIONS)
        for action in self.actions.values():
            perms |= set(action.permissions)
        return perms

    @staticmethod
    def event_route(rt: Any, ev: Any, now: datetime) -> dict[str, Any] | None:
        from reaper.kinds.fsx_events import route

        return route(rt, ev, now)

    # -- discover ------------------------------------------------------------------------
    def discover(self, clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
        fsx = clients("fsx")
        found: list[dict[str, Any]] = []
        for page in fsx.get_paginator("describe_file_systems").paginate():
            for fs in page.get("FileSystems", []):
                if fs.get("FileSystemType") == "LUSTRE" and (self.only is None or fs["FileSystemId"] in self.only):
                    found.append(fs)
        needs_links = [fs for fs in found if not str((fs.get("LustreConfiguration") or {}).get("DeploymentType", "")).startswith("PERSISTENT")]
        associations = _associations(fsx) if needs_links else {}
        return [self._resource(fs, clients.region, settings, associations.get(fs["FileSystemId"], [])) for fs in found]

    def _resource(self, fs: dict[str, Any], region: str, settings: Settings, links: list[dict[str, Any]]) -> Resource:
        lustre = fs.get("LustreConfiguration") or {}
        deployment = str(lustre.get("DeploymentType") or "SCRATCH_1")
        capacity = int(fs.get("StorageCapacity") or 0)
        per_unit = lustre.get("PerUnitStorageThroughput")
        tags = {t["Key"]: t["Value"] for t in fs.get("Tags", [])}
        created = fs.get("CreationTime")
        return Resource(
            kind=self.name,
            id=fs["FileSystemId"],
            arn=fs["ResourceARN"],
            region=region,
            state=fs.get("Lifecycle", "UNKNOWN"),
            tags=tags,
            instance_type=f"{deployment} {capacity:,} GiB",
            hourly_usd=pricing.fsx_hourly(region, deployment, per_unit, capacity),
            created_at=as_utc(created) if created else None,
            attrs={
                "deployment": deployment,
                "capacity_gib": capacity,
                "storage_type": fs.get("StorageType"),
                "per_unit_throughput": per_unit,
                "subnet_ids": fs.get("SubnetIds") or [],
                "vpc_id": fs.get("VpcId"),
                "network_interface_ids": fs.get("NetworkInterfaceIds") or [],
                "kms_key_id": fs.get("KmsKeyId"),
                "file_system_type_version": fs.get("FileSystemTypeVersion"),
                "lustre": lustre,
                "protection": protection(deployment, lustre, links),
                "phase": phase_of(tags, settings.tag_prefix),
            },
        )

    # -- signals -------------------------------------------------------------------------
    def signals(self, clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, Any]:
        available = [r for r in resources if r.state == "AVAILABLE"]
        if not available:
            return {}
        views = {r.id: read_tags(r.tags, settings) for r in available}
        longest_window_days = max(idle_window(v, settings) for v in views.values()) / 1440
        # Jobs older than the idle window matter only to bring an untagged file system into scope:
        # when every file system is dev-tagged, jobs that ended before the window need no describe.
        all_dev = all(is_dev(v, settings) for v in views.values())
        lookback_days = longest_window_days if all_dev else max(settings.fsx_job_lookback_days, longest_window_days)
        oldest = min((r.created_at for r in available if r.created_at), default=now - timedelta(days=lookback_days))
        jobs = scan(clients("sagemaker"), oldest - timedelta(minutes=5), now - timedelta(days=lookback_days)).refs
        candidates = [r for r in available if _candidate(r, views[r.id], settings, jobs.get(r.id, []))]
        longest = max((idle_window(views[r.id], settings) for r in candidates), default=settings.idle_for(self.name))
        io, period, end = read_io(clients("cloudwatch"), [r.id for r in candidates], longest, now)
        phases = [r.attrs["phase"] for r in available if r.attrs.get("phase")]
        backup_ids = [i for k, i in phases if k == "backup"]
        task_ids = [i for k, i in phases if k == "export"]
        found = {**(backups(clients("fsx"), backup_ids) if backup_ids else {}), **(tasks(clients("fsx"), task_ids) if task_ids else {})}
        out: dict[str, FsxSignal] = {}
        for r in available:
            phase = r.attrs.get("phase")
            out[r.id] = FsxSignal(
                jobs=tuple(jobs.get(r.id, [])),
                jobs_lookback_days=lookback_days,
                io=io.get(r.id),
                period=period,
                window_end=end,
                artifact=found.get(phase[1]) if phase else None,
            )
        return out

    def decide(self, resource: Resource, signal: Any, view: TagView, settings: Settings, now: datetime) -> Decision:
        return decide_fsx(resource, signal, view, settings, now)

    def current_state(self, clients: Clients, resource: Resource) -> str | None:
        try:
            found = clients("fsx").describe_file_systems(FileSystemIds=[resource.id]).get("FileSystems", [])
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "FileSystemNotFound":
                return None
            raise
        return str(found[0].get("Lifecycle", "UNKNOWN")) if found else None

    def undo_hint(self, resource: Resource, action: str | None) -> str | None:
        if action == "discard":
            return f"none: {resource.id} is deleted with its data (it is tagged disposable); nothing can bring it back"
        p = resource.attrs.get("protection")
        if action in ("backup", "export", "delete") and p is not None:
            if p.method == "backup":
                return f"reaper restore {resource.id}   # a new file system from the backup: same type, capacity, throughput, network, tags"
            return f"reaper restore {resource.id}   # says where the exported data is: {p.where()}"
        return None


def _candidate(resource: Resource, view: TagView, settings: Settings, jobs: list[JobRef]) -> bool:
    """Worth reading I/O for: in scope, and no job running on it."""
    in_scope = is_dev(view, settings) or bool(jobs)
    return in_scope and not any(j.running for j in jobs)


def _associations(fsx: Any) -> dict[str, list[dict[str, Any]]]:
    """Every data repository association in the region, by file system (25 per call: the API's limit)."""
    out: dict[str, list[dict[str, Any]]] = {}
    request: dict[str, Any] = {"MaxResults": 25}
    while True:
        page = fsx.describe_data_repository_associations(**request)
        for a in page.get("Associations", []):
            if a.get("FileSystemId"):
                out.setdefault(a["FileSystemId"], []).append(a)
        if not page.get("NextToken"):
            return out
        request["NextToken"] = page["NextToken"]
