"""Least privilege: each function's role in template.yaml grants exactly what its code declares.

Integration tests complete the check from the other side: every call they record is granted.
"""

from __future__ import annotations

import pytest

from reaper import kinds
from reaper.iam import COMMON, iam_action, sweep_function_permissions
from reaper_devkit.template import function_actions, load, sweep_functions

FUNCTIONS = {k: v for k, v in load()["Resources"].items() if v["Type"] == "AWS::Serverless::Function"}


@pytest.mark.parametrize("kind", sorted(kinds.REGISTRY))
def test_each_kind_has_a_function_whose_role_is_exactly_its_declared_permissions(kind):
    functions = sweep_functions()
    assert kind in functions, f"no function in template.yaml has Metadata ReaperKind: {kind}"
    granted = function_actions(functions[kind])
    declared = sweep_function_permissions(kind)
    assert granted - declared == set(), f"granted but never called: {sorted(granted - declared)}"
    assert declared - granted == set(), f"called but not granted: {sorted(declared - granted)}"


@pytest.mark.parametrize("kind", sorted(kinds.REGISTRY))
def test_every_action_declares_permissions_and_origin_states(kind):
    for action in kinds.REGISTRY[kind].actions.values():
        assert action.permissions, f"{kind}.{action.name} declares no IAM permissions"
        assert action.valid_origin_states, f"{kind}.{action.name} declares no valid origin states"


def test_notifier_reads_its_secret_and_writes_only_its_post_claims():
    from reaper import notifier

    assert function_actions("NotifierFunction") == set(notifier.PERMISSIONS)


def test_no_function_uses_managed_or_wildcard_policies():
    for name, fn in FUNCTIONS.items():
        for policy in fn["Properties"].get("Policies", []):
            assert isinstance(policy, dict) and "Statement" in policy, f"{name}: only inline statements, got {policy!r}"
            for stmt in policy["Statement"]:
                actions = stmt["Action"] if isinstance(stmt["Action"], list) else [stmt["Action"]]
                assert not any("*" in a for a in actions), f"{name}: wildcard action in {actions}"


def test_every_function_is_accounted_for():
    known = set(sweep_functions().values()) | {"NotifierFunction"}
    known |= {n for n, f in FUNCTIONS.items() if f.get("Metadata", {}).get("ReaperRestore")}
    assert set(FUNCTIONS) == known


def test_iam_names_for_calls_whose_service_names_differ():
    assert iam_action("resourcegroupstaggingapi", "GetResources") == "tag:GetResources"
    assert iam_action("sqs", "SendMessageBatch") == "sqs:SendMessage"
    assert "sqs:SendMessage" in COMMON and "dynamodb:PutItem" in COMMON
