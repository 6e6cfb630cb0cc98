"""Issue 33, item 4: a sweep that dies or is throttled between CreateBackup and the marker it writes
on the file system (`reaper:backup-id`) leaves no second backup behind, and no "backup failed" for a
backup that exists. The next sweep finds the backup by the tags it was created with and carries on
with it; the file system is deleted once that backup is AVAILABLE. Through the FSx function's real
handler against moto, the fault injected at each step between CreateBackup and the marker.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper.record.actionlog import ActionLog
from reaper_devkit import seed_fsx as sf
from reaper_devkit.moto_ext import fsx as fsx_ext
from tests.conftest import drain, load_function
from tests.helpers.fsx_fleet import by_name, one_persistent, sweep

MARKER = "reaper:backup-id"


class Killed(BaseException):
    """What a Lambda timeout looks like from inside: nothing after it runs."""


def throttled(operation: str) -> ClientError:
    return ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, operation)


def is_marker(kwargs: dict[str, Any]) -> bool:
    return any(t["Key"] == MARKER for t in kwargs.get("Tags", []))


def install(monkeypatch: pytest.MonkeyPatch, client: Any, step: str, armed: list[bool]) -> None:
    """The fault at `step`, while `armed[0]`: a kill (BaseException) or a throttle past botocore's retries."""
    create, tag = client.create_backup, client.tag_resource
    put_restore = ActionLog.put_restore

    def create_then_die(**kwargs: Any) -> Any:
        made = create(**kwargs)
        if armed[0]:
            raise Killed()
        return made

    def at_marker(**kwargs: Any) -> Any:
        if armed[0] and is_marker(kwargs):
            if step == "throttle-marker":
                raise throttled("TagResource")
            if step == "kill-before-marker":
                raise Killed()
        made = tag(**kwargs)
        if armed[0] and is_marker(kwargs) and step == "kill-after-marker":
            raise Killed()
        return made

    def record_throttled(self: ActionLog, *args: Any, **kwargs: Any) -> Any:
        if armed[0]:
            raise throttled("PutItem")
        return put_restore(self, *args, **kwargs)

    if step == "kill-after-create":
        monkeypatch.setattr(client, "create_backup", create_then_die)
    elif step == "throttle-record":
        monkeypatch.setattr(ActionLog, "put_restore", record_throttled)
    else:
        monkeypatch.setattr(client, "tag_resource", at_marker)


KILLS = ("kill-after-create", "kill-before-marker", "kill-after-marker")
STEPS = (*KILLS, "throttle-marker", "throttle-record")


@pytest.mark.parametrize("step", STEPS)
def test_a_kill_or_throttle_between_create_backup_and_its_marker_leaves_one_backup_carried_on_to_the_delete(
    aws, enforce, monkeypatch, step
):
    # Given an idle persistent file system, enforce, no grace, and a fault at `step` in the first sweep
    now = datetime.now(UTC)
    fs_id = one_persistent(aws, now)
    fsx = aws.client("fsx")
    app = load_function("fsx")
    armed = [True]
    install(monkeypatch, app.RUNTIME.clients()("fsx"), step, armed)
    # When the first sweep backs it up and the fault strikes
    if step in KILLS:
        with pytest.raises(Killed):
            sweep(app, now, "s1")
    else:
        first = sweep(app, now, "s1")
        # Then a throttle after the backup exists is no failure: the backup was made, and said so
        assert first["acted"] == [fs_id] and first["errors"] == [], first
    assert len(fsx.describe_backups()["Backups"]) == 1
    # When the next sweeps run with the fault gone
    armed[0] = False
    second = sweep(app, now + timedelta(minutes=20), "s2")
    backups = fsx.describe_backups()["Backups"]
    # Then there is still one backup, and the file system carries its id
    assert len(backups) == 1, backups
    assert by_name(fsx)[fs_id]["tags"][MARKER] == backups[0]["BackupId"] and second["errors"] == []
    # and once it is AVAILABLE the file system is deleted, from that backup
    fsx_ext.settle_backups()
    third = sweep(app, now + timedelta(minutes=40), "s3")
    assert third["acted"] == [fs_id] and fs_id not in by_name(fsx) and len(fsx.describe_backups()["Backups"]) == 1
    # and no message says a backup failed, or is an error
    messages = drain(aws, enforce["REAPER_QUEUE_URL"])
    assert [m for m in messages if m["verdict"] == "error" or "failed" in m["reason"]] == [], messages
    assert [m["past"] for m in messages if m["executed"]][-1] == "deleted"


def test_the_backup_carried_on_is_said_as_carried_on(aws, enforce, monkeypatch):
    # Given a sweep killed right after CreateBackup answered
    now = datetime.now(UTC)
    fs_id = one_persistent(aws, now)
    app = load_function("fsx")
    armed = [True]
    install(monkeypatch, app.RUNTIME.clients()("fsx"), "kill-after-create", armed)
    with pytest.raises(Killed):
        sweep(app, now, "s1")
    made = aws.client("fsx").describe_backups()["Backups"][0]["BackupId"]
    armed[0] = False
    drain(aws, enforce["REAPER_QUEUE_URL"])
    # When the next sweep runs
    sweep(app, now + timedelta(minutes=20), "s2")
    # Then its own message (beside the killed sweep's, posted late) names the same backup, carried on
    acted = [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m["id"] == fs_id and m["executed"] and not m["unconfirmed"]]
    # (the killed sweep's own change is reconciled by this sweep from the backup's state and posted late, once)
    late = [m for m in acted if "posted late" in said(m)]
    own = [m for m in acted if "posted late" not in said(m)]
    assert len(late) == 1 and len(own) == 1, acted
    assert f"backup {made}, which an earlier sweep began and could not record, carried on" in said(own[0])


def said(message: dict[str, Any]) -> str:
    return f"{message['reason']} {message['detail']}"


def test_an_unmarked_backup_that_failed_is_said_and_a_new_one_is_taken(aws, enforce, monkeypatch):
    # Given a sweep killed right after CreateBackup answered, and that backup then FAILED
    now = datetime.now(UTC)
    fs_id = one_persistent(aws, now)
    fsx = aws.client("fsx")
    app = load_function("fsx")
    armed = [True]
    install(monkeypatch, app.RUNTIME.clients()("fsx"), "kill-after-create", armed)
    with pytest.raises(Killed):
        sweep(app, now, "s1")
    failed = fsx.describe_backups()["Backups"][0]["BackupId"]
    fsx_ext.settle_backups("FAILED", message="internal error")
    armed[0] = False
    drain(aws, enforce["REAPER_QUEUE_URL"])
    # When the next sweep runs
    sweep(app, now + timedelta(minutes=20), "s2")
    # Then a new backup is taken and marked, and the message says the failed one was not used
    marked = by_name(fsx)[fs_id]["tags"][MARKER]
    assert marked != failed and len(fsx.describe_backups()["Backups"]) == 2
    acted = [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m["id"] == fs_id and m["executed"] and not m["unconfirmed"]]
    assert len(acted) == 1 and f"earlier backup {failed} is FAILED: internal error, so not used" in said(acted[0]), acted


def test_past_its_kill_date_and_in_use_a_killed_backup_is_carried_on_too(aws, enforce, monkeypatch):
    # Given a file system in use (I/O 30 minutes ago) but past its kill date: no idle proof, so the
    # backup carried on is one begun within FsxStuckHours
    now = datetime.now(UTC)
    subnet, group = sf.network(aws.client("ec2"))
    fsx = aws.client("fsx")
    tags = {**sf.DEV, "reaper:kill-after": (now - timedelta(days=1)).strftime("%Y-%m-%d")}
    fs_id = sf.file_system(fsx, subnet, group, tags=tags, created_at=now - timedelta(days=2))
    sf.io(aws.client("cloudwatch"), fs_id, now + timedelta(hours=3), minutes=16 * 60, busy_minutes_ago=(210,))
    app = load_function("fsx")
    armed = [True]
    install(monkeypatch, app.RUNTIME.clients()("fsx"), "kill-after-create", armed)
    # When the sweep that backs it up dies right after CreateBackup, and the next one runs
    with pytest.raises(Killed):
        sweep(app, now, "s1")
    armed[0] = False
    second = sweep(app, now + timedelta(minutes=20), "s2")
    # Then there is one backup, carried on and marked
    backups = fsx.describe_backups()["Backups"]
    assert len(backups) == 1 and by_name(fsx)[fs_id]["tags"][MARKER] == backups[0]["BackupId"], (second, backups)
    acted = [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m["id"] == fs_id and m["executed"] and not m["unconfirmed"]]
    # (beside the killed sweep's own change, reconciled from the backup's state and posted late, once)
    own = [m for m in acted if "posted late" not in said(m)]
    assert len(acted) == 2 and len(own) == 1, acted
    assert "past its kill date" in own[0]["reason"] and "carried on" in own[0]["detail"], own
