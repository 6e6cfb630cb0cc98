"""Least privilege for the restore function: what each kind's restore code declares, nothing more.

RestoreFunction's statements are Sid-named per kind (EndpointRestore…, FsxRestore…) plus the
shared ActionLog and Notify; integration tests (test_restore_endpoint, test_fsx_cli) check every
call they record against them, resource and conditions included.
"""

from __future__ import annotations

import pytest

from reaper import kinds
from reaper.sweep.iam import RESTORE_COMMON, implied, restore_function_permissions
from reaper_devkit.iam_check import Request, granted
from reaper_devkit.template import attached_policies, function_actions, function_statements, load, statement_actions

STMTS = function_statements("RestoreFunction")
BY_KIND = {
    "EndpointRestore": kinds.get("endpoint").restore_permissions(),
    "FsxRestore": kinds.get("fsx").restore_permissions(),
    "CapacityRestore": kinds.get("capacity").restore_permissions(),
    "BedrockPtRestore": kinds.get("bedrock-pt").restore_permissions(),
    "MlflowRestore": kinds.get("mlflow").restore_permissions(),
}


def _granted_by(prefix: str) -> set[str]:
    return {a for s in STMTS if s["Sid"].startswith(prefix) for a in statement_actions(s)}


def test_the_restore_function_grants_exactly_what_the_restore_code_declares():
    granted_actions = function_actions("RestoreFunction")
    declared = restore_function_permissions()
    assert granted_actions - declared == set(), f"granted but never called: {sorted(granted_actions - declared)}"
    assert declared - granted_actions == set(), f"called but not granted: {sorted(declared - granted_actions)}"


@pytest.mark.parametrize("prefix", sorted(BY_KIND))
def test_each_kinds_statements_grant_its_restore_permissions(prefix):
    assert all(s.get("Sid") for s in STMTS)
    assert _granted_by(prefix) == BY_KIND[prefix]
    assert {a for s in STMTS if s["Sid"] in ("ActionLog", "Notify") for a in statement_actions(s)} == RESTORE_COMMON


def test_what_aws_checks_implicitly_on_restore_is_declared():
    # CreateEndpoint with the recorded tags, CreateFileSystemFromBackup with the recorded tags
    assert implied(restore_function_permissions()) <= restore_function_permissions()
    assert "fsx:TagResource" in BY_KIND["FsxRestore"] and "sagemaker:AddTags" in BY_KIND["EndpointRestore"]


def test_the_new_file_system_can_be_tagged_and_made_only_from_this_accounts_backups():
    new_fs = "arn:aws:fsx:eu-west-1:123456789012:file-system/fs-new"
    backup = "arn:aws:fsx:eu-west-1:123456789012:backup/backup-0123456789abcdef0"
    assert granted(Request("fsx:CreateFileSystemFromBackup", backup), STMTS)
    assert granted(Request("fsx:CreateFileSystemFromBackup", new_fs), STMTS)
    assert granted(Request("fsx:TagResource", new_fs), STMTS)
    assert not granted(Request("fsx:CreateFileSystemFromBackup", backup.replace("123456789012", "210987654321")), STMTS)
    assert not granted(Request("fsx:TagResource", "arn:aws:fsx:eu-west-1:123456789012:volume/fsvol-1"), STMTS)


def test_restore_takes_nothing_down_and_carries_no_backstop():
    # Restores bring back; a resource tagged production since it was taken to zero must still come back.
    granted_actions = function_actions("RestoreFunction")
    assert not {a for a in granted_actions if a.split(":")[1].startswith(("Delete", "Stop")) and a.startswith(("sagemaker:", "fsx:"))}
    # no backstop: the only policy attached apart from its own is the organisation's forwarding (an Allow of PutEvents)
    attached = attached_policies("RestoreFunction")
    assert set(attached) <= {"CentralForwardPolicy"}
    assert all(a == "events:PutEvents" for doc, _ in attached.values() for s in doc["Statement"] for a in [s["Action"]])
    assert all(s["Effect"] == "Allow" for doc, _ in attached.values() for s in doc["Statement"])
    assert "iam:PassRole" not in granted_actions


def test_the_restore_function_is_marked_as_such():
    assert load()["Resources"]["RestoreFunction"]["Metadata"]["ReaperRestore"] is True
