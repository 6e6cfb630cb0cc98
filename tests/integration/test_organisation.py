"""Across the organisation (moto): one StackSet puts the member template in three accounts of an OU,
the central stack keeps one log and one digest, and Stop now from the central account acts in a
member account through the member's own function and gate."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reaper.cli.main import main
from reaper.core.settings import Settings
from reaper.handlers import handle_kind_event, sweep_in_parts
from reaper.org import central, click
from reaper.record.actionlog import ActionLog, create_table
from reaper.slack.bot import BotConfig, SlackBot
from reaper.slack.notifier import Notifier
from reaper.wiring import build_runtime
from reaper_devkit import seed
from reaper_devkit.slack_api import SlackApi
from tests.conftest import ROOT, drain
from tests.helpers.credentials import outsider
from tests.helpers.events import stop_now
from tests.helpers.organisation import ARTIFACTS, IDLE, MEMBER_LOG, REGION, central_takes, member_session, stackset_template, sweep_member


def test_one_stackset_puts_the_member_stack_in_every_account_of_the_ou(organisation, aws):
    # Given the StackSet deployed to the OU
    instances = organisation["cfn"].list_stack_instances(StackSetName="mlreaper")["Summaries"]
    # Then one instance per member account, each succeeded, and the central stack
    assert sorted(i["Account"] for i in instances) == sorted(organisation["members"])
    assert {i["StackInstanceStatus"]["DetailedStatus"] for i in instances} == {"SUCCEEDED"}
    assert aws.client("cloudformation").describe_stacks(StackName="mlreaper-central")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
    # And each member has the role the central account may assume (trusted by that account only), able to
    # invoke its sweep functions and nothing else
    for account in organisation["members"]:
        iam = member_session(account).client("iam")
        assert iam.list_role_policies(RoleName=f"{click.ROLE_PREFIX}{REGION}")["PolicyNames"] == ["invoke-sweep-functions"]
    role = json.loads(stackset_template())["Resources"]["CentralActionRole"]["Properties"]
    [trust] = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${CentralAccountId}:root"}}
    [allowed] = role["Policies"][0]["PolicyDocument"]["Statement"]
    assert allowed["Action"] == "lambda:InvokeFunction" and all("Fn::GetAtt" in r for r in allowed["Resource"])


def test_each_members_sweep_reaches_the_central_log_the_cli_and_the_one_digest(organisation, aws, monkeypatch, capsys):
    # Given a sweep in each of the three member accounts
    now = datetime.now(UTC)
    for account in organisation["members"]:
        sweep_member(account, organisation["bus"], now, monkeypatch)
    # When the central function takes what the bus delivered
    taken = central_takes(aws, organisation)
    # Then every member's verdicts and coverage are in the organisation's log, each under its sender's account
    assert {t["account"] for t in taken} == set(organisation["members"])
    assert {(t["account"], t["type"]) for t in taken} == {(a, k) for a in organisation["members"] for k in ("verdict", "coverage")}
    # And `reaper log --org` shows them, with their accounts
    monkeypatch.setenv("REAPER_ORG_TABLE", organisation["table"])
    assert main(["log", "--org", "--since", "1h", "--json"]) == 0
    logged = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {(e["account"], e["id"]) for e in logged if e.get("verdict") == "act"} == {
        (a, f"idle-{a[-4:]}") for a in organisation["members"]
    }
    # And `reaper coverage --org` has each member's tally; `reaper report --org --by account` groups by account
    assert main(["coverage", "--org", "--json"]) == 0
    tallies = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted(t["account"] for t in tallies) == sorted(organisation["members"]) and all(t["unknown"] == 1 for t in tallies)
    assert main(["report", "--org", "--by", "account"]) == 0
    # And one digest counts every account, kind and owner
    with SlackApi({}) as api:
        bot = SlackBot.build(BotConfig(bot_token="xoxb-t", admin_channel="C0ADMIN", signing_secret="s", base_url=api.url))
        digest = Notifier(webhook=lambda: None, log=ActionLog(aws.client("dynamodb"), organisation["table"]), bot=lambda: bot)
        result = digest.post_daily_digest()
        again = digest.post_daily_digest()
        posted = api.posts
    assert result["posted"] and not again["posted"]  # once a day
    assert set(result["digest"]["accounts"]) == set(organisation["members"])
    assert {o for o, _ in result["digest"]["top_owners"]} == {f"owner-{a[-4:]}@example.com" for a in organisation["members"]}
    assert len(posted) == 1 and "*Accounts:*" in json.dumps(posted[0])


def test_a_member_outside_the_organisation_cannot_write_to_the_central_bus(organisation, aws):
    events = outsider("events")
    entry = {"Source": "mlreaper.member", "DetailType": "mlreaper record", "Detail": "{}", "EventBusName": organisation["bus"]}
    with pytest.raises(events.exceptions.ClientError, match="AccessDenied"):
        events.put_events(Entries=[entry])
    assert drain(aws, organisation["queue"]) == []


def test_stop_now_from_the_central_account_acts_in_the_member_through_its_gate(organisation, aws, monkeypatch):
    # Given two idle notebooks in a member, logged centrally by its sweep, one of which its owner then exempts
    now = datetime.now(UTC)
    account = organisation["members"][0]
    member = member_session(account)
    sm = member.client("sagemaker")
    exempt_arn = seed.notebook(sm, "exempt-later", {"ml:owner": "ana@example.com", "ml:stage": "dev"})
    seed.activity(member.client("cloudwatch"), "exempt-later", now, IDLE)
    sweep_member(account, organisation["bus"], now, monkeypatch)
    central_takes(aws, organisation)
    sm.add_tags(ResourceArn=exempt_arn, Tags=[{"Key": "reaper:exempt", "Value": "true"}])
    org_log = ActionLog(aws.client("dynamodb"), organisation["table"])
    enforce = build_runtime(Settings.validated({"mode": "enforce", "table": MEMBER_LOG}), session=member, region=REGION)
    answered: list[dict[str, Any]] = []

    class MemberLambda:
        """The member account's Lambda: the invoked function is the member's notebook function."""

        def invoke(self, FunctionName: str, InvocationType: str, Payload: bytes) -> None:  # noqa: N803 - boto3's names
            assert FunctionName == "StackSet-mlreaper-NotebookFunction" and InvocationType == "Event"
            answered.append(handle_kind_event(json.loads(Payload), "notebook", enforce, now + timedelta(seconds=1)))

    def stop(arn: str) -> dict[str, Any]:
        event = stop_now(f"central-{arn[-8:]}", {"arn": arn, "user": "U0ADMIN01", "response_url": "", "thread_ts": None}, now)
        return click.stop_from_log(org_log, aws.client("sts"), lambda creds, region: MemberLambda(), event, now)

    idle_arn = sm.describe_notebook_instance(NotebookInstanceName=f"idle-{account[-4:]}")["NotebookInstanceArn"]
    # When the admin clicks Stop now on the idle notebook and on the exempt one
    forwarded = [stop(idle_arn), stop(exempt_arn)]
    # Then each click went to the member's function, in the member's account, and its gate decided
    assert [f["account"] for f in forwarded] == [account, account]
    assert [a["stop_now"] for a in answered] == ["act", "exempt"]
    assert sm.describe_notebook_instance(NotebookInstanceName=f"idle-{account[-4:]}")["NotebookInstanceStatus"] in ("Stopping", "Stopped")
    assert sm.describe_notebook_instance(NotebookInstanceName="exempt-later")["NotebookInstanceStatus"] == "InService"
    # And a resource no member ever logged is refused without calling any account
    assert "refused" in stop("arn:aws:sagemaker:us-east-1:111111111111:notebook-instance/unknown")
    assert len(answered) == 2


def test_a_member_stack_set_to_standalone_forwards_nothing(aws, table, sm, cw):
    # Given no central bus (the default), a sweep records to its own log only
    now = datetime.now(UTC)
    seed.notebook(sm, "idle", {"ml:owner": "ana@example.com", "ml:stage": "dev"})
    seed.activity(cw, "idle", now, IDLE)
    rt = build_runtime(Settings.validated({"table": table}), session=aws, region=REGION)
    sweep_in_parts(rt, "notebook", now, "standalone", None)
    assert rt.forwarder is None and rt.log is not None and rt.log.copy_to is None
    assert any(e.get("id") == "idle" for e in rt.log.stored_entries(now - timedelta(minutes=5), now + timedelta(minutes=1)))


def test_the_central_log_refuses_an_event_without_its_senders_account(aws):
    create_table(aws.client("dynamodb"), "org-log")
    at = datetime.now(UTC).isoformat()
    bad = {
        "version": "0",
        "id": "x",
        "source": "mlreaper.member",
        "detail-type": "mlreaper record",
        "account": "",
        "time": at,
        "region": "",
        "resources": [],
        "detail": {"logged_at": datetime.now(UTC).isoformat(), "kind": "notebook", "id": "nb"},
    }
    with pytest.raises(Exception, match="sender's account"):
        central.take(aws.client("dynamodb"), "org-log", bad)


def test_the_stackset_template_names_no_region_and_no_transform():
    text = stackset_template()
    assert "Transform" not in json.loads(text) and "AWS::Serverless" not in text
    assert "us-east-1" not in text and f"{ARTIFACTS}-${{AWS::Region}}" in text
    assert Path(ROOT / "org" / "central.yaml").exists()
