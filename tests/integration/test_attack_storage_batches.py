"""Attacks on the storage kind's batches (kinds/storage/actions.py: snapshots and deletes 20 at a time, the records
in one write after CreateSnapshot, the volume marked only after its record), through the real storage function
against moto: a snapshot made whose record is refused and then the volume exempted; two sweeps overlapping on the
same volumes; the same event delivered twice; a volume deleted by its owner between its phases; a snapshot that
went `error` (docs/safety.md, *Attacks on this round's new surfaces*)."""

from __future__ import annotations

import json
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


def snapshot_ids(ec2: Any, vol: str) -> list[str]:
    return [s["SnapshotId"] for s in snapshots_of(ec2, vol)]


def messages(aws: Any, env: dict[str, str]) -> list[dict[str, Any]]:
    return [m for m in drain(aws, env["REAPER_QUEUE_URL"]) if m.get("kind") == "storage"]


def refuse_records(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loaded function's log throttles every restore-record write (TransactWriteItems or PutItem)."""
    ddb = app.RUNTIME.log.client
    transact, put = ddb.transact_write_items, ddb.put_item

    def no_records(**kwargs: Any) -> Any:
        if all(i["Put"]["Item"]["pk"]["S"].startswith("RESTORE#") for i in kwargs["TransactItems"] if "Put" in i):
            raise ClientError(THROTTLED, "TransactWriteItems")
        return transact(**kwargs)

    def no_record(**kwargs: Any) -> Any:
        if kwargs["Item"]["pk"]["S"].startswith("RESTORE#"):
            raise ClientError(THROTTLED, "PutItem")
        return put(**kwargs)

    monkeypatch.setattr(ddb, "transact_write_items", no_records)
    monkeypatch.setattr(ddb, "put_item", no_record)


@pytest.mark.parametrize("protect", ["exempt", "attached"])
def test_a_snapshot_left_unrecorded_then_its_volume_protected_is_left_alone_and_said(
    aws, ec2, enforce, lambda_context, monkeypatch, protect
):
    # Given 3 ML volumes whose snapshots were made and whose records were refused (each an error saying so)
    vols = volumes(ec2, 3)
    app = load_function("storage")
    refuse_records(app, monkeypatch)
    first = sweep(app, lambda_context)
    assert first["verdicts"]["error"] == 3 and all(len(snapshot_ids(ec2, v)) == 1 for v in vols), first
    orphan = snapshot_ids(ec2, vols[0])[0]
    messages(aws, enforce)
    # When its owner protects the first volume before the next sweep (reaper:exempt, or attaches it to a box)
    if protect == "exempt":
        ec2.create_tags(Resources=[vols[0]], Tags=[{"Key": "reaper:exempt", "Value": "true"}])
    else:
        box = ec2.run_instances(
            ImageId="ami-12345678", MinCount=1, MaxCount=1, InstanceType="t3.micro", Placement={"AvailabilityZone": "us-east-1a"}
        )
        ec2.attach_volume(VolumeId=vols[0], InstanceId=box["Instances"][0]["InstanceId"], Device="/dev/sdf")
    # and the next sweep comes more than a day later (within the day the snapshot may still be carried on, and the
    # first sweep's error said it: the test above)
    ebs_ext.set_snapshot(orphan, datetime.now(UTC) - timedelta(days=2))
    app = load_function("storage")
    second = sweep(app, lambda_context)
    # Then that volume is left alone (no second snapshot, no marker, never deleted), the two others carried on
    assert vols[0] not in second["acted"] and sorted(second["acted"]) == sorted(vols[1:]), second
    assert snapshot_ids(ec2, vols[0]) == [orphan] and marker(ec2, vols[0]) is None
    # and the snapshot the reaper made of it, now kept for nobody and billed, is said to someone, not left unseen
    said = [m for m in messages(aws, enforce) if orphan in str(m)]
    assert said or any(orphan in str(r) for r in records(aws, vols[0])), "the reaper's snapshot of the protected volume is said nowhere"


def test_the_error_of_an_unrecorded_snapshot_says_what_becomes_of_it_if_its_volume_is_protected(
    aws, ec2, enforce, lambda_context, monkeypatch
):
    # Given a snapshot made whose record is refused: its error is the one time the snapshot is said (the test above:
    # a volume protected before the next sweep is never read again), so it says what then stays and how to remove it
    vols = volumes(ec2, 3)
    app = load_function("storage")
    refuse_records(app, monkeypatch)
    first = sweep(app, lambda_context)
    assert first["verdicts"]["error"] == 3, first
    for vol in vols:
        [snap] = snapshot_ids(ec2, vol)
        [error] = [e for e in first["errors"] if vol in e]
        assert "exempted, snoozed or attached" in error and f"delete-snapshot --snapshot-id {snap}" in error, error


def test_two_sweeps_overlapping_on_the_same_volumes_make_one_snapshot_each(aws, ec2, enforce, lambda_context, monkeypatch):
    # Given 4 ML volumes, and a CLI-started sweep running to its end while the scheduled one is between its
    # CreateSnapshot calls and its records
    vols = volumes(ec2, 4)
    scheduled, other = load_function("storage"), load_function("storage")
    log = scheduled.RUNTIME.log
    put_restores, ran = log.put_restores, []

    def overlapped(*args: Any, **kwargs: Any) -> Any:
        if not ran:
            ran.append(sweep(other, lambda_context))
        return put_restores(*args, **kwargs)

    monkeypatch.setattr(log, "put_restores", overlapped)
    with recording() as calls:
        first = sweep(scheduled, lambda_context)
    # Then one snapshot each, marked with that one, whatever each sweep said
    assert calls.calls["ec2:CreateSnapshot"] == 4, calls.by_operation()
    for vol in vols:
        [snap] = snapshot_ids(ec2, vol)
        assert marker(ec2, vol) == snap
        assert {json.loads(r["record"]["S"])["snapshot_id"] for r in records(aws, vol)} == {snap}
    assert ran and sorted(first["acted"]) == sorted(vols), (first, ran)
    # and one message each said the snapshot (the other sweep held off by the per-resource lease: kept, not acted)
    acts = sorted(m["id"] for m in messages(aws, enforce) if m.get("verdict") == "act")
    assert acts == sorted(vols) and ran[0]["acted"] == [] and ran[0]["errors"] == [], (acts, ran)


def test_the_same_event_delivered_twice_makes_nothing_twice(aws, ec2, enforce, lambda_context):
    vols = volumes(ec2, 3)
    app = load_function("storage")
    once = sweep(app, lambda_context, "dup-1")
    messages(aws, enforce)
    with recording() as calls:
        again = sweep(load_function("storage"), lambda_context, "dup-1")
    assert sorted(once["acted"]) == sorted(vols) and calls.calls["ec2:CreateSnapshot"] == 0, (again, calls.by_operation())
    assert all(len(snapshot_ids(ec2, v)) == 1 and len(records(aws, v)) == 1 for v in vols)
    assert not [m for m in messages(aws, enforce) if m.get("verdict") == "act"]


def test_a_volume_its_owner_deletes_between_the_phases_is_not_an_error_and_its_record_stays(aws, ec2, enforce, lambda_context):
    vols = volumes(ec2, 3)
    app = load_function("storage")
    assert sorted(sweep(app, lambda_context)["acted"]) == sorted(vols)
    ebs_ext.settle_snapshots("completed")
    gone = vols[0]
    ec2.delete_volume(VolumeId=gone)
    with recording() as calls:
        result = sweep(app, lambda_context)
    assert sorted(result["acted"]) == sorted(vols[1:]) and result["errors"] == [], result
    assert calls.calls["ec2:DeleteVolume"] == 2
    record = ActionLog(aws.client("dynamodb"), TABLE).latest_restore("storage", gone)
    assert record is not None and record["snapshot_id"] == snapshot_ids(ec2, gone)[0]


def test_a_marked_snapshot_that_went_error_keeps_its_volume_and_is_said(aws, ec2, enforce, lambda_context):
    vols = volumes(ec2, 2)
    app = load_function("storage")
    assert sorted(sweep(app, lambda_context)["acted"]) == sorted(vols)
    failed = marker(ec2, vols[0])
    assert failed is not None
    ebs_ext.settle_snapshots("error", [failed])
    ebs_ext.settle_snapshots("completed")
    messages(aws, enforce)
    with recording() as calls:
        result = sweep(app, lambda_context)
    assert result["acted"] == [vols[1]] and seed_storage.volume_state(ec2, vols[0]) == "available", result
    assert calls.calls["ec2:CreateSnapshot"] == 0
    assert any(failed in str(m) for m in messages(aws, enforce))


def test_a_snapshot_left_unrecorded_past_the_carry_on_day_is_not_doubled_silently(aws, ec2, enforce, lambda_context, monkeypatch):
    # Given a volume whose snapshot was made and whose record was refused, and the volume's next action more than a
    # day later (snoozed, or the storage sweeps failing for a day): earlier_snapshots carries on only snapshots begun
    # within a day

    [vol] = volumes(ec2, 1)
    app = load_function("storage")
    refuse_records(app, monkeypatch)
    assert sweep(app, lambda_context)["verdicts"]["error"] == 1
    [first] = snapshot_ids(ec2, vol)
    ebs_ext.set_snapshot(first, datetime.now(UTC) - timedelta(days=2))
    messages(aws, enforce)
    # When the next sweep acts on it
    app = load_function("storage")
    with recording() as calls:
        result = sweep(app, lambda_context)
    # Then either the first snapshot is carried on, or a fresh one is made and the first, the reaper's and now
    # recorded nowhere, is said (never two snapshots, one of them kept for nobody, unseen)
    assert result["acted"] == [vol], result
    made = snapshot_ids(ec2, vol)
    if calls.calls["ec2:CreateSnapshot"] == 0:
        assert made == [first] and marker(ec2, vol) == first
    else:
        said = [m for m in messages(aws, enforce) if first in str(m) and "delete-snapshot" in str(m)]
        assert said and len(made) == 2 and marker(ec2, vol) in made and marker(ec2, vol) != first, f"{first} beside {made}, said nowhere"


def said_snapshot(aws: Any, env: dict[str, str], snap: str) -> list[dict[str, Any]]:
    return [m for m in messages(aws, env) if snap in str(m)]


def test_the_reaper_s_snapshots_with_their_record_or_marker_are_never_reported(aws, ec2, enforce, lambda_context):
    # Given 3 ML volumes snapshotted (recorded and marked, the volume and the snapshot) two days ago: the first then
    # deleted by phase 2, the second attached by its owner (the marked volume is not listed), the third exempted
    vols = volumes(ec2, 3)
    app = load_function("storage")
    assert sorted(sweep(app, lambda_context)["acted"]) == sorted(vols)
    snaps = {v: snapshot_ids(ec2, v)[0] for v in vols}
    ebs_ext.settle_snapshots("completed")
    for snap in snaps.values():
        ebs_ext.set_snapshot(snap, datetime.now(UTC) - timedelta(days=2))
    box = ec2.run_instances(
        ImageId="ami-12345678", MinCount=1, MaxCount=1, InstanceType="t3.micro", Placement={"AvailabilityZone": "us-east-1a"}
    )
    ec2.attach_volume(VolumeId=vols[1], InstanceId=box["Instances"][0]["InstanceId"], Device="/dev/sdf")
    ec2.create_tags(Resources=[vols[2]], Tags=[{"Key": "reaper:exempt", "Value": "true"}])
    assert sweep(app, lambda_context)["acted"] == [vols[0]]
    [own] = ec2.describe_snapshots(SnapshotIds=[snaps[vols[1]]])["Snapshots"]
    assert {t["Key"]: t["Value"] for t in own["Tags"]}["reaper:snapshot-id"] == snaps[vols[1]], own
    # the first's snapshot as one made before phase 1 marked its snapshots on themselves: only its record names it
    ec2.delete_tags(Resources=[snaps[vols[0]]], Tags=[{"Key": "reaper:snapshot-id"}])
    messages(aws, enforce)
    # When the sweeps go on
    result = sweep(load_function("storage"), lambda_context)
    # Then none of the three snapshots is reported: the first kept quietly (its record names it), the second not
    # listed (marked on itself once its record was written), the third's volume exempt
    assert result["errors"] == [] and not result["acted"], result
    assert result["verdicts"] == {"act": 0, "warn": 0, "keep": 1, "exempt": 1, "error": 0}, result
    for snap in snaps.values():
        assert not said_snapshot(aws, enforce, snap), snap


def test_a_snapshot_left_unrecorded_less_than_a_day_ago_is_not_reported_and_still_carried_on(
    aws, ec2, enforce, lambda_context, monkeypatch
):
    # Given 2 ML volumes whose snapshots were made an hour ago and whose records were refused; the first volume exempted
    vols = volumes(ec2, 2)
    app = load_function("storage")
    refuse_records(app, monkeypatch)
    assert sweep(app, lambda_context)["verdicts"]["error"] == 2
    snaps = {v: snapshot_ids(ec2, v)[0] for v in vols}
    for snap in snaps.values():
        ebs_ext.set_snapshot(snap, datetime.now(UTC) - timedelta(hours=1))
    ec2.create_tags(Resources=[vols[0]], Tags=[{"Key": "reaper:exempt", "Value": "true"}])
    messages(aws, enforce)
    # When the next sweep runs within the day
    second = sweep(load_function("storage"), lambda_context)
    # Then neither snapshot is reported (the first sweep's errors said them), and the second is carried on
    assert second["acted"] == [vols[1]] and marker(ec2, vols[1]) == snaps[vols[1]], second
    told = messages(aws, enforce)
    assert not [m for m in told if snaps[vols[0]] in str(m)], told
    assert not [m for m in told if "recorded nowhere" in str(m)], told


def test_an_unrecorded_snapshot_is_said_once_to_its_owner_unpriced_with_the_delete_line(aws, ec2, enforce, lambda_context, monkeypatch):
    # Given a volume owned by ana whose snapshot's record was refused two days ago, the volume since attached
    [vol] = volumes(ec2, 1)
    app = load_function("storage")
    refuse_records(app, monkeypatch)
    assert sweep(app, lambda_context)["verdicts"]["error"] == 1
    [snap] = snapshot_ids(ec2, vol)
    ebs_ext.set_snapshot(snap, datetime.now(UTC) - timedelta(days=2))
    box = ec2.run_instances(
        ImageId="ami-12345678", MinCount=1, MaxCount=1, InstanceType="t3.micro", Placement={"AvailabilityZone": "us-east-1a"}
    )
    ec2.attach_volume(VolumeId=vol, InstanceId=box["Instances"][0]["InstanceId"], Device="/dev/sdf")
    messages(aws, enforce)
    # When two sweeps run
    sweep(load_function("storage"), lambda_context)
    first = said_snapshot(aws, enforce, snap)
    sweep(load_function("storage"), lambda_context)
    again = said_snapshot(aws, enforce, snap)
    # Then it is said once, to the volume's owner (the tags copied on the snapshot), unpriced (never $0), with the line
    # that deletes it; the reaper deleted nothing
    assert len(first) == 1 and again == [], (first, again)
    [m] = first
    text = json.dumps(m)
    assert m["owner"] == seed_storage.ML["ml:owner"] and "unpriced" in text and "$0" not in text, m
    assert f"aws ec2 delete-snapshot --snapshot-id {snap}" in text and snapshot_ids(ec2, vol) == [snap], m
