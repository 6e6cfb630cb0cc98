"""The FSx kind's small pure parts: protection by deployment type, phase tags, job inputs, periods."""

from __future__ import annotations

from datetime import UTC, datetime

from reaper.kinds.fsx.jobs import lustre_inputs
from reaper.kinds.fsx.model import phase_of, protection
from reaper.kinds.fsx.rules import judge
from reaper.kinds.fsx.signals import period_for, window_end


def dra(path: str, lifecycle: str = "AVAILABLE", s3: str = "s3://b/p") -> dict:
    return {"AssociationId": "dra-0123456789abcdef0", "FileSystemPath": path, "DataRepositoryPath": s3, "Lifecycle": lifecycle}


def test_persistent_is_backed_up_only_when_not_linked_to_a_data_repository():
    # AWS refuses CreateBackup on a Lustre file system linked to a data repository (API_CreateBackup)
    assert protection("PERSISTENT_2", {}, []).method == "backup"
    by_dra = protection("PERSISTENT_2", {}, [dra("/")])
    assert (by_dra.method, by_dra.coverage) == ("export", "full")
    assert protection("PERSISTENT_2", {}, [dra("/out")]).coverage == "partial"
    assert protection("PERSISTENT_2", {}, [dra("/", "MISCONFIGURED")]).method == "none"
    linked = protection("PERSISTENT_1", {"DataRepositoryConfiguration": {"Lifecycle": "AVAILABLE", "ExportPath": "s3://b/x"}}, [])
    assert (linked.method, linked.coverage, linked.report_path) == ("export", "full", "s3://b/x")


def test_scratch_is_exported_when_linked_partial_when_only_a_subdirectory_is_and_else_nothing():
    assert protection("SCRATCH_2", {}, [dra("/")]).coverage == "full"
    partial = protection("SCRATCH_2", {}, [dra("/out")])
    assert partial.method == "export" and partial.coverage == "partial" and "/out" in partial.why
    none = protection("SCRATCH_2", {}, [])
    assert none.method == "none" and "no data repository" in none.why


def test_a_link_that_is_not_available_is_no_protection():
    assert protection("SCRATCH_2", {}, [dra("/", "MISCONFIGURED")]).method == "none"
    misconfigured = {"DataRepositoryConfiguration": {"Lifecycle": "MISCONFIGURED", "ExportPath": "s3://b/x"}}
    assert protection("SCRATCH_1", misconfigured, []).method == "none"


def test_phase_tags_are_read_case_insensitively_with_the_prefix():
    assert phase_of({"Reaper:Backup-Id": " backup-0123456789abcdef0 "}, "reaper:") == ("backup", "backup-0123456789abcdef0")
    assert phase_of({"acme:export-task": "task-0123456789abcdef0"}, "acme:") == ("export", "task-0123456789abcdef0")
    assert phase_of({"ml:stage": "dev"}, "reaper:") is None


def test_only_lustre_file_system_inputs_count():
    config = [
        {
            "ChannelName": "a",
            "DataSource": {"FileSystemDataSource": {"FileSystemId": "fs-0123456789abcdef0", "FileSystemType": "FSxLustre"}},
        },
        {"ChannelName": "b", "DataSource": {"FileSystemDataSource": {"FileSystemId": "fs-0aaaaaaaaaaaaaaaa", "FileSystemType": "EFS"}}},
        {"ChannelName": "c", "DataSource": {"S3DataSource": {"S3Uri": "s3://b/"}}},
        {
            "ChannelName": "d",
            "DataSource": {"FileSystemDataSource": {"FileSystemId": "fs-0123456789abcdef0", "FileSystemType": "FSxLustre"}},
        },
    ]
    assert lustre_inputs(config) == ("fs-0123456789abcdef0",)
    assert lustre_inputs(None) == ()


def test_periods_grow_with_the_window_and_the_window_ends_before_the_newest_minutes():
    assert period_for(720) == 300 and period_for(1440) == 300 and period_for(10080) == 2100
    assert window_end(datetime(2026, 12, 2, 12, 3, tzinfo=UTC), 300) == datetime(2026, 12, 2, 11, 55, tzinfo=UTC)
    assert window_end(datetime(2026, 12, 2, 12, 7, tzinfo=UTC), 300) == datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def test_judge_counts_a_period_missing_on_any_metric():
    end = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    full = [(datetime(2026, 12, 2, 11, 55 - 5 * k, tzinfo=UTC), 0.0) for k in range(6)]
    finding = judge({"DataReadBytes": full, "DataWriteBytes": full, "MetadataOperations": full[:-1]}, end, 30, 300)
    assert finding.periods == 6 and finding.missing == 1 and not finding.idle
    assert judge({"DataReadBytes": full, "DataWriteBytes": full, "MetadataOperations": full}, end, 30, 300).idle
