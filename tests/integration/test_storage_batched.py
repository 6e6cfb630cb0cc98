"""The storage kind's volumes in batches, through the real storage function against moto (issue 35, item 6;
docs/kinds/storage.md, *Many at a time*): a sweep's phase-1 snapshots gated from one DescribeVolumes (the tags in
its answer, no DescribeTags), the earlier snapshots read in one DescribeSnapshots, the restore records in one
TransactWriteItems; a protective tag set after discovery still stops the change; and the refusals: a snapshot made
whose record is refused or whose volume cannot be marked is carried on by the next sweep, never made twice, never
lost, and its volume deleted only in phase 2 once the snapshot is completed."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper.record.actionlog import ActionLog
from reaper_devkit import seed_storage
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import ebs as ebs_ext
from tests.conftest import TABLE, drain, load_function
from tests.helpers.storage_volumes import THROTTLED, marker, records, snapshots_of, sweep, volumes

pytestmark = pytest.mark.usefixtures("shipped_prices")


@pytest.fixture
def refused_records(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Installs, on a loaded storage function, a log whose restore-record writes are throttled (PutItem alone,
    TransactWriteItems in a batch); every other write goes through."""

    def refuse(app: Any) -> list[int]:
        ddb = app.RUNTIME.log.client
        refused: list[int] = []
        transact, put = ddb.transact_write_items, ddb.put_item

        def no_records(**kwargs: Any) -> Any:
            if all(i["Put"]["Item"]["pk"]["S"].startswith("RESTORE#") for i in kwargs["TransactItems"] if "Put" in i):
                refused.append(len(kwargs["TransactItems"]))
                raise ClientError(THROTTLED, "TransactWriteItems")
            return transact(**kwargs)

        def no_record(**kwargs: Any) -> Any:
            if kwargs["Item"]["pk"]["S"].startswith("RESTORE#"):
                refused.append(1)
                raise ClientError(THROTTLED, "PutItem")
            return put(**kwargs)

        monkeypatch.setattr(ddb, "transact_write_items", no_records)
        monkeypatch.setattr(ddb, "put_item", no_record)
        return refused

    yield refuse


def test_a_batch_of_snapshots_is_gated_from_one_describe_volumes_and_recorded_in_one_write(aws, ec2, enforce, lambda_context):
    # Given 6 ML volumes attached to nothing for six weeks, enforce, grace 0
    vols = volumes(ec2, 6)
    app = load_function("storage")
    # When the scheduled sweep runs
    with recording() as calls:
        result = sweep(app, lambda_context)
    # Then each gets its snapshot, marked on it, and its restore record
    assert sorted(result["acted"]) == sorted(vols), result
    calls_by = calls.by_operation()
    assert calls_by["ec2:CreateSnapshot"] == 6 and calls_by["ec2:CreateTags"] == 6, calls_by
    log = ActionLog(aws.client("dynamodb"), TABLE)
    for vol in vols:
        [snap] = snapshots_of(ec2, vol)
        assert marker(ec2, vol) == snap["SnapshotId"] and len(records(aws, vol)) == 1
        record = log.latest_restore("storage", vol)
        assert record is not None and record["snapshot_id"] == snap["SnapshotId"] and record["status"] == "snapshotting"
    # and the batch's gates read the volumes once, tags included (no DescribeTags), its earlier snapshots once
    # (before: a DescribeVolumes and a DescribeTags a gate, a DescribeSnapshots and a restore PutItem a volume)
    assert "ec2:DescribeTags" not in calls_by, calls_by
    assert calls_by["ec2:DescribeVolumes"] <= 3, calls_by  # discovery's listing, the stopped boxes' volumes, the gates' one read
    # (and discovery's one listing of the reaper's own snapshots, a call a region: kinds/storage/discover.own_snapshots)
    assert calls_by["ec2:DescribeSnapshots"] == 1 + 1, calls_by
    assert calls_by["dynamodb:PutItem"] < 6, calls_by  # no restore record its own PutItem (the log's own writes aside)


@pytest.mark.parametrize("n", [2, 5], ids=["alone", "batched"])
def test_exempt_set_between_discovery_and_the_snapshot_stops_it(aws, ec2, enforce, lambda_context, monkeypatch, n):
    # Given n ML volumes the sweep snapshots at once (2: each alone; 5: one batch), and one tagged reaper:exempt
    # after its signals were read, the last step before the changes
    from reaper.kinds.storage import signals

    vols = volumes(ec2, n)
    late = vols[0]
    real = signals.signals

    def then_exempt(*args: Any) -> Any:
        read = real(*args)
        ec2.create_tags(Resources=[late], Tags=[{"Key": "reaper:exempt", "Value": "true"}])
        return read

    monkeypatch.setattr(signals, "signals", then_exempt)
    app = load_function("storage")
    # When the sweep runs
    result = sweep(app, lambda_context)
    # Then the late-tagged volume has no snapshot and no marker, and is reported exempt; the others were snapshotted
    assert snapshots_of(ec2, late) == [] and marker(ec2, late) is None
    assert result["verdicts"]["exempt"] == 1 and sorted(result["acted"]) == sorted(vols[1:]), result
    executed = [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("id") == late and m.get("executed")]
    assert executed == []


@pytest.mark.parametrize("n", [1, 4], ids=["alone", "batched"])
def test_a_snapshot_whose_record_is_throttled_is_carried_on_next_sweep_never_made_twice(
    aws, ec2, enforce, lambda_context, refused_records, n
):
    # Given n ML volumes, and the action log throttling every restore record write on the first sweep
    vols = volumes(ec2, n)
    app = load_function("storage")
    refused = refused_records(app)
    # When the first sweep runs: the snapshots are made, their records refused
    with recording() as calls:
        first = sweep(app, lambda_context)
    assert refused and max(refused) == n, refused
    assert calls.calls["ec2:CreateSnapshot"] == n and calls.calls["ec2:DeleteVolume"] == 0
    # Then each is an error that says its snapshot exists, nothing is marked on the volume and nothing recorded
    assert first["acted"] == [] and first["verdicts"]["error"] == n, first
    assert all("exists" in e and "Rate exceeded" in e and "carries it on" in e for e in first["errors"]), first["errors"]
    made = {vol: [s["SnapshotId"] for s in snapshots_of(ec2, vol)] for vol in vols}
    assert all(len(ids) == 1 for ids in made.values()) and all(marker(ec2, v) is None and records(aws, v) == [] for v in vols)
    # When the next sweep runs, the log writing again
    app = load_function("storage")
    with recording() as calls:
        second = sweep(app, lambda_context)
    # Then each snapshot is carried on (found by its tags), not made again: marked, recorded once
    assert sorted(second["acted"]) == sorted(vols) and calls.calls["ec2:CreateSnapshot"] == 0, (second, calls.by_operation())
    for vol in vols:
        assert [s["SnapshotId"] for s in snapshots_of(ec2, vol)] == made[vol] and marker(ec2, vol) == made[vol][0]
        assert len(records(aws, vol)) == 1
    # When a sweep runs while the snapshots are pending: nothing is deleted
    assert sweep(app, lambda_context)["acted"] == [] and all(seed_storage.volume_state(ec2, v) == "available" for v in vols)
    # When they complete: phase 2 deletes each volume, its record naming the one snapshot
    ebs_ext.settle_snapshots("completed", [i for ids in made.values() for i in ids])
    with recording() as calls:
        third = sweep(app, lambda_context)
    assert sorted(third["acted"]) == sorted(vols) and calls.calls["ec2:DeleteVolume"] == n and calls.calls["ec2:CreateSnapshot"] == 0
    log = ActionLog(aws.client("dynamodb"), TABLE)
    for vol in vols:
        assert seed_storage.volume_state(ec2, vol) is None and len(snapshots_of(ec2, vol)) == 1
        record = log.latest_restore("storage", vol)
        assert record is not None and record["status"] == "deleted" and record["snapshot_id"] == made[vol][0]


def test_a_snapshot_whose_volume_cannot_be_marked_is_carried_on_next_sweep(aws, ec2, enforce, lambda_context, monkeypatch):
    # Given 4 ML volumes, and EC2 throttling the marker (CreateTags of reaper:snapshot-id) on one of them
    vols = volumes(ec2, 4)
    app = load_function("storage")
    unmarked = vols[2]
    client = app.RUNTIME.clients()("ec2")
    tag = client.create_tags

    def throttled(**kwargs: Any) -> Any:
        if unmarked in kwargs["Resources"] and any(t["Key"] == "reaper:snapshot-id" for t in kwargs["Tags"]):
            raise ClientError({"Error": {"Code": "RequestLimitExceeded", "Message": "Request limit exceeded."}}, "CreateTags")
        return tag(**kwargs)

    monkeypatch.setattr(client, "create_tags", throttled)
    # When the sweep runs
    first = sweep(app, lambda_context)
    # Then the 3 others are done; the unmarked one is an error saying its snapshot exists and is recorded
    assert sorted(first["acted"]) == sorted(v for v in vols if v != unmarked), first
    [error] = first["errors"]
    assert unmarked in error and "exists" in error and "not marked" in error, error
    [snap] = snapshots_of(ec2, unmarked)
    assert marker(ec2, unmarked) is None and len(records(aws, unmarked)) == 1
    # When the next sweep runs with EC2 answering: carried on, marked, no second snapshot
    monkeypatch.setattr(client, "create_tags", tag)
    with recording() as calls:
        second = sweep(app, lambda_context)
    assert second["acted"] == [unmarked] and calls.calls["ec2:CreateSnapshot"] == 0, second
    assert [s["SnapshotId"] for s in snapshots_of(ec2, unmarked)] == [snap["SnapshotId"]] and marker(ec2, unmarked) == snap["SnapshotId"]


def test_a_batch_of_deletes_rereads_the_snapshots_and_deletes_none_whose_snapshot_is_no_longer_completed(
    aws, ec2, enforce, lambda_context, monkeypatch
):
    # Given 4 volumes in phase 2 (snapshots completed), and one snapshot put in `error` after the signals read it
    from reaper.kinds.storage import signals

    vols = volumes(ec2, 4)
    app = load_function("storage")
    assert sorted(sweep(app, lambda_context)["acted"]) == sorted(vols)
    snaps = {vol: snapshots_of(ec2, vol)[0]["SnapshotId"] for vol in vols}
    ebs_ext.settle_snapshots("completed", list(snaps.values()))
    late = vols[1]
    real = signals.signals

    def then_failed(*args: Any) -> Any:
        read = real(*args)
        ebs_ext.settle_snapshots("error", [snaps[late]])
        return read

    monkeypatch.setattr(signals, "signals", then_failed)
    # When the next sweep runs
    with recording() as calls:
        result = sweep(app, lambda_context)
    # Then the three others are deleted, their snapshots re-read in one call and their records in one write; the
    # one whose snapshot failed is refused and kept
    assert sorted(result["acted"]) == sorted(v for v in vols if v != late), result
    [error] = result["errors"]
    assert late in error and "not completed: nothing deleted" in error, error
    assert seed_storage.volume_state(ec2, late) == "available"
    assert calls.calls["ec2:DeleteVolume"] == 3 and calls.calls["ec2:DescribeSnapshots"] == 1 + 1, calls.by_operation()
    log = ActionLog(aws.client("dynamodb"), TABLE)
    for vol in vols:
        record = log.latest_restore("storage", vol)
        assert record is not None and record["status"] == ("snapshotting" if vol == late else "deleted"), (vol, record)


@pytest.mark.parametrize("n", [1, 4], ids=["alone", "batched"])
def test_the_earlier_snapshot_read_throttled_makes_nothing_and_the_next_sweep_makes_one_each(
    aws, ec2, enforce, lambda_context, monkeypatch, n
):
    # Given n ML volumes, and EC2 throttling the batch's one read of earlier snapshots (DescribeSnapshots filtered by
    # the reaper's source-volume tag) on the first sweep, past botocore's retries; every other call answered
    vols = volumes(ec2, n)
    app = load_function("storage")
    client = app.RUNTIME.clients()("ec2")
    real = client.describe_snapshots
    refused: list[list[str]] = []

    def throttled(**kwargs: Any) -> Any:
        if any(f["Name"] == "tag:reaper:source-volume" for f in kwargs.get("Filters", [])):
            refused.append(next(f["Values"] for f in kwargs["Filters"] if f["Name"] == "volume-id"))
            raise ClientError(THROTTLED, "DescribeSnapshots")
        return real(**kwargs)

    monkeypatch.setattr(client, "describe_snapshots", throttled)
    # When the first sweep runs
    with recording() as calls:
        first = sweep(app, lambda_context)
    # Then the read was asked once for the batch, and nothing was made (a snapshot an earlier sweep began might exist)
    assert [sorted(v) for v in refused] == [sorted(vols)], refused
    assert calls.calls["ec2:CreateSnapshot"] == 0 and calls.calls["ec2:CreateTags"] == 0, calls.by_operation()
    assert all(snapshots_of(ec2, v) == [] and marker(ec2, v) is None and records(aws, v) == [] for v in vols)
    # and each volume is an error, said once: once in the sweep's errors, one message each, naming the throttle
    assert first["acted"] == [] and first["verdicts"]["error"] == n, first
    for vol in vols:
        assert sum(vol in e for e in first["errors"]) == 1 and any("Rate exceeded" in e for e in first["errors"] if vol in e), first
    said = [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("verdict") == "error"]
    assert sorted(m["id"] for m in said) == sorted(vols), said
    # When the next sweep runs with EC2 answering
    monkeypatch.setattr(client, "describe_snapshots", real)
    with recording() as calls:
        second = sweep(app, lambda_context)
    # Then each volume gets exactly one snapshot, marked on it and recorded once
    assert sorted(second["acted"]) == sorted(vols) and calls.calls["ec2:CreateSnapshot"] == n, (second, calls.by_operation())
    for vol in vols:
        [snap] = snapshots_of(ec2, vol)
        assert marker(ec2, vol) == snap["SnapshotId"] and len(records(aws, vol)) == 1


def test_the_earlier_snapshot_read_stays_within_ec2s_200_filter_values_a_call(aws, ec2):
    # Given 150 volumes to read earlier snapshots for (more than a sweep's batch ever holds: the chunking itself),
    # three of them with a snapshot an earlier sweep began and could not mark (tagged with its source volume)
    from reaper.aws.clients import Clients
    from reaper.core.settings import Settings
    from reaper.kinds.base import ActContext
    from reaper.kinds.storage.actions import earlier_snapshots

    made = datetime.now(UTC) - timedelta(weeks=6)
    real = [seed_storage.volume(ec2, made, tags=seed_storage.ML) for _ in range(3)]
    began = {
        vol: ec2.create_snapshot(
            VolumeId=vol, TagSpecifications=[{"ResourceType": "snapshot", "Tags": [{"Key": "reaper:source-volume", "Value": vol}]}]
        )["SnapshotId"]
        for vol in real
    }
    ids = [f"vol-{i:017x}" for i in range(1, 148)] + real
    ctx = ActContext(clients=Clients("us-east-1", aws), settings=Settings(), now=datetime.now(UTC), log=None, event_id="chunks")
    # When they are read (EC2, as the kit answers it, refuses a call with more than 200 filter values: FilterLimitExceeded)
    with recording() as calls:
        found = earlier_snapshots(ctx, ids)
    # Then each call held at most 200 values, and the three snapshots were found, by their volumes
    sizes = [sum(len(f["Values"]) for f in p["Filters"]) for op, p in calls.made if op == "DescribeSnapshots"]
    assert sizes == [200, 104], sizes
    assert {vol: s["SnapshotId"] for vol, s in found.items()} == began


@pytest.mark.parametrize("method", ["describe_snapshots", "describe_volumes"])
def test_the_kit_refuses_more_than_200_filter_values_in_one_call_as_ec2_does(aws, ec2, method):
    # Given 200 filter values across two filters: EC2 takes them; one more and it refuses the call
    ids = [f"vol-{i:017x}" for i in range(1, 101)]
    call = getattr(ec2, method)
    assert call(Filters=[{"Name": "volume-id", "Values": ids}, {"Name": "tag:reaper:source-volume", "Values": ids}]) is not None
    with pytest.raises(ClientError, match="FilterLimitExceeded.*200"):
        call(Filters=[{"Name": "volume-id", "Values": ids}, {"Name": "tag:reaper:source-volume", "Values": [*ids, "vol-x"]}])
