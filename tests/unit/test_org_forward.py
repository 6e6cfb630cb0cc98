"""A member's records for the central bus: ten to a PutEvents call, never an error of the sweep; the
central digest counts accounts; the central log's CLI views."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper.core.errors import ConfigError
from reaper.core.settings import Settings
from reaper.org import click, views
from reaper.record import forward
from reaper.record.actionlog import ActionLog
from reaper.record.logentry import from_mapping
from reaper.slack import digest

BUS = "arn:aws:events:eu-west-1:111122223333:event-bus/mlreaper-central-org"


class FakeEvents:
    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[dict[str, Any]]] = []
        self.fail = fail

    def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:  # noqa: N803 - boto3's name
        if self.fail:
            raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "PutEvents")
        self.calls.append(Entries)
        return {"FailedEntryCount": 0, "Entries": [{"EventId": str(i)} for i in range(len(Entries))]}


def record(i: int, type_: str = "verdict") -> dict[str, Any]:
    return {"type": type_, "kind": "notebook", "id": f"nb-{i}", "verdict": "act", "logged_at": "2026-12-03T10:00:00Z", "event_id": "e"}


def test_records_go_ten_to_a_call_as_events_of_the_member_source():
    # Given 23 records and a coverage tally
    events = FakeEvents()
    f = forward.Forwarder(events, BUS, "StackSet-mlreaper-NotebookFunction")
    for i in range(23):
        f.add(record(i))
    f.add(record(99, "coverage"))
    # When the sweep ends
    assert f.flush() == 0
    # Then three calls of 10, 10 and 4, each entry on the bus, its detail the record with the function's name
    assert [len(c) for c in events.calls] == [10, 10, 4]
    sent = [e for c in events.calls for e in c]
    assert {e["Source"] for e in sent} == {forward.SOURCE} and {e["EventBusName"] for e in sent} == {BUS}
    assert [e["DetailType"] for e in sent].count(forward.COVERAGE) == 1
    assert json.loads(sent[0]["Detail"])["function"] == "StackSet-mlreaper-NotebookFunction"
    assert "account" not in json.loads(sent[0]["Detail"])  # the central side takes the event's own


def test_a_refused_send_is_counted_and_never_raised():
    f = forward.Forwarder(FakeEvents(fail=True), BUS)
    f.add(record(1))
    assert f.flush() == 1 and f.pending == []


def test_a_record_past_the_entry_limit_is_cut_to_its_summary():
    events = FakeEvents()
    f = forward.Forwarder(events, BUS)
    f.add({**record(1), "evidence": {"points": "x" * 300_000}})
    f.flush()
    detail = json.loads(events.calls[0][0]["Detail"])
    assert "evidence" not in detail and detail["id"] == "nb-1" and len(events.calls[0][0]["Detail"]) < forward.MAX_DETAIL


def test_the_action_log_hands_each_entry_as_written_to_its_copy():
    class FakeDynamo:
        def put_item(self, **kwargs: Any) -> None:
            self.item = kwargs["Item"]

    dynamo, copied = FakeDynamo(), []
    log = ActionLog(dynamo, "t")
    log.copy_to = copied.append
    log.record({"kind": "notebook", "id": "nb"}, datetime(2026, 12, 3, 10, tzinfo=UTC), "event-1")
    assert copied == [json.loads(dynamo.item["entry"]["S"])]


@pytest.mark.parametrize("value", ["not-an-arn", "arn:aws:events:us-east-1:123:event-bus/x", "arn:aws:sqs:us-east-1:111122223333:q"])
def test_a_central_bus_that_is_not_an_event_bus_arn_is_a_configuration_error(value):
    with pytest.raises(ConfigError, match="REAPER_CENTRAL_EVENT_BUS_ARN"):
        Settings.from_env({"REAPER_CENTRAL_EVENT_BUS_ARN": value})


def test_the_digest_counts_accounts_only_in_the_central_log():
    now = datetime(2026, 12, 3, 18, tzinfo=UTC)
    at = "2026-12-03T10:00:00+00:00"
    member = [{"type": "verdict", "kind": "notebook", "id": "a", "verdict": "act", "owner": "o", "logged_at": at}]
    central = [{**member[0], "account": "111122223333"}, {**member[0], "id": "b", "account": "444455556666"}]
    assert digest.build([from_mapping(e) for e in member], now).accounts == {}
    assert "Accounts" not in json.dumps(digest.render(digest.build([from_mapping(e) for e in member], now)).blocks)
    payload = digest.build([from_mapping(e) for e in central], now)
    assert payload.accounts == {"111122223333": 1, "444455556666": 1}
    assert "*Accounts:* 1 in 111122223333, 1 in 444455556666" in json.dumps(digest.render(payload).blocks)


def test_org_coverage_keeps_each_members_newest_sweep():
    rows = [
        {"type": "coverage", "account": "1", "kind": "notebook", "region": "r", "event_id": "old", "logged_at": "1", "unknown": 5},
        {"type": "coverage", "account": "1", "kind": "notebook", "region": "r", "event_id": "new", "logged_at": "2", "unknown": 1},
        {"type": "coverage", "account": "2", "kind": "notebook", "region": "r", "event_id": "x", "logged_at": "1", "unknown": 0},
        {"type": "verdict", "account": "2", "kind": "notebook", "logged_at": "3"},
    ]
    latest = views.latest_coverage(from_mapping(r) for r in rows)
    assert [(r["account"], r["event_id"]) for r in latest] == [("1", "new"), ("2", "x")]
    assert "2 account(s): can't judge 1 of" in views.format_coverage(latest)


def test_stop_now_is_forwarded_only_for_a_resource_arn_with_its_account():
    with pytest.raises(Exception, match="account"):
        click.forward_stop(None, lambda c, r: None, "fn", {"detail": {"arn": "nb-1", "user": "U0ADMIN01"}})
    assert click.role_arn("111122223333", "eu-west-1") == "arn:aws:iam::111122223333:role/mlreaper-central-action-eu-west-1"
    assert (
        click.function_for(
            [from_mapping({"logged_at": "", **e}) for e in ({"arn": "a", "function": "f1"}, {"arn": "a", "function": "f2"}, {"arn": "b"})],
            "a",
        )
        == "f2"
    )


def test_the_central_function_is_granted_what_its_code_calls_and_no_more():
    from pathlib import Path

    from cfnlint.decode.cfn_yaml import loads

    from reaper.org import central
    from reaper.record.actionlog import POST_CLAIM_PERMISSIONS
    from reaper.report import bill

    template = loads((Path(__file__).resolve().parents[2] / "org" / "central.yaml").read_text())
    policies = template["Resources"]["CentralFunction"]["Properties"]["Policies"]
    statements = [s for p in policies if "Statement" in p for s in p["Statement"]]
    statements += [s for p in policies if "Fn::If" in p for s in p["Fn::If"][1]["Statement"]]
    granted = {a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}
    # the log (PutItem), the digest (Query, its once-a-day claim), Stop now (AssumeRole), the bot token, and with
    # DigestBill=on only, the digest's bill line (docs/bill.md)
    called = {
        *central.PERMISSIONS,
        "dynamodb:Query",
        *POST_CLAIM_PERMISSIONS,
        *click.PERMISSIONS,
        "secretsmanager:GetSecretValue",
        *bill.PERMISSIONS,
    }
    assert granted == called
    [bill_grant] = [p["Fn::If"] for p in policies if "Fn::If" in p and p["Fn::If"][0] == "HasDigestBill"]
    assert [s["Action"] for s in bill_grant[1]["Statement"]] == ["ce:GetCostAndUsage"] and bill_grant[2] == {"Ref": "AWS::NoValue"}
    bus_policy = template["Resources"]["CentralEventBusPolicy"]["Properties"]["Statement"]
    assert bus_policy["Condition"] == {"StringEquals": {"aws:PrincipalOrgID": {"Ref": "OrganizationId"}}}
