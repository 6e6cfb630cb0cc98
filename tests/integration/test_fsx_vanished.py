"""A file system deleted by someone else after the FSx function found it: DescribeFileSystems by id answers
FileSystemNotFound for it (the kit refuses as FSx does: docs/aws-assumptions.md, KF-3). It must read as gone,
never fail the sweep, and never leave the others unread (the batch's one read, an event, a restore)."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from reaper_devkit import seed_fsx as sf
from reaper_devkit.calls import recording
from tests.conftest import event, load_function

N = 6  # one batch (reaper.sweep.batch: BATCH_FROM 3 <= N <= ACT_BATCH 20)


def _file_systems(aws: boto3.session.Session, n: int, now: datetime) -> list[str]:
    fsx, cw = aws.client("fsx"), aws.client("cloudwatch")
    subnet, group = sf.network(aws.client("ec2"))
    ids = []
    for k in range(n):
        fs_id = sf.file_system(fsx, subnet, group, tags={"Name": f"fs-{k}", **sf.DEV}, created_at=now - timedelta(days=3))
        sf.io(cw, fs_id, now)
        ids.append(fs_id)
    return sorted(ids)


def _backed_up(aws: boto3.session.Session) -> set[str]:
    return {b["FileSystem"]["FileSystemId"] for b in aws.client("fsx").describe_backups()["Backups"]}


def _between(ops: list[str], first: str, last: str) -> list[str]:
    return ops[ops.index(first) : ops.index(last)]


def test_a_file_system_deleted_after_discovery_is_gone_and_the_batch_still_reads_the_others_at_once(
    aws: Any, enforce: dict[str, str], lambda_context: Any, monkeypatch: Any
) -> None:
    # Given six idle dev file systems (one batch of backups); after the signals, someone deletes the third
    ids = _file_systems(aws, N, datetime.now(UTC))
    vanished = ids[2]
    module = importlib.import_module("reaper.kinds.fsx.signals")
    real = module.signals

    def signals_then_delete(*args: Any, **kwargs: Any) -> Any:
        read = real(*args, **kwargs)
        aws.client("fsx").delete_file_system(FileSystemId=vanished)
        return read

    monkeypatch.setattr(module, "signals", signals_then_delete)
    app = load_function("fsx")
    # When the enforce sweep runs
    with recording() as calls:
        result = app.handler(event("fsx-schedule.json"), lambda_context)
    # Then the five others are backed up, the vanished one is not an error and nothing was made of it
    others = [i for i in ids if i != vanished]
    assert sorted(result["acted"]) == others and _backed_up(aws) == set(others), result
    assert result["verdicts"].get("error", 0) == 0 and vanished not in " ".join(result["errors"]), result
    # and the gates read the batch in two calls (the refused one by id, then the region's list once), not one each;
    # the vanished one's tags are not read (it is gone before its protection is asked)
    gates = _between(calls.operations, "TransactWriteItems", "CreateBackup")
    assert (gates.count("DescribeFileSystems"), gates.count("ListTagsForResource")) == (2, N - 1), gates


def test_an_idle_check_for_a_file_system_deleted_since_says_it_is_gone_and_judges_the_rest(
    aws: Any, enforce: dict[str, str], lambda_context: Any
) -> None:
    # Given the one-off idle-window check naming a file system that was deleted since, and one that is there
    now = datetime.now(UTC)
    live, vanished = _file_systems(aws, 2, now)
    aws.client("fsx").delete_file_system(FileSystemId=vanished)
    ev = event("fsx-idle-check.json", detail={"file_system_ids": [vanished, live], "region": "us-east-1"})
    # When the FSx function takes it
    result = load_function("fsx").handler(ev, lambda_context)
    # Then the one there is judged (idle: its backup begun), the other is said to be gone, and nothing fails
    assert result["checked"] == [live] and result["gone"] == [vanished], result
    assert result["verdicts"] == {"act": 1} and _backed_up(aws) == {live}
