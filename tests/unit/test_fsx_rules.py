"""The FSx decision, pure: every branch from the same few facts, at a fixed time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reaper.core.model import Resource, Verdict
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.fsx.model import METRICS, Artifact, FsxFacts, FsxSignal, JobRef, Protection, Repository
from reaper.kinds.fsx.rules import decide

NOW = datetime(2026, 12, 2, 12, 3, tzinfo=UTC)
END = datetime(2026, 12, 2, 11, 55, tzinfo=UTC)  # window_end for NOW at 5-minute periods
SETTINGS = Settings()
DEV = {"ml:stage": "dev", "ml:owner": "ana@example.com"}
BACKUP = Protection("backup", "full", why="PERSISTENT_2 file systems can be backed up")
EXPORT = Protection("export", "full", (Repository("/", "s3://ml-data/run", "dra-0123456789abcdef0"),), why="linked to S3 at /")
PARTIAL = Protection("export", "partial", (Repository("/out", "s3://ml-data/out", "dra-0123456789abcdef1"),), why="only /out linked to S3")
NONE = Protection("none", why="a scratch file system with no data repository: it cannot be backed up or exported")


def fs(tags=None, protection=BACKUP, state="AVAILABLE", created_days_ago=3.0, phase=None) -> Resource:
    return Resource(
        kind="fsx",
        id="fs-0123456789abcdef0",
        arn="arn:aws:fsx:us-east-1:123456789012:file-system/fs-0123456789abcdef0",
        region="us-east-1",
        state=state,
        tags=dict(DEV if tags is None else tags),
        hourly_usd=0.2384,
        created_at=NOW - timedelta(days=created_days_ago),
        facts=FsxFacts(deployment="PERSISTENT_2", capacity_gib=1200, protection=protection, phase=phase),
    )


def io(minutes=720, busy=(), gaps=(), write_at=()):
    """Series for the window ending at END: period k (0 = newest) busy, missing or zero."""
    out = {m: [] for m in METRICS}
    for k in range(minutes // 5):
        if k in gaps:
            continue
        ts = END - timedelta(minutes=5 * (k + 1))
        for m in METRICS:
            value = 0.0
            if k in busy and m != "DataWriteBytes":
                value = 1e9
            if k in write_at and m == "DataWriteBytes":
                value = 5e8
            out[m].append((ts, value))
    return out


def signal(series=None, jobs=(), artifact=None) -> FsxSignal:
    return FsxSignal(jobs=tuple(jobs), io=io() if series is None else series, period=300, window_end=END, artifact=artifact)


def run(resource: Resource, sig: FsxSignal, settings: Settings = SETTINGS):
    return decide(resource, sig, read_tags(resource.tags, settings), settings, NOW)


def test_finished_persistent_file_system_is_backed_up_first():
    # Given a dev file system with zero I/O over the 12 h window and no job
    # When it is decided
    d = run(fs(), signal())
    # Then phase 1: a backup, with the cost and size in the reason
    assert d.verdict is Verdict.ACT and d.action == "backup"
    assert "PERSISTENT_2, 1200 GiB, $174/month" in d.reason and "reaper restore fs-0123456789abcdef0" in d.reason
    assert d.skip_grace is False  # the owner is warned before phase 1


@pytest.mark.parametrize(
    ("series", "expected"),
    [
        (io(busy={30}), "in use: I/O"),
        (io(gaps={100}), "missing for 1 of 144 periods"),
        ({m: [] for m in METRICS}, "no AWS/FSx I/O data"),
        (io(minutes=600), "missing for 24 of 144 periods"),  # the series starts 10 h ago
    ],
)
def test_io_or_missing_data_keeps_it(series, expected):
    # Given I/O in one period, a gap, no data, or data for only part of the window
    d = run(fs(), signal(series))
    # Then it is kept, and the reason says which
    assert d.verdict is Verdict.KEEP and expected in d.reason


def test_a_gap_is_missing_data_kept_unknown_until_it_leaves_the_window():
    # Given zero I/O except one 5-minute period with no datapoint 8 h 25 m before the window's end (11:55)
    d = run(fs(), signal(io(gaps={100})))
    # Then it is kept as unknown (FSx emits a datapoint every minute: a gap is not idleness), with when it clears
    assert d.verdict is Verdict.KEEP and d.unknown == "fsx-metric-gap"
    assert "the gap leaves the window at 2026-12-02T15:40:00Z" in d.reason
    # And the same series, carried on with zeros to 15:35, is read a minute before that instant (window end 15:30: the
    # gap is the oldest period) and at it (window end 15:35: the gap is out, zero I/O everywhere)
    series = {m: [*points, *((END + timedelta(minutes=5 * k), 0.0) for k in range(44))] for m, points in io(gaps={100}).items()}
    view = read_tags(fs().tags, SETTINGS)
    before = decide(
        fs(), FsxSignal(io=series, period=300, window_end=END + timedelta(minutes=215)), view, SETTINGS, NOW + timedelta(minutes=215)
    )
    at = decide(
        fs(), FsxSignal(io=series, period=300, window_end=END + timedelta(minutes=220)), view, SETTINGS, NOW + timedelta(minutes=220)
    )
    assert before.unknown == "fsx-metric-gap" and "missing for 1 of 144 periods" in before.reason
    assert at.verdict is Verdict.ACT and at.unknown is None


def test_a_running_training_job_keeps_it_even_with_zero_io():
    d = run(fs(), signal(jobs=[JobRef("train-7", "InProgress", None)]))
    assert d.verdict is Verdict.KEEP and "in use by training job train-7 (InProgress)" in d.reason


def test_a_job_that_ended_within_the_window_keeps_it_and_one_before_it_does_not():
    recent = JobRef("train-1", "Completed", NOW - timedelta(hours=3))
    old = JobRef("train-0", "Failed", NOW - timedelta(hours=30))
    assert run(fs(), signal(jobs=[old, recent])).verdict is Verdict.KEEP
    d = run(fs(), signal(jobs=[old]))
    assert d.verdict is Verdict.ACT and "last training job train-0 ended 30 h" in d.reason


def test_idle_minutes_tag_shortens_the_window():
    # Given a 60-minute idle tag, a job that ended 2 h ago, and I/O 3 h ago
    resource = fs(tags={**DEV, "reaper:idle-minutes": "60"})
    d = run(resource, signal(io(busy={36}), jobs=[JobRef("t", "Completed", NOW - timedelta(hours=2))]))
    # Then the older I/O no longer counts
    assert d.verdict is Verdict.ACT and d.evidence["idle_window_minutes"] == 60


def test_out_of_scope_file_systems_are_never_touched():
    # Given no dev stage and no training job: an HPC file system
    d = run(fs(tags={"team": "hpc"}), signal())
    assert d.verdict is Verdict.KEEP and "never touched" in d.reason and "no ml:stage tag" in d.reason
    # And an untagged one a training job read is in scope
    used = run(fs(tags={}), signal(jobs=[JobRef("t", "Completed", NOW - timedelta(days=2))]))
    assert used.verdict is Verdict.ACT


def test_only_available_file_systems_are_candidates():
    d = run(fs(state="UPDATING"), signal())
    assert d.verdict is Verdict.KEEP and "UPDATING" in d.reason


def test_a_young_file_system_is_kept_until_it_is_older_than_the_window():
    d = run(fs(created_days_ago=0.1), signal())
    assert d.verdict is Verdict.KEEP and "created 2 h 24 m ago" in d.reason


def test_scratch_with_a_repository_is_exported_and_without_one_refused_with_how_to_allow():
    assert run(fs(protection=EXPORT), signal()).action == "export"
    refused = run(fs(protection=NONE), signal())
    assert refused.verdict is Verdict.KEEP and refused.notify and refused.action is None
    assert "reaper:disposable=true" in refused.reason and "gone for good" in refused.reason


def test_disposable_scratch_is_deleted_with_its_data_and_the_reason_says_so():
    d = run(fs(tags={**DEV, "reaper:disposable": "true"}, protection=NONE), signal())
    assert d.verdict is Verdict.ACT and d.action == "discard" and "GONE for good" in d.reason


def test_partly_linked_scratch_needs_the_disposable_tag_and_then_is_exported_first():
    assert run(fs(protection=PARTIAL), signal()).verdict is Verdict.KEEP
    d = run(fs(tags={**DEV, "reaper:disposable": "true"}, protection=PARTIAL), signal())
    assert d.action == "export" and "outside the linked paths" in d.reason


def backup(lifecycle="AVAILABLE", hours_ago=1.0, **kw) -> Artifact:
    return Artifact("backup", "backup-0123456789abcdef0", lifecycle=lifecycle, started_at=NOW - timedelta(hours=hours_ago), **kw)


def export(lifecycle="SUCCEEDED", hours_ago=1.0, failed=0, **kw) -> Artifact:
    start = NOW - timedelta(hours=hours_ago)
    return Artifact(
        "export",
        "task-0123456789abcdef0",
        lifecycle=lifecycle,
        started_at=start,
        ended_at=start + timedelta(minutes=20),
        failed_files=failed,
        total_files=100,
        **kw,
    )


def test_phase_two_deletes_only_once_the_backup_is_available_without_a_second_warning():
    phase = ("backup", "backup-0123456789abcdef0")
    creating = run(fs(phase=phase), signal(artifact=backup("CREATING", progress=40)))
    assert creating.verdict is Verdict.KEEP and creating.reason.startswith("in progress: backup") and "40%" in creating.reason
    done = run(fs(phase=phase), signal(artifact=backup()))
    assert done.verdict is Verdict.ACT and done.action == "delete" and done.skip_grace
    assert done.evidence["backup_id"] == "backup-0123456789abcdef0"


def test_a_failed_backup_is_an_error_said_once_and_never_a_delete():
    d = run(fs(phase=("backup", "backup-0123456789abcdef0")), signal(artifact=backup("FAILED", failure="disk")))
    assert d.verdict is Verdict.ERROR and "FAILED: disk" in d.reason and "will not retry" in d.reason
    assert d.notify_key == "failed:backup-0123456789abcdef0"


def test_a_stuck_backup_or_export_is_reported_not_waited_on_silently():
    d = run(fs(phase=("backup", "backup-0123456789abcdef0")), signal(artifact=backup("CREATING", hours_ago=30)))
    assert d.verdict is Verdict.ERROR and "still CREATING after 30 h" in d.reason
    e = run(fs(protection=EXPORT, phase=("export", "task-0123456789abcdef0")), signal(artifact=export("EXECUTING", hours_ago=25)))
    assert e.verdict is Verdict.ERROR and "still EXECUTING" in e.reason


def test_an_export_with_failed_files_is_an_error_and_a_clean_one_deletes():
    phase = ("export", "task-0123456789abcdef0")
    bad = run(fs(protection=EXPORT, phase=phase), signal(artifact=export(failed=3, report_path="s3://ml-data/run")))
    assert bad.verdict is Verdict.ERROR and "3 of 100 files failed" in bad.reason
    good = run(fs(protection=EXPORT, phase=phase), signal(artifact=export()))
    assert good.action == "delete" and good.evidence["export_task_id"] == "task-0123456789abcdef0"


def test_our_own_export_reads_are_excused_but_writes_never_are():
    phase = ("export", "task-0123456789abcdef0")
    # Given reads during our export (it ran 1 h .. 40 m ago: periods 8..12 hold it)
    reads = run(fs(protection=EXPORT, phase=phase), signal(io(busy={9, 10}), artifact=export()))
    assert reads.action == "delete"
    # But a write in the same periods is use
    writes = run(fs(protection=EXPORT, phase=phase), signal(io(busy={9}, write_at={9}), artifact=export()))
    assert writes.verdict is Verdict.KEEP and "export task task-0123456789abcdef0 is kept" in writes.reason


def test_use_between_the_phases_keeps_it_and_says_the_backup_is_kept():
    phase = ("backup", "backup-0123456789abcdef0")
    d = run(fs(phase=phase), signal(jobs=[JobRef("again", "InProgress", None)], artifact=backup()))
    assert d.verdict is Verdict.KEEP and "backup backup-0123456789abcdef0 is kept and nothing is deleted" in d.reason


def test_a_backup_older_than_the_idle_proof_is_not_trusted_a_fresh_one_is_taken():
    # Given the backup was taken 20 h ago, before use that has since stopped
    d = run(fs(phase=("backup", "backup-0123456789abcdef0")), signal(artifact=backup(hours_ago=20)))
    # Then it is backed up again rather than deleted on a stale copy
    assert d.action == "backup" and "older than the idle proof" in d.reason


def test_a_backup_someone_deleted_means_a_new_one():
    d = run(
        fs(phase=("backup", "backup-0123456789abcdef0")),
        signal(artifact=Artifact("backup", "backup-0123456789abcdef0", found=False, lifecycle="DELETED")),
    )
    assert d.action == "backup" and "no longer exists" in d.reason
