"""What acting costs for the kinds that keep a restore record (capacity, bedrock-pt, fsx, mlflow, storage), counted call by
call as the server sees them (one per API call), beyond the dry run's reads and the changes: each change is
begun and gated alone (a batch's members read again in one call where AWS has one: capacity's
DescribeCapacityReservations, FSx's DescribeFileSystems), then a batch's restore records are written in one
TransactWriteItems instead of a PutItem each, and what the records need beyond the gate (FSx: the security groups on the file systems'
network interfaces, and the reaper's own earlier backups) is read once per batch (issue 35, item 6;
docs/performance.md, *Restore records in batches*). Not timed: counted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from bench.kinds import bedrock_pt as bench_bedrock
from bench.kinds import capacity as bench_capacity
from bench.kinds import fsx as bench_fsx
from bench.kinds import mlflow as bench_mlflow
from bench.kinds import storage as bench_storage
from reaper.handlers import handle_kind_event
from reaper.record.actionlog import ActionLog
from reaper_devkit.calls import CallRecorder, recording
from tests.conftest import TABLE, event, load_function

BOOKKEEPING = ("dynamodb:", "sqs:")
CHANGES = ("Cancel", "Delete", "Create", "Tag", "Update")  # the changes themselves (bench/sweep_bench.py counts them alike)


@dataclass(frozen=True)
class Case:
    kind: str
    function: str
    schedule: str
    seed: Callable[[boto3.session.Session, int, datetime], None]
    n: int
    # calls per action beyond the dry run and the changes, at most (on 1,000 a sweep's own log and queue calls weigh less)
    pinned: float
    # changes made alone, their action's batch under reaper.sweep.batch.BATCH_FROM (each its own record's PutItem)
    alone: int = 0


CASES = [
    # 7 of 10 are open ODCRs unused for a day: 17 calls (gate 1: one DescribeCapacityReservations for the batch, the
    # tags with it; begins 7, records 1, settle 1, the log's reads 3, queue 2, drop 2); before: 30, a
    # DescribeCapacityReservations and a DescribeTags per gate (and 37 before that, a PutItem per record)
    Case("capacity", "capacity", "capacity-schedule.json", bench_capacity.seed, 10, 17 / 7),
    # 4 of 12 without commitment and idle: 19 calls; before: 23
    Case("bedrock-pt", "bedrock_pt", "bedrock-pt-schedule.json", bench_bedrock.seed, 12, 19 / 4),
    # 16 of 40 backed up in one batch, 2 exported and 1 deleted alone: 62 calls (the batch's gates: one
    # DescribeFileSystems and a ListTagsForResource each); before: 77, a DescribeFileSystems per gate (and 122
    # before that: a PutItem, a DescribeNetworkInterfaces and a DescribeBackups per backup)
    Case("fsx", "fsx", "fsx-schedule.json", bench_fsx.seed, 40, 62 / 19, alone=3),
    # 4 of 12 past their kill date, stopped: 25 calls (gate 8, begins 4, records 1, log and queue the rest);
    # before: 28, a PutItem per record
    Case("mlflow", "mlflow", "mlflow-schedule.json", bench_mlflow.seed, 12, 25 / 4),
    # 8 of 40 are ML volumes to snapshot (phase 1), in one batch: 19 calls (the gates' one DescribeVolumes, one
    # DescribeSnapshots, begins 8, records 1, the log and the queue the rest); before: 48, a DescribeVolumes, a
    # DescribeTags, a DescribeSnapshots and a restore PutItem per volume
    Case("storage", "storage", "storage-schedule.json", bench_storage.seed, 40, 19 / 8),
]


@dataclass
class Swept:
    dry: CallRecorder
    live: CallRecorder
    result: dict[str, Any]
    restore_puts: int  # PutItem calls of restore records (RESTORE#…), each one call of its own


def sweeps(aws: Any, case: Case, deployed_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Swept:
    """The seeded account swept in dry-run without the log and the queue (the sweep's own reads, as the bench
    counts them), then in enforce with grace 0, the log and the queue; prices from the shipped copy in both."""
    now = datetime.now(UTC)
    case.seed(aws, case.n, now)
    monkeypatch.setenv("REAPER_LIVE_PRICES", "off")
    for name in ("REAPER_TABLE", "REAPER_QUEUE_URL"):
        monkeypatch.delenv(name)
    app = load_function(case.function)
    with recording() as dry:
        handle_kind_event(event(case.schedule, id="dry"), case.kind, app.RUNTIME, now=now)
    for name in ("REAPER_TABLE", "REAPER_QUEUE_URL"):
        monkeypatch.setenv(name, deployed_env[name])
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    app = load_function(case.function)
    assert app.RUNTIME.log is not None
    ddb, puts = app.RUNTIME.log.client, []
    put = ddb.put_item

    def counted(**kwargs: Any) -> Any:  # the real write, seen on its way
        puts.append(kwargs["Item"]["pk"]["S"])
        return put(**kwargs)

    monkeypatch.setattr(ddb, "put_item", counted)
    with recording() as live:
        result = handle_kind_event(event(case.schedule, id="live"), case.kind, app.RUNTIME, now=now)
    return Swept(dry, live, result, sum(1 for pk in puts if pk.startswith("RESTORE#")))


@pytest.mark.parametrize("case", CASES, ids=[c.kind for c in CASES])
def test_restore_records_are_written_once_per_batch_not_a_put_each(aws, case, deployed_env, monkeypatch):
    # Given a seeded account of the kind, swept in dry-run, then in enforce
    swept = sweeps(aws, case, deployed_env, monkeypatch)
    acted = swept.result["acted"]
    assert len(acted) >= 4 and swept.result["verdicts"].get("error", 0) == 0, swept.result
    before, after = swept.dry.by_operation(), swept.live.by_operation()
    extra = {op: n - before.get(op, 0) for op, n in after.items() if n != before.get(op, 0)}
    price = {op: n for op, n in extra.items() if op.startswith(BOOKKEEPING) or not op.split(":")[1].startswith(CHANGES)}
    # Then no restore record of a batch is a PutItem of its own: the batch's records go in one TransactWriteItems
    assert swept.restore_puts <= case.alone, (swept.restore_puts, extra)
    # and beyond the dry run and the changes, at most the pinned figure per action: net of the log's notices (the
    # kept resources' messages, three PutItem each, which the dry run without a log does not write)
    net = sum(price.values()) - (price.get("dynamodb:PutItem", 0) - swept.restore_puts)
    assert net <= case.pinned * len(acted), (round(net / len(acted), 3), price)
    # And every one it acted on has its restore record
    log = ActionLog(aws.client("dynamodb"), TABLE)
    assert all(log.latest_restore(case.kind, rid) is not None for rid in acted), acted


def test_fsx_reads_what_its_records_need_once_per_batch(aws, deployed_env, monkeypatch):
    # Given 40 seeded file systems, of which the sweep backs up or exports a dozen
    case = next(c for c in CASES if c.kind == "fsx")
    swept = sweeps(aws, case, deployed_env, monkeypatch)
    result = swept.result
    extra = {op: n - swept.dry.by_operation().get(op, 0) for op, n in swept.live.by_operation().items()}
    # Then the security groups (on the network interfaces) and the reaper's own earlier backups are read once
    # for the batch of 16 backups, not once a file system (and once each for the 3 changes made alone: 2 exports
    # and a delete, whose backup is read again); before: 19 and 17
    assert extra["fsx:CreateBackup"] == 16 and len(result["acted"]) == 19, (extra, result)
    assert extra["ec2:DescribeNetworkInterfaces"] == 1 + case.alone, extra
    assert extra["fsx:DescribeBackups"] == 2, extra


@pytest.mark.parametrize("case", CASES, ids=[c.kind for c in CASES])
def test_a_batch_whose_restore_records_cannot_be_written_changes_nothing(aws, case, deployed_env, monkeypatch):
    # Given a seeded account, and DynamoDB refusing every write of restore records
    now = datetime.now(UTC)
    case.seed(aws, case.n, now)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    monkeypatch.setenv("REAPER_LIVE_PRICES", "off")
    app = load_function(case.function)
    assert app.RUNTIME.log is not None
    ddb = app.RUNTIME.log.client
    refused: list[int] = []
    transact, put = ddb.transact_write_items, ddb.put_item

    def no_records(**kwargs: Any) -> Any:
        if all(i["Put"]["Item"]["pk"]["S"].startswith("RESTORE#") for i in kwargs["TransactItems"] if "Put" in i):
            refused.append(len(kwargs["TransactItems"]))
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "TransactWriteItems")
        return transact(**kwargs)

    def no_record(**kwargs: Any) -> Any:
        if kwargs["Item"]["pk"]["S"].startswith("RESTORE#"):
            refused.append(1)
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "PutItem")
        return put(**kwargs)

    monkeypatch.setattr(ddb, "transact_write_items", no_records)
    monkeypatch.setattr(ddb, "put_item", no_record)
    # When the enforce sweep runs
    with recording() as calls:
        result = handle_kind_event(event(case.schedule, id="refused"), case.kind, app.RUNTIME, now=now)
    # Then the records were asked for together, and nothing that needs its record first was changed
    assert refused and max(refused) >= 3, refused
    destructive = {"ec2:CancelCapacityReservation", "bedrock:DeleteProvisionedModelThroughput", "fsx:DeleteFileSystem", "ec2:DeleteVolume"}
    assert not destructive & set(calls.by_operation()), calls.by_operation()
    if case.kind != "fsx":
        assert result["acted"] == [] and result["verdicts"]["error"] >= 3, result
        assert all("Rate exceeded" in e for e in result["errors"]), result["errors"]
    else:  # phase 1 makes the copy first (nothing is lost) and says its record is missing; the delete is refused
        assert len(result["acted"]) == 18 and result["verdicts"]["error"] == 1, result
        assert ["delete failed" in e for e in result["errors"]] == [True], result["errors"]
