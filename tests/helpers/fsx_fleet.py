"""One FSx file system per interesting case, seeded in moto; shared by the FSx integration tests, with
one idle persistent file system alone and one scheduled sweep of the fsx function's runtime.

File system ids are random, so each carries a `Name` tag and tests find it by name.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reaper.handlers import handle_kind_event
from reaper_devkit import seed_fsx as sf
from tests.conftest import event

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "llm"}

# what a correct enforce sweep with grace 0 does first with each file system
EXPECTED = {
    "persistent-idle": ("act", "backup"),
    "job-old-untagged": ("act", "backup"),  # no stage tag, but a training job read it 2 days ago
    "scratch-linked": ("act", "export"),  # a data repository association at /
    "scratch-legacy": ("act", "export"),  # SCRATCH_1 linked with ImportPath/ExportPath
    "scratch-disposable": ("act", "discard"),  # no repository, tagged reaper:disposable=true
    "scratch-bare": ("keep", None),  # no repository: refused, the owner told how to allow it
    "busy": ("keep", None),  # I/O 40 minutes ago
    "gap": ("keep", None),  # 15 minutes of no data in the window
    "no-metrics": ("keep", None),  # no AWS/FSx data at all
    "job-running": ("keep", None),  # an InProgress training job reads it
    "job-recent": ("keep", None),  # the last job ended 3 h ago (window 12 h)
    "young": ("keep", None),  # created 2 h ago
    "hpc": ("keep", None),  # no dev stage, no training job: never touched
    "exempt": ("exempt", None),
    "snoozed": ("exempt", None),
    "prod": ("exempt", None),  # read by a training job, so in scope, but production: notify-only
    "bad-tag": ("exempt", None),  # reaper:idle-minutes=soon
}
DELETED_IN_THE_END = sorted(k for k, (v, _) in EXPECTED.items() if v == "act")
NOTIFY_IN_DRY_RUN = sorted([*DELETED_IN_THE_END, "scratch-bare", "prod", "bad-tag"])


def seed(session: Any, now: datetime) -> dict[str, str]:
    """Seed every case; returns {name: file system id}. A ZFS file system is seeded too: not Lustre."""
    fsx, cw, sm = session.client("fsx"), session.client("cloudwatch"), session.client("sagemaker")
    subnet, group = sf.network(session.client("ec2"))
    old = now - timedelta(days=3)
    later = (now + timedelta(days=2)).strftime("%Y-%m-%d")
    ids: dict[str, str] = {}

    def make(name: str, tags: dict[str, str] | None = None, deployment: str = "PERSISTENT_2", io: bool = True, **kw: Any) -> str:
        throughput = 125 if deployment.startswith("PERSISTENT") else None
        fs_id = sf.file_system(
            fsx,
            subnet,
            group,
            deployment=deployment,
            throughput=throughput,
            tags={"Name": name, **(DEV if tags is None else tags)},
            created_at=kw.pop("created_at", old),
            **kw,
        )
        if io:
            sf.io(cw, fs_id, now)
        ids[name] = fs_id
        return fs_id

    make("persistent-idle")
    make("job-old-untagged", tags={"team": "nlp"})
    sf.training_job(sm, "old-run", [ids["job-old-untagged"]], now, started_hours_ago=60, ended_hours_ago=48)
    sf.link(fsx, make("scratch-linked", deployment="SCRATCH_2"), "s3://ml-data/scratch-linked")
    make("scratch-legacy", deployment="SCRATCH_1", import_path="s3://ml-data/legacy")
    make("scratch-disposable", tags={**DEV, "reaper:disposable": "true"}, deployment="SCRATCH_2")
    make("scratch-bare", deployment="SCRATCH_2")
    busy = make("busy", io=False)
    sf.io(cw, busy, now, busy_minutes_ago=[40])
    gap = make("gap", io=False)
    sf.io(cw, gap, now, gaps_minutes_ago=[300, 305, 310])
    make("no-metrics", io=False)
    make("job-running", tags={"team": "nlp"})
    sf.training_job(sm, "live-run", [ids["job-running"]], now, started_hours_ago=2)
    make("job-recent")
    sf.training_job(sm, "recent-run", [ids["job-recent"]], now, started_hours_ago=6, ended_hours_ago=3)
    make("young", created_at=now - timedelta(hours=2))
    make("hpc", tags={"team": "hpc", "ml:stage": "research"})
    make("exempt", tags={**DEV, "reaper:exempt": "true"})
    make("snoozed", tags={**DEV, "reaper:snooze-until": later})
    make("prod", tags={"ml:owner": "ops@example.com", "ml:stage": "prod"})
    sf.training_job(sm, "prod-run", [ids["prod"]], now, started_hours_ago=50, ended_hours_ago=40)
    make("bad-tag", tags={**DEV, "reaper:idle-minutes": "soon"})
    fsx.create_file_system(
        FileSystemType="OPENZFS",
        StorageCapacity=64,
        SubnetIds=[subnet],
        Tags=[{"Key": "Name", "Value": "zfs"}, *[{"Key": k, "Value": v} for k, v in DEV.items()]],
        OpenZFSConfiguration={"DeploymentType": "SINGLE_AZ_1", "ThroughputCapacity": 64},
    )
    return ids


def by_name(fsx: Any) -> dict[str, dict[str, Any]]:
    """Every file system still there, by its Name tag."""
    out: dict[str, dict[str, Any]] = {}
    for fs in fsx.describe_file_systems()["FileSystems"]:
        tags = {t["Key"]: t["Value"] for t in fs.get("Tags", [])}
        out[tags.get("Name", fs["FileSystemId"])] = {**fs, "tags": tags}
    return out


SCHEDULE = "fsx-schedule.json"


def sweep(app: Any, now: datetime, event_id: str) -> dict[str, Any]:
    """The fsx function's scheduled sweep (events/fsx-schedule.json) at `now`, through its own runtime."""
    return handle_kind_event(event(SCHEDULE, id=event_id), "fsx", app.RUNTIME, now=now)


def one_persistent(aws: Any, now: datetime, tags: dict[str, str] | None = None) -> str:
    """An idle file system made two days ago: zero I/O in every period of the 16 hours that end three hours after `now`."""
    subnet, group = sf.network(aws.client("ec2"))
    fs_id = sf.file_system(aws.client("fsx"), subnet, group, tags=tags or sf.DEV, created_at=now - timedelta(days=2))
    sf.io(aws.client("cloudwatch"), fs_id, now + timedelta(hours=3), minutes=16 * 60)
    return fs_id
