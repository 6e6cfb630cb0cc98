"""Attacks on the capacity and FSx batch gates (kinds/capacity/actions.current_many, kinds/fsx/actions.current_many,
reaper.sweep.batch), through the real functions against moto: more members than one batch holds with members
changed by others between discovery and their batch's read (one in use, one cancelled, one exempted, a training plan
beside them), and a file system deleted after its batch's read, before its own backup (docs/safety.md, *Attacks on
this round's new surfaces*)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from reaper_devkit import seed_capacity, seed_ec2, seed_fsx
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import capacity
from tests.conftest import event, load_function

OWNER = {"ml:owner": "ana@example.com", "ml:stage": "dev"}


def active(aws: Any) -> set[str]:
    found = aws.client("ec2").describe_capacity_reservations()["CapacityReservations"]
    return {c["CapacityReservationId"] for c in found if c["State"] == "active"}


def test_two_batches_with_members_changed_by_others_cancel_exactly_the_idle_rest(aws, enforce, lambda_context, monkeypatch):
    # Given 23 idle ODCRs (two batches: 20 and 3) and an idle training plan; after the signals, someone launches
    # an instance into one, cancels another themselves and exempts a third, one in each batch's range
    ec2, cw, now = aws.client("ec2"), aws.client("cloudwatch"), datetime.now(UTC)
    ids = sorted(seed_capacity.odcr(ec2, "p4d.24xlarge", 1, OWNER, now=now) for _ in range(23))
    for cr in ids:
        seed_capacity.used(cw, cr, now)
    capacity.training_plan(
        "us-east-1",
        "plan-idle",
        instance_type="ml.p5.48xlarge",
        total=4,
        in_use=0,
        start=now - timedelta(days=2),
        end=now + timedelta(days=12),
        upfront_fee=1000,
        tags=OWNER,
    )
    used, cancelled, exempt = ids[2], ids[21], ids[22]
    from reaper.kinds.capacity import signals as capacity_signals

    real = capacity_signals.signals

    def then_changed(*args: Any, **kwargs: Any) -> Any:
        read = real(*args, **kwargs)
        capacity.place(seed_ec2.instance(ec2, "p4d.24xlarge", OWNER, now=datetime.now(UTC)), used)
        ec2.cancel_capacity_reservation(CapacityReservationId=cancelled)
        ec2.create_tags(Resources=[exempt], Tags=[{"Key": "reaper:exempt", "Value": "true"}])
        return read

    monkeypatch.setattr(capacity_signals, "signals", then_changed)
    # When the enforce sweep runs
    with recording() as calls:
        result = load_function("capacity").handler(event("capacity-schedule.json"), lambda_context)
    # Then the 20 others are cancelled; the used and the exempt stay active; the one cancelled by its owner is not
    # said as cancelled by the reaper; no error; the training plan untouched
    idle = sorted(set(ids) - {used, cancelled, exempt})
    assert sorted(result["acted"]) == idle and result["errors"] == [], result
    assert active(aws) == {used, exempt}
    assert calls.calls["ec2:CancelCapacityReservation"] == 20 + 1, calls.by_operation()  # the owner's own cancel too
    assert calls.calls["ec2:DescribeCapacityReservations"] >= 2  # each batch read again before its changes


def test_a_file_system_deleted_after_its_batchs_read_is_not_said_backed_up(aws, enforce, lambda_context, monkeypatch):
    # Given 5 idle dev file systems (one batch); the third deleted by its owner after the batch read, just before
    # its own CreateBackup
    fsx, cw, now = aws.client("fsx"), aws.client("cloudwatch"), datetime.now(UTC)
    subnet, group = seed_fsx.network(aws.client("ec2"))
    ids = []
    for k in range(5):
        fs_id = seed_fsx.file_system(fsx, subnet, group, tags={"Name": f"fs-{k}", **OWNER}, created_at=now - timedelta(days=3))
        seed_fsx.io(cw, fs_id, now)
        ids.append(fs_id)
    late = sorted(ids)[2]
    app = load_function("fsx")
    client = app.RUNTIME.clients()("fsx")
    backup = client.create_backup

    def owner_deletes_first(**kwargs: Any) -> Any:
        if kwargs.get("FileSystemId") == late:
            fsx.delete_file_system(FileSystemId=late)
        return backup(**kwargs)

    monkeypatch.setattr(client, "create_backup", owner_deletes_first)
    result = app.handler(event("fsx-schedule.json"), lambda_context)
    # Then the four others are backed up; the deleted one is not among the acted, and what is said of it is true
    assert late not in result["acted"] and sorted(result["acted"]) == sorted(i for i in ids if i != late), result
    made = {b.get("FileSystem", {}).get("FileSystemId") for b in fsx.describe_backups()["Backups"]}
    assert late not in made
    assert all("backed up" not in e for e in result["errors"] if late in e), result["errors"]
