"""Bench seeder: n FSx for Lustre file systems — 60 % persistent and dev-tagged, 20 % scratch (half
linked to S3), 10 % untagged but read by training jobs, 10 % HPC (out of scope, no I/O data); 12 h
of AWS/FSx I/O for 90 % of them; 5 % between the phases (a backup tag); and n/5 training jobs,
half reading a file system, a quarter ended before the lookback (listed, never described).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import boto3

from reaper_devkit import seed_fsx as sf
from reaper_devkit.moto_ext import fsx as fsx_ext
from reaper_devkit.moto_ext import sagemaker_jobs
from reaper_devkit.seed import aligned, put_metric_data_in_process

KIND = "fsx"


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    fsx, sm = session.client("fsx"), session.client("sagemaker")
    subnet, group = sf.network(session.client("ec2"))
    end = aligned(now)
    ids: list[str] = []
    data: list[dict[str, Any]] = []
    for i in range(n):
        kind = i % 10
        if kind < 6:
            deployment, tags = "PERSISTENT_2", {"ml:owner": f"user{i % 37}@example.com", "ml:stage": "dev", "ml:project": f"p{i % 7}"}
        elif kind < 8:
            deployment, tags = "SCRATCH_2", {"ml:owner": f"user{i % 37}@example.com", "ml:stage": "dev"}
        elif kind == 8:
            deployment, tags = "PERSISTENT_2", {"team": "nlp"}
        else:
            deployment, tags = "PERSISTENT_1", {"team": "hpc", "ml:stage": "research"}
        created = now - timedelta(days=30 if i % 50 == 0 else 3)
        fs_id = sf.file_system(
            fsx,
            subnet,
            group,
            deployment=deployment,
            throughput={"PERSISTENT_2": 125, "PERSISTENT_1": 200}.get(deployment),
            tags={"Name": f"bench-fs-{i:05d}", **tags},
            created_at=created,
        )
        ids.append(fs_id)
        if kind == 6:
            sf.link(fsx, fs_id, f"s3://bench-data/fs-{i:05d}")
        if i % 20 == 1:  # between the phases: a backup the reaper started
            backup_id = fsx.create_backup(FileSystemId=fs_id)["Backup"]["BackupId"]
            fsx.tag_resource(
                ResourceARN=f"arn:aws:fsx:us-east-1:123456789012:file-system/{fs_id}",
                Tags=[{"Key": "reaper:backup-id", "Value": backup_id}],
            )
        if kind == 9:
            continue  # HPC: nothing reports I/O the reaper would read
        busy = i % 3 == 0
        for k in range(12 * 12 + 2):
            ts = end - timedelta(minutes=5 * (k + 1)) + timedelta(seconds=7)
            for metric in sf.METRICS:
                value = 3.0e8 if (busy and k < 4 and metric != "DataWriteBytes") else 0.0
                data.append(
                    {"MetricName": metric, "Dimensions": [{"Name": "FileSystemId", "Value": fs_id}], "Timestamp": ts, "Value": value}
                )
    put_metric_data_in_process("AWS/FSx", data)  # 146 periods x 3 metrics each: moto's backend directly
    fsx_ext.settle_backups()
    for j in range(max(1, n // 5)):
        reads = [ids[(j * 10 + 8) % n]] if j % 2 == 0 else []
        name = f"bench-job-{j:05d}"
        started = 20 * 24 if j % 4 == 3 else 30
        arn = sf.training_job(sm, name, reads, now, started_hours_ago=started, ended_hours_ago=None if j % 8 == 0 else started - 5)
        if j % 4 == 3:
            sagemaker_jobs.backdate(arn, now - timedelta(hours=started))
