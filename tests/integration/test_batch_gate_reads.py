"""A batch's gates read its members again in one call where AWS has one (issue 35, item 6): capacity's
DescribeCapacityReservations by id, their tags with it (no DescribeTags); FSx's DescribeFileSystems by id for
their state, their tags still one ListTagsForResource each (DescribeFileSystems is not documented to return
them always: docs/aws-assumptions.md, *One read for a batch's gates*). The gate's guarantees hold: a protective
tag set between discovery and the gate stops that member's change; a tag set after the batch's read, before
that member's own change call, is the window docs/safety.md names as held by the IAM Deny, shown here with the
template's policies as the kit evaluates them (reaper_devkit.iam_check). Counted, not timed."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from reaper.record.actionlog import ActionLog
from reaper_devkit import seed_capacity, seed_fsx
from reaper_devkit.calls import CallRecorder, recording
from reaper_devkit.iam_check import Request, decision, resource_tagged
from tests.conftest import drain, event, load_function

OWNER = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
PROTECTIONS = {
    "exempt": {"reaper:exempt": "true"},
    "snoozed": {"reaper:snooze-until": "2099-01-01"},
    "production": {"ml:stage": "prod"},
}
N = 6  # one batch (reaper.sweep.batch: BATCH_FROM 3 <= N <= ACT_BATCH 20)


@dataclass(frozen=True)
class KindCase:
    kind: str
    function: str
    signals: str  # the module whose `signals` runs after discovery, before any gate
    seed: Callable[[boto3.session.Session, int, datetime], list[str]]  # -> ids
    tag: Callable[[boto3.session.Session, str, dict[str, str]], None]
    tags: Callable[[boto3.session.Session, str], dict[str, str]]
    changed: Callable[[boto3.session.Session, str], bool]
    change: str  # the change call's botocore operation
    change_action: str  # its IAM action
    arn: Callable[[str], str]
    refused: str  # what AWS answers a request IAM denies (the service's error code)


def _reservations(aws: boto3.session.Session, n: int, now: datetime) -> list[str]:
    ec2, cw = aws.client("ec2"), aws.client("cloudwatch")
    ids = [seed_capacity.odcr(ec2, "p4d.24xlarge", 1, OWNER, now=now) for _ in range(n)]
    for cr in ids:
        seed_capacity.used(cw, cr, now)
    return sorted(ids)


def _cr_tag(aws: boto3.session.Session, cr: str, tags: dict[str, str]) -> None:
    aws.client("ec2").create_tags(Resources=[cr], Tags=[{"Key": k, "Value": v} for k, v in tags.items()])


def _cr_tags(aws: boto3.session.Session, cr: str) -> dict[str, str]:
    found = aws.client("ec2").describe_capacity_reservations(CapacityReservationIds=[cr])["CapacityReservations"][0]
    return {t["Key"]: t["Value"] for t in found.get("Tags", [])}


def _cr_changed(aws: boto3.session.Session, cr: str) -> bool:
    found = aws.client("ec2").describe_capacity_reservations(CapacityReservationIds=[cr])["CapacityReservations"][0]
    return bool(found["State"] != "active")


def _file_systems(aws: boto3.session.Session, n: int, now: datetime) -> list[str]:
    fsx, cw = aws.client("fsx"), aws.client("cloudwatch")
    subnet, group = seed_fsx.network(aws.client("ec2"))
    ids = []
    for k in range(n):
        fs_id = seed_fsx.file_system(fsx, subnet, group, tags={"Name": f"fs-{k}", **OWNER}, created_at=now - timedelta(days=3))
        seed_fsx.io(cw, fs_id, now)
        ids.append(fs_id)
    return sorted(ids)


def _fs_arn(fs_id: str) -> str:
    return f"arn:aws:fsx:us-east-1:123456789012:file-system/{fs_id}"


def _fs_tag(aws: boto3.session.Session, fs_id: str, tags: dict[str, str]) -> None:
    aws.client("fsx").tag_resource(ResourceARN=_fs_arn(fs_id), Tags=[{"Key": k, "Value": v} for k, v in tags.items()])


def _fs_tags(aws: boto3.session.Session, fs_id: str) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in aws.client("fsx").list_tags_for_resource(ResourceARN=_fs_arn(fs_id))["Tags"]}


def _fs_changed(aws: boto3.session.Session, fs_id: str) -> bool:
    fsx = aws.client("fsx")
    backed_up = any(b.get("FileSystem", {}).get("FileSystemId") == fs_id for b in fsx.describe_backups()["Backups"])
    return backed_up or fs_id not in {fs["FileSystemId"] for fs in fsx.describe_file_systems()["FileSystems"]}


CAPACITY = KindCase(
    "capacity",
    "capacity",
    "reaper.kinds.capacity.signals",
    _reservations,
    _cr_tag,
    _cr_tags,
    _cr_changed,
    "CancelCapacityReservation",
    "ec2:CancelCapacityReservation",
    lambda cr: f"arn:aws:ec2:us-east-1:123456789012:capacity-reservation/{cr}",
    "UnauthorizedOperation",  # EC2's answer to a request IAM refuses
)
FSX = KindCase(
    "fsx",
    "fsx",
    "reaper.kinds.fsx.signals",
    _file_systems,
    _fs_tag,
    _fs_tags,
    _fs_changed,
    "CreateBackup",  # phase 1 of an idle dev file system
    "fsx:CreateBackup",
    _fs_arn,
    "AccessDeniedException",
)
CASES = {c.kind: c for c in (CAPACITY, FSX)}
LOGICAL_ID = {"capacity": "CapacityFunction", "fsx": "FsxFunction"}


def _between(ops: list[str], first: str, last: str) -> list[str]:
    return ops[ops.index(first) : ops.index(last)]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_batch_is_read_again_in_one_call_before_its_changes(aws, enforce, lambda_context, kind):
    # Given six idle dev resources of the kind, one batch
    case = CASES[kind]
    ids = case.seed(aws, N, datetime.now(UTC))
    app = load_function(case.function)
    # When one enforce sweep (grace 0) runs
    with recording() as calls:
        result = app.handler(event(f"{kind}-schedule.json"), lambda_context)
    assert sorted(result["acted"]) == ids and all(case.changed(aws, i) for i in ids), result
    # Then between the first write-ahead and the first change the gates read the batch once
    gates = _between(calls.operations, "TransactWriteItems", case.change)
    if kind == "capacity":  # its state and its tags in one DescribeCapacityReservations; no DescribeTags at all
        assert (gates.count("DescribeCapacityReservations"), gates.count("DescribeTags")) == (1, 0), gates
        assert calls.calls["ec2:DescribeTags"] == 0
    else:  # its state in one DescribeFileSystems; each file system's tags still read alone, from its own service
        assert (gates.count("DescribeFileSystems"), gates.count("ListTagsForResource")) == (1, N), gates


@pytest.mark.parametrize("protection", sorted(PROTECTIONS))
@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_protective_tag_set_between_discovery_and_the_gate_stops_that_change(aws, enforce, lambda_context, monkeypatch, kind, protection):
    # Given six idle dev resources of the kind; one is tagged after discovery and the signals, before the gates
    case = CASES[kind]
    ids = case.seed(aws, N, datetime.now(UTC))
    late = ids[2]
    module = importlib.import_module(case.signals)
    real = module.signals

    def signals_then_tag(*args: Any, **kwargs: Any) -> Any:
        read = real(*args, **kwargs)
        case.tag(aws, late, PROTECTIONS[protection])
        return read

    monkeypatch.setattr(module, "signals", signals_then_tag)
    app = load_function(case.function)
    # When the enforce sweep runs
    with recording() as calls:
        result = app.handler(event(f"{kind}-schedule.json"), lambda_context)
    # Then the batch was read again in one call (the path under test) ...
    read = "DescribeCapacityReservations" if kind == "capacity" else "DescribeFileSystems"
    assert _between(calls.operations, "TransactWriteItems", case.change).count(read) == 1
    # ... the late-tagged one is not changed and is kept as exempt, the others are changed in the batch
    others = [i for i in ids if i != late]
    assert not case.changed(aws, late)
    assert sorted(result["acted"]) == others and all(case.changed(aws, i) for i in others), result
    assert (result["verdicts"]["exempt"], result["verdicts"].get("error", 0)) == (1, 0), result
    # and it is said once: counted once, as exempt (no error, not acted); nothing is posted for it (Slack is told of
    # warn, act and error) and nothing in the action log says it was changed
    assert sum(result["verdicts"].values()) == N and late not in " ".join(result["errors"]), result
    assert not [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("id") == late]
    now = datetime.now(UTC)
    log = ActionLog(aws.client("dynamodb"), enforce["REAPER_TABLE"])
    assert not [e for e in log.stored_entries(now - timedelta(days=1), now + timedelta(days=1)) if e.get("id") == late]


@pytest.mark.parametrize("protection", ["exempt", "production"])
@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_tag_set_after_the_batch_read_is_held_by_the_functions_iam_deny(aws, enforce, lambda_context, monkeypatch, kind, protection):
    # Given six idle dev resources of the kind; the third is tagged after the batch's read and its gates, just before its
    # own change call, and every change call is answered as the function's role in template.yaml would answer it
    # (moto enforces no IAM: the kit evaluates the template's Allow and Deny statements with the resource's tags now)
    case = CASES[kind]
    ids = case.seed(aws, N, datetime.now(UTC))
    late = ids[2]
    app = load_function(case.function)
    client = app.RUNTIME.clients()("ec2" if kind == "capacity" else "fsx")
    method = "cancel_capacity_reservation" if kind == "capacity" else "create_backup"
    real = getattr(client, method)
    answered: dict[str, str] = {}
    recorders: list[CallRecorder] = []
    before_changes: list[str] = []  # the sweep's calls before its first change call (this wrapper's own reads after)

    def as_iam_answers(**params: Any) -> Any:
        if not answered:
            before_changes.extend(recorders[0].operations)
        target = str(params.get("CapacityReservationId") or params.get("FileSystemId"))
        if target == late:
            case.tag(aws, late, PROTECTIONS[protection])
        request = resource_tagged(Request(case.change_action, case.arn(target)), case.tags(aws, target))
        answered[target] = decision(request, LOGICAL_ID[kind])
        if answered[target] != "allowed":
            raise ClientError({"Error": {"Code": case.refused, "Message": answered[target]}}, case.change)
        return real(**params)

    monkeypatch.setattr(client, method, as_iam_answers)
    # When the enforce sweep runs
    with recording() as calls:
        recorders.append(calls)
        result = app.handler(event(f"{kind}-schedule.json"), lambda_context)
    # Then its gate had let it through (the batch was read once, the tag came after) and its change call was refused
    # by the Deny the template attaches to the function's role; every other change call was allowed and made
    read = "DescribeCapacityReservations" if kind == "capacity" else "DescribeFileSystems"
    assert _between([*before_changes, case.change], "TransactWriteItems", case.change).count(read) == 1
    sid = {"exempt": "DenyExempt", "production": "DenyProduction"}[protection]
    assert answered == {i: (f"denied by {sid}" if i == late else "allowed") for i in ids}, answered
    assert not case.changed(aws, late) and all(case.changed(aws, i) for i in ids if i != late)
    # and the sweep says so: that change is an error naming the refusal, the others are done
    assert sorted(result["acted"]) == [i for i in ids if i != late] and result["verdicts"]["error"] == 1, result
    assert any(case.refused in e for e in result["errors"]), result["errors"]
    # (the same request without the tag is allowed: it is the Deny on the tag that refuses it)
    assert decision(Request(case.change_action, case.arn(late)), LOGICAL_ID[kind]) == "allowed"


# what AWS answers a batch read naming an id it does not know (the whole call fails):
# InvalidCapacityReservationId.NotFound (DescribeCapacityReservations), FileSystemNotFound (DescribeFileSystems)
NOT_FOUND = {"capacity": ("describe_capacity_reservations", "InvalidCapacityReservationId.NotFound"),
             "fsx": ("describe_file_systems", "FileSystemNotFound")}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_batch_read_aws_refuses_leaves_each_gate_to_read_its_own(aws, enforce, lambda_context, monkeypatch, kind):
    # Given six idle dev resources of the kind, and the batch's one read refused as AWS refuses an id it does not know
    case = CASES[kind]
    ids = case.seed(aws, N, datetime.now(UTC))
    app = load_function(case.function)
    client = app.RUNTIME.clients()("ec2" if kind == "capacity" else "fsx")
    method, code = NOT_FOUND[kind]
    real = getattr(client, method)

    def refused_for_many(**params: Any) -> Any:
        if len(params.get("CapacityReservationIds") or params.get("FileSystemIds") or []) > 1:
            raise ClientError({"Error": {"Code": code, "Message": "not found"}}, method)
        return real(**params)

    monkeypatch.setattr(client, method, refused_for_many)
    # When the enforce sweep runs
    with recording() as calls:
        result = app.handler(event(f"{kind}-schedule.json"), lambda_context)
    # Then each gate read its own state and tags, and every change was made
    assert sorted(result["acted"]) == ids and all(case.changed(aws, i) for i in ids), result
    tags = "ec2:DescribeTags" if kind == "capacity" else "fsx:ListTagsForResource"
    assert calls.calls[tags] >= N, calls.by_operation()


def _launch_into(aws: boto3.session.Session, cr: str) -> None:
    from reaper_devkit import seed_ec2
    from reaper_devkit.moto_ext import capacity

    capacity.place(seed_ec2.instance(aws.client("ec2"), "p4d.24xlarge", OWNER, now=datetime.now(UTC)), cr)


def _commit(aws: boto3.session.Session, cr: str) -> None:
    from reaper_devkit.moto_ext import capacity

    capacity.commit(cr, datetime.now(UTC) + timedelta(days=20))


@pytest.mark.parametrize("since", [_launch_into, _commit], ids=["instance-launched-into-it", "commitment"])
def test_a_reservation_used_or_committed_after_discovery_is_kept_by_the_batch_read(aws, enforce, lambda_context, monkeypatch, since):
    # Given six idle ODCRs; after the signals, an instance is launched into one (or it gets a commitment)
    ids = _reservations(aws, N, datetime.now(UTC))
    late = ids[3]
    from reaper.kinds.capacity import signals as capacity_signals

    real = capacity_signals.signals

    def signals_then_change(*args: Any, **kwargs: Any) -> Any:
        read = real(*args, **kwargs)
        since(aws, late)
        return read

    monkeypatch.setattr(capacity_signals, "signals", signals_then_change)
    app = load_function("capacity")
    # When the enforce sweep runs
    with recording() as calls:
        result = app.handler(event("capacity-schedule.json"), lambda_context)
    # Then the batch's one read (its counts and commitment) keeps that one; the other five are cancelled
    assert _between(calls.operations, "TransactWriteItems", "CancelCapacityReservation").count("DescribeCapacityReservations") == 1
    assert not _cr_changed(aws, late) and sorted(result["acted"]) == [i for i in ids if i != late], result
    assert result["verdicts"]["error"] == 0 and late not in " ".join(result["errors"]), result
