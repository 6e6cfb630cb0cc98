"""Least privilege for the endpoint and restore functions, beyond the generic per-kind check.

RestoreFunction's statements are Sid-named per kind (EndpointRestore…, Fsx…): the endpoint ones
must grant exactly what the endpoint restore code declares, and the shared ones exactly COMMON.
"""

from __future__ import annotations

from typing import Any

import pytest

from reaper import kinds
from reaper.sweep.iam import RESTORE_COMMON
from reaper_devkit.template import function_actions, load

SHARED_SIDS = {"ActionLog", "Notify"}


def statements(logical_id: str) -> list[dict[str, Any]]:
    props = load()["Resources"][logical_id]["Properties"]
    return [s for p in props.get("Policies", []) for s in p.get("Statement", [])]


def actions(stmts: list[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for s in stmts:
        out |= {s["Action"]} if isinstance(s["Action"], str) else set(s["Action"])
    return out


def test_restore_function_grants_exactly_what_the_endpoint_restore_declares():
    # Given the restore function's statements
    stmts = statements("RestoreFunction")
    # Then every statement is named, the endpoint ones grant the declared set and the shared ones COMMON
    assert all(s.get("Sid") for s in stmts)
    endpoint = [s for s in stmts if s["Sid"].startswith("EndpointRestore")]
    assert actions(endpoint) == kinds.get("endpoint").restore_permissions()
    assert actions([s for s in stmts if s["Sid"] in SHARED_SIDS]) == RESTORE_COMMON
    assert load()["Resources"]["RestoreFunction"]["Metadata"]["ReaperRestore"] is True


def test_restore_function_may_not_delete_or_reap():
    granted = function_actions("RestoreFunction")
    allowed = ("application-autoscaling:DeleteScalingPolicy", "cloudwatch:DeleteAlarms", "scheduler:DeleteSchedule")
    assert not {a for a in granted if ":Delete" in a and a not in allowed}
    assert "sagemaker:DeleteEndpoint" not in granted


@pytest.mark.parametrize("function", ["RestoreFunction", "EndpointFunction"])
def test_a_closed_restore_deletes_only_the_reapers_wake_schedules(function):
    # the wake of a restore record that closes (restored, cancelled) is deleted: nothing else in Scheduler
    deleting = [s for s in statements(function) if "scheduler:DeleteSchedule" in actions([s])]
    assert len(deleting) == 1
    assert deleting[0]["Resource"]["Sub"].endswith(":schedule/${RestoreScheduleGroup}/*")


def test_restore_function_does_not_wait_for_endpoints():
    env = load()["Resources"]["RestoreFunction"]["Properties"]["Environment"]["Variables"]
    assert env["REAPER_RESTORE_WAIT_MINUTES"] == "0"


def test_endpoint_function_passes_only_the_scheduler_roles_to_scheduler_only():
    # the restore role (wake-ups) and the sweeps' continuation role (test_iam checks that one)
    stmts = statements("EndpointFunction")
    passing = [s for s in stmts if "iam:PassRole" in actions([s])]
    assert len(passing) == 2 and actions(passing) == {"iam:PassRole"}
    assert sorted(p["Resource"]["GetAtt"] for p in passing) == ["RestoreSchedulerRole.Arn", "SweepContinuationRole.Arn"]
    assert all(p["Condition"] == {"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}} for p in passing)
    scheduling = sorted((s for s in stmts if "scheduler:CreateSchedule" in actions([s])), key=lambda s: s["Sid"])
    assert len(scheduling) == 2
    assert "${RestoreScheduleGroup}/*" in scheduling[0]["Resource"]["Sub"]
    assert "${SweepScheduleGroup}/mlreaper-sweep-endpoint-*" in scheduling[1]["Resource"]["Sub"]


def test_the_schedule_role_can_only_invoke_the_restore_function():
    role = load()["Resources"]["RestoreSchedulerRole"]["Properties"]
    trust = role["AssumeRolePolicyDocument"]["Statement"]
    assert [s["Principal"] for s in trust] == [{"Service": "scheduler.amazonaws.com"}]
    granted = [s for p in role["Policies"] for s in p["PolicyDocument"]["Statement"]]
    assert granted == [{"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": {"GetAtt": "RestoreFunction.Arn"}}]


def test_endpoint_function_is_wired_to_the_restore_function_and_its_role():
    env = load()["Resources"]["EndpointFunction"]["Properties"]["Environment"]["Variables"]
    assert env["REAPER_RESTORE_FUNCTION_ARN"] == {"GetAtt": "RestoreFunction.Arn"}
    assert env["REAPER_SCHEDULER_ROLE_ARN"] == {"GetAtt": "RestoreSchedulerRole.Arn"}
    assert env["REAPER_SCHEDULE_GROUP"] == {"Ref": "RestoreScheduleGroup"}


def test_endpoint_reads_are_read_only_and_writes_are_scoped():
    stmts = {s["Sid"]: s for s in statements("EndpointFunction")}
    reads = actions([stmts["EndpointRead"]])
    assert all(a.split(":")[1].startswith(("Describe", "List", "Search", "Get")) for a in reads)
    assert "endpoint/*" in stmts["EndpointAct"]["Resource"]["Sub"]
    assert "inference-component/*" in stmts["EndpointComponentsAct"]["Resource"]["Sub"]


def test_every_endpoint_action_declares_what_it_calls():
    kind = kinds.get("endpoint")
    assert kind.actions["delete"].needs_log is True
    assert "sagemaker:DeleteEndpoint" in kind.actions["delete"].permissions
    assert "sagemaker:UpdateInferenceComponentRuntimeConfig" in kind.actions["scale-to-zero"].permissions
