"""The storage rule, pure: a reaper-made backup by its retention and reaper:keep; a volume's two phases; a
stopped box's volume reported; nothing priced at $0."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper.core.model import Resource, Verdict
from reaper.core.policy import read_tags
from reaper.core.price import SHIPPED, Price
from reaper.core.settings import Settings
from reaper.kinds.storage import ActionName
from reaper.kinds.storage.model import BackupFacts, OwnSnapshotFacts, SnapshotState, SpaceFacts, StorageSignal, VolumeFacts
from reaper.kinds.storage.rules import decide, kill_decision
from reaper.kinds.storage.settings import StorageSettings

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def backup(age_days: float, *, source_exists: bool = False, tags: dict[str, str] | None = None, state: str = "AVAILABLE") -> Resource:
    return Resource(
        "storage", "backup-0123abcd", "arn:aws:fsx:us-east-1:1:backup/backup-0123abcd", "us-east-1", state,
        tags={"reaper:source-fs": "fs-0123abcd", **(tags or {})}, created_at=NOW - timedelta(days=age_days),
        facts=BackupFacts("fs-0123abcd", source_exists, 1200),
    )  # fmt: skip


def volume(age_weeks: float = 6, snapshot_id: str | None = None, *, instance_id: str | None = None, state: str = "available") -> Resource:
    facts = VolumeFacts("us-east-1a", "gp3", 100, 3000, 125, snapshot_id=snapshot_id, instance_id=instance_id,
                        stopped_since=NOW - timedelta(weeks=5) if instance_id else None)  # fmt: skip
    return Resource("storage", "vol-0123abcd", "arn:aws:ec2:us-east-1:1:volume/vol-0123abcd", "us-east-1", state,
                    tags={"ml:owner": "a@x"}, created_at=NOW - timedelta(weeks=age_weeks), facts=facts)  # fmt: skip


def retention(days: int) -> Settings:
    return Settings().with_kind(StorageSettings(storage_backup_retention_days=days))


def idle_weeks(weeks: int) -> Settings:
    return Settings().with_kind(StorageSettings(storage_idle_weeks=weeks))


def judge(r: Resource, settings: Settings, signal: StorageSignal | None = None):  # type: ignore[no-untyped-def]
    return decide(r, signal, read_tags(r.tags, settings), settings, NOW)


def test_a_backup_is_kept_without_a_retention_and_deleted_past_one():
    assert judge(backup(400), Settings()).verdict is Verdict.KEEP
    d = judge(backup(31), retention(30))
    assert d.verdict is Verdict.ACT and d.action is ActionName.DELETE_BACKUP and "can no longer bring" in d.reason
    assert judge(backup(29), retention(30)).verdict is Verdict.KEEP


def test_keep_tag_living_file_system_and_unfinished_backup_keep_it():
    s = retention(1)
    for r in (backup(40, tags={"reaper:keep": "True "}), backup(40, source_exists=True), backup(40, state="CREATING")):
        assert judge(r, s).verdict is Verdict.KEEP, r


def test_a_volume_is_snapshotted_first_then_deleted_after_completion_and_the_grace():
    s = Settings(grace_minutes=60)
    assert judge(volume(2 / 7), s).verdict is Verdict.KEEP  # two days old: within StorageIdleWeeks
    first = judge(volume(), s)
    assert first.verdict is Verdict.ACT and first.action is ActionName.SNAPSHOT
    pending = StorageSignal(SnapshotState("snap-1", state="pending", started_at=NOW - timedelta(hours=3), progress="40%"))
    assert judge(volume(snapshot_id="snap-1"), s, pending).verdict is Verdict.KEEP
    young = StorageSignal(SnapshotState("snap-1", state="completed", started_at=NOW - timedelta(minutes=30)))
    assert judge(volume(snapshot_id="snap-1"), s, young).verdict is Verdict.KEEP  # the grace since the snapshot began
    done = StorageSignal(SnapshotState("snap-1", state="completed", started_at=NOW - timedelta(hours=2)))
    last = judge(volume(snapshot_id="snap-1"), s, done)
    assert last.verdict is Verdict.ACT and last.action is ActionName.DELETE_VOLUME and last.skip_grace
    failed = StorageSignal(SnapshotState("snap-1", state="error", message="boom"))
    assert judge(volume(snapshot_id="snap-1"), s, failed).verdict is Verdict.ERROR
    gone = StorageSignal(SnapshotState("snap-1", found=False, state="gone"))
    assert judge(volume(snapshot_id="snap-1"), s, gone).action is ActionName.SNAPSHOT
    assert judge(volume(snapshot_id="snap-1"), s, None).verdict is Verdict.KEEP  # not read: nothing deleted


def test_a_stopped_boxs_volume_is_reported_never_acted_on_and_priced_or_unpriced():
    r = volume(instance_id="i-0abc", state="in-use")
    d = judge(r, Settings())
    assert d.verdict is Verdict.KEEP and d.notify and "unpriced" in d.reason and "$0" not in d.reason
    assert kill_decision(r, None, read_tags({}, Settings()), Settings(), NOW, "kill date") is None
    r.set_price(Price(0.0137, SHIPPED, "2026-12-02"))
    assert "$10.00/month" in judge(r, Settings()).reason


def space(
    *,
    apps: tuple[str, ...] = (),
    recent: tuple[str, ...] = (),
    made_weeks: float = 6,
    changed_weeks: float = 6,
    size: int | None = 50,
    tags: dict[str, str] | None = None,
    state: str = "InService",
    started: datetime | None = None,
    since: datetime | None = None,
    unread: str | None = None,
) -> Resource:
    facts = SpaceFacts("d-dev", "scratch", "ana", size_gib=size, apps=apps, recent_apps=recent, last_start=started,
                       starts_since=since, starts_unread=unread)  # fmt: skip
    return Resource("storage", "d-dev/scratch", "arn:aws:sagemaker:us-east-1:1:space/d-dev/scratch", "us-east-1", state,
                    tags={"ml:owner": "a@x", **(tags or {})}, instance_type="Studio space (50 GiB of EBS storage)",
                    created_at=NOW - timedelta(weeks=made_weeks), changed_at=NOW - timedelta(weeks=changed_weeks), facts=facts)  # fmt: skip


def test_a_studio_space_is_reported_only_with_no_app_seen_and_old_dates_and_never_acted_on():
    s = Settings()
    d = judge(space(), s)
    assert d.verdict is Verdict.KEEP and d.notify and d.notify_key == "studio-space" and d.action is None
    assert "No app run seen since 2026-12-04T12:00:00Z" in d.reason and "last use is unknown" in d.reason
    assert "unpriced" in d.reason and "$0" not in d.reason and d.evidence["last_use"] is None
    assert "delete-space --domain-id d-dev --space-name scratch --region us-east-1" in d.reason
    # in use, ran in the last 24 h, made or changed within StorageIdleWeeks, not InService, production: not reported
    for r in (space(apps=("JupyterLab/default (Failed)",)), space(recent=("JupyterLab/default (Deleted)",)),
              space(made_weeks=1), space(changed_weeks=1), space(state="Updating"), space(tags={"ml:stage": "prod"})):  # fmt: skip
        assert not judge(r, s).notify, r
    assert kill_decision(space(), None, read_tags({}, s), s, NOW, "kill date") is None
    priced = space()
    priced.set_price(Price(0.0068, SHIPPED, "2026-12-02"))
    assert "$4.96/month" in judge(priced, s).reason


def test_a_space_is_judged_on_cloudtrails_app_starts_and_unknown_where_they_do_not_reach_storage_idle_weeks():
    s, kept = Settings(), NOW - timedelta(days=90)  # StorageIdleWeeks 4; CloudTrail read for its 90 days
    # an app started 7 days ago: in use, not reported
    used = judge(space(started=NOW - timedelta(days=7), since=kept), s)
    assert not used.notify and "in use: an app started in it" in used.reason and used.unknown is None
    # the last start 10 weeks ago: reported with its date, judged (no unknown code)
    old = judge(space(started=NOW - timedelta(weeks=10), since=kept), s)
    assert old.notify and old.unknown is None and "no app started in 4 weeks (CloudTrail, since 2026-11-07T12:00:00Z)" in old.reason
    assert "last app start was 2026-09-26T12:00:00Z" in old.reason and "unknown" not in old.reason
    assert old.evidence["last_start"] == "2026-09-26T12:00:00Z"
    none = judge(space(since=kept), s)
    assert none.notify and none.unknown is None and "CloudTrail records none since 2026-09-06T12:00:00Z" in none.reason
    # refused, a read that stopped 1 week back, or StorageIdleWeeks past CloudTrail's 90 days: today's rule, unknown
    for r, settings, why in (
        (space(unread="CloudTrail LookupEvents failed (AccessDeniedException)"), s, "AccessDeniedException"),
        (space(since=NOW - timedelta(weeks=1)), s, "reach back to 2026-11-28T12:00:00Z only"),
        (space(since=kept, made_weeks=20, changed_weeks=20), idle_weeks(13), "back to 2026-09-06T12:00:00Z only"),
    ):
        d = judge(r, settings)
        assert d.notify and d.unknown == "space-last-use-unknown" and "last use is unknown" in d.reason and why in d.reason, d.reason
    # a start CloudTrail still holds, under a StorageIdleWeeks past its 90 days, still proves use
    assert not judge(space(started=NOW - timedelta(weeks=12), since=kept, made_weeks=20), idle_weeks(13)).notify


def test_the_reapers_snapshot_is_said_only_when_the_log_says_no_record_names_it_and_never_acted_on():
    snap = Resource("storage", "snap-0123abcd", "arn:aws:ec2:us-east-1::snapshot/snap-0123abcd", "us-east-1", "completed",
                    tags={"ml:owner": "a@x"}, instance_type="EBS snapshot of vol-0123abcd, 100 GiB volume",
                    created_at=NOW - timedelta(days=3), facts=OwnSnapshotFacts("vol-0123abcd", 100, NOW - timedelta(days=3)))  # fmt: skip
    unrecorded, recorded, unread = (judge(snap, Settings(), StorageSignal(recorded=r)) for r in (False, True, None))
    # nothing names it: said once (its own key), unpriced never $0, the line that deletes it
    assert unrecorded.verdict is Verdict.KEEP and unrecorded.action is None and unrecorded.notify
    assert unrecorded.notify_key == "unrecorded-snapshot" and "unpriced" in unrecorded.reason and "$0" not in unrecorded.reason
    assert "aws ec2 delete-snapshot --snapshot-id snap-0123abcd --region us-east-1" in unrecorded.reason
    # its record names it, or no action log could say: kept, no message
    assert recorded.verdict is Verdict.KEEP and not recorded.notify and "restore record names it" in recorded.reason
    assert unread.verdict is Verdict.KEEP and not unread.notify and "no action log" in unread.reason
