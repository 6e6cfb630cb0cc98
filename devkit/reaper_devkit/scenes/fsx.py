"""Demo scene: FSx for Lustre file systems — a finished persistent one (backed up, then deleted,
then restored), a finished scratch one linked to S3 (exported, then deleted), a finished scratch one
with no repository (refused), one a training job is reading, and an HPC one (never touched)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import boto3
from botocore.exceptions import ClientError

from reaper.aws.faults import error_code
from reaper.core.errors import ReaperError
from reaper.record.runtime import Runtime
from reaper.restore import run as restore
from reaper.sweep import pipeline
from reaper_devkit import seed_fsx as sf
from reaper_devkit.moto_ext import fsx as fsx_ext

KIND = "fsx"
DEV = {"ml:owner": "U024BE7LH", "ml:stage": "dev", "ml:project": "llm"}
_seeded: dict[str, str] = {}  # name -> file system id, for after_sweep


def seed(session: boto3.session.Session, now: datetime) -> dict[str, str]:
    fsx, cw, sm = session.client("fsx"), session.client("cloudwatch"), session.client("sagemaker")
    subnet, group = sf.network(session.client("ec2"))
    old = now - timedelta(days=4)

    def make(name: str, tags: dict[str, str], deployment: str = "PERSISTENT_2", capacity: int = 2400) -> str:
        throughput = {"PERSISTENT_2": 250, "PERSISTENT_1": 200}.get(deployment)
        fs_id = sf.file_system(
            fsx, subnet, group, deployment=deployment, capacity=capacity, throughput=throughput, tags={"Name": name, **tags}, created_at=old
        )
        sf.io(cw, fs_id, now)
        _seeded[name] = fs_id
        return fs_id

    persistent = make("llm-pretrain-cache", DEV)
    sf.training_job(sm, "llm-pretrain-0407", [persistent], now, started_hours_ago=40, ended_hours_ago=20, tags=DEV)
    linked = make("vision-scratch", {**DEV, "ml:project": "vision"}, deployment="SCRATCH_2", capacity=1200)
    sf.link(fsx, linked, "s3://ml-datasets/vision-scratch")
    bare = make("tmp-scratch", {**DEV, "ml:owner": "ana@example.com"}, deployment="SCRATCH_2", capacity=1200)
    reading = make("rlhf-shards", DEV)
    sf.training_job(sm, "rlhf-ppo-0412", [reading], now, started_hours_ago=1, tags=DEV)
    hpc = make("hpc-cfd-scratch", {"team": "cfd", "ml:stage": "research"}, deployment="PERSISTENT_1", capacity=4800)
    return {
        persistent: "backed up now; deleted once the backup is AVAILABLE (next step), then restored from it",
        linked: "exported to s3://ml-datasets/vision-scratch now; deleted once the export SUCCEEDED",
        bare: "kept and the owner told: scratch with no repository cannot be backed up (tag reaper:disposable=true to allow)",
        reading: "kept: training job rlhf-ppo-0412 is reading it",
        hpc: "never touched: not an ML dev file system and no training job reads it",
    }


PHASE_2_ROUNDS = 5  # sweeps at most: each settles what AWS would have finished, then sweeps again


def after_sweep(rt: Runtime, session: boto3.session.Session, now: datetime, say: Callable[[str], None]) -> None:
    """Phase 2, then the restore, each only once the state it needs is there: under load a sweep can
    defer the kind to its continuation, so the backup may start one sweep later than on a quiet machine."""
    fs_id = _seeded.get("llm-pretrain-cache")
    fsx = session.client("fsx")
    for round_ in range(1, PHASE_2_ROUNDS + 1):
        settled = fsx_ext.settle_backups() + fsx_ext.settle_tasks()
        if settled:
            say(f"AWS finishes the backup and the export ({', '.join(settled)}); the next sweep is phase 2:")
        for o in pipeline.sweep(rt, [KIND], now, event_id=f"demo-fsx-phase-2-{round_}"):
            if o.executed or o.verdict.value == "error":
                say(f"{o.resource.id}: {o.verdict.value} {o.decision.action} — {o.detail or o.reason}")
        if fs_id is None or deleted(fsx, fs_id):
            break
    if fs_id is None:
        return
    if not deleted(fsx, fs_id):
        say(f"{fs_id} is not deleted after {PHASE_2_ROUNDS} sweeps (its backup is not AVAILABLE yet): nothing to restore")
        return
    say(f"$ reaper restore {fs_id}")
    try:
        say(restore.restore(rt, fs_id, now, lambda line: say(f"… {line}")))
    except ReaperError as exc:
        say(f"reaper: {exc}")


def deleted(fsx: Any, fs_id: str) -> bool:
    """True once the file system is gone or going (Lifecycle DELETING): what a restore needs first."""
    try:
        found = fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"]
    except ClientError as exc:
        return error_code(exc) == "FileSystemNotFound"
    return not found or found[0].get("Lifecycle") == "DELETING"
