"""Across the organisation (moto): one StackSet puts the member template in three accounts of an OU,
the central stack keeps one log and one digest, and Stop now from the central account acts in a
member account through the member's own function and gate."""

from __future__ import annotations

import importlib.util
import io
import json
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from cfnlint.decode.cfn_yaml import loads

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

REGION = "us-east-1"
CENTRAL = "123456789012"  # moto's default account: the management account, here also the central one
ARTIFACTS = "mlreaper-artifacts"  # + "-<region>": the buckets `make deploy-org` fills
MEMBER_LOG = "mlreaper-member-log"
IDLE = [0] * 36


def _stackset_template() -> str:
    """template.yaml as `make deploy-org` hands it to StackSets: packaged (code in S3), then expanded."""
    spec = importlib.util.spec_from_file_location("stackset_template", ROOT / "scripts" / "stackset_template.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    packaged = "\n".join(
        line.split(":")[0] + ": s3://packaged/code.zip" if line.strip().startswith(("CodeUri:", "ContentUri:")) else line
        for line in (ROOT / "template.yaml").read_text().splitlines()
    )
    return json.dumps(module.expand(packaged, ARTIFACTS))


def _code_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("app.py", "def handler(event, context):\n    return {}\n")
    return buf.getvalue()


def _session(account: str) -> boto3.session.Session:
    creds = boto3.client("sts", region_name=REGION).assume_role(
        RoleArn=f"arn:aws:iam::{account}:role/OrganizationAccountAccessRole", RoleSessionName="org-test"
    )["Credentials"]
    return boto3.session.Session(
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
        region_name=REGION,
    )


def _central_stack(aws: boto3.session.Session, org_id: str) -> dict[str, str]:
    """org/central.yaml in the central account; moto's CloudFormation makes the bus and the table. The
    bus policy and the rule (which moto's CloudFormation skips) are put as the template declares them,
    the rule's target being a queue the test reads for the central function."""
    cfn = aws.client("cloudformation")
    template = loads((ROOT / "org" / "central.yaml").read_text())
    # the stream's event source mapping names a SAM function moto's CloudFormation does not create:
    # the test hands the stream's records to the central settings function's code itself
    deployed = {**template, "Resources": {k: v for k, v in template["Resources"].items() if k != "CentralSettingsStream"}}
    cfn.create_stack(
        StackName="mlreaper-central",
        TemplateBody=json.dumps(deployed),
        Parameters=[{"ParameterKey": "OrganizationId", "ParameterValue": org_id}],
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
    )
    outputs = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName="mlreaper-central")["Stacks"][0]["Outputs"]}
    declared = template["Resources"]["CentralEventBusPolicy"]["Properties"]["Statement"]
    events = aws.client("events")
    bus = outputs["CentralEventBusArn"]
    statement = {
        "Sid": "OrganisationMembersPutEvents",
        "Effect": declared["Effect"],
        "Principal": declared["Principal"],
        "Action": declared["Action"],
        "Resource": bus,
        "Condition": {"StringEquals": {"aws:PrincipalOrgID": org_id}},
    }
    events.put_permission(EventBusName=bus.split("/")[-1], Policy=json.dumps({"Version": "2012-10-17", "Statement": [statement]}))
    pattern = template["Resources"]["CentralFunction"]["Properties"]["Events"]["MemberRecords"]["Properties"]["Pattern"]
    sqs = aws.client("sqs")
    queue = sqs.create_queue(QueueName="central-function")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="member-records", EventBusName=bus.split("/")[-1], EventPattern=json.dumps(pattern))
    events.put_targets(Rule="member-records", EventBusName=bus.split("/")[-1], Targets=[{"Id": "central", "Arn": queue_arn}])
    return {"bus": bus, "table": outputs["OrgActionLogTableName"], "queue": queue, "settings_table": outputs["OrgSettingsTableArn"]}


@pytest.fixture
def organisation(aws: boto3.session.Session) -> dict[str, Any]:
    orgs = aws.client("organizations")
    org_id = orgs.create_organization(FeatureSet="ALL")["Organization"]["Id"]
    root = orgs.list_roots()["Roots"][0]["Id"]
    ou = orgs.create_organizational_unit(ParentId=root, Name="ml-teams")["OrganizationalUnit"]["Id"]
    members = []
    for team in ("vision", "speech", "nlp"):
        account = orgs.create_account(AccountName=team, Email=f"{team}@example.com")["CreateAccountStatus"]["AccountId"]
        orgs.move_account(AccountId=account, SourceParentId=root, DestinationParentId=ou)
        members.append(account)
    hub = _central_stack(aws, org_id)
    s3 = aws.client("s3")
    s3.create_bucket(Bucket=f"{ARTIFACTS}-{REGION}")
    s3.put_object(Bucket=f"{ARTIFACTS}-{REGION}", Key="code.zip", Body=_code_zip())
    cfn = aws.client("cloudformation")
    cfn.create_stack_set(
        StackSetName="mlreaper",
        TemplateBody=_stackset_template(),
        PermissionModel="SERVICE_MANAGED",
        AutoDeployment={"Enabled": True, "RetainStacksOnAccountRemoval": False},
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"],
        Parameters=[
            {"ParameterKey": "CentralEventBusArn", "ParameterValue": hub["bus"]},
            {"ParameterKey": "CentralAccountId", "ParameterValue": CENTRAL},
        ],
    )
    cfn.create_stack_instances(StackSetName="mlreaper", DeploymentTargets={"OrganizationalUnitIds": [ou]}, Regions=[REGION])
    return {"org_id": org_id, "members": members, "cfn": cfn, **hub}


def _sweep_member(account: str, bus: str, now: datetime, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """One member's scheduled notebook sweep (dry-run, the default), as its function runs it."""
    member = _session(account)
    create_table(member.client("dynamodb"), MEMBER_LOG)
    sm, cw = member.client("sagemaker"), member.client("cloudwatch")
    seed.notebook(sm, f"idle-{account[-4:]}", {"ml:owner": f"owner-{account[-4:]}@example.com", "ml:stage": "dev"})
    seed.activity(cw, f"idle-{account[-4:]}", now, IDLE)
    seed.notebook(sm, f"blind-{account[-4:]}", {"ml:owner": "ana@example.com", "ml:stage": "dev"}, agent=False)
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "StackSet-mlreaper-NotebookFunction")
    rt = build_runtime(Settings.validated({"table": MEMBER_LOG, "central_event_bus_arn": bus}), session=member, region=REGION)
    return sweep_in_parts(rt, "notebook", now, f"sweep-{account}", None)


def _central_takes(aws: boto3.session.Session, hub: dict[str, Any]) -> list[dict[str, Any]]:
    """What the rule delivered, each written by the central function's code."""
    return [central.take(aws.client("dynamodb"), hub["table"], e) for e in drain(aws, hub["queue"])]


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
        iam = _session(account).client("iam")
        assert iam.list_role_policies(RoleName=f"{click.ROLE_PREFIX}{REGION}")["PolicyNames"] == ["invoke-sweep-functions"]
    role = json.loads(_stackset_template())["Resources"]["CentralActionRole"]["Properties"]
    [trust] = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${CentralAccountId}:root"}}
    [allowed] = role["Policies"][0]["PolicyDocument"]["Statement"]
    assert allowed["Action"] == "lambda:InvokeFunction" and all("Fn::GetAtt" in r for r in allowed["Resource"])


def test_each_members_sweep_reaches_the_central_log_the_cli_and_the_one_digest(organisation, aws, monkeypatch, capsys):
    # Given a sweep in each of the three member accounts
    now = datetime.now(UTC)
    for account in organisation["members"]:
        _sweep_member(account, organisation["bus"], now, monkeypatch)
    # When the central function takes what the bus delivered
    taken = _central_takes(aws, organisation)
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
    member = _session(account)
    sm = member.client("sagemaker")
    exempt_arn = seed.notebook(sm, "exempt-later", {"ml:owner": "ana@example.com", "ml:stage": "dev"})
    seed.activity(member.client("cloudwatch"), "exempt-later", now, IDLE)
    _sweep_member(account, organisation["bus"], now, monkeypatch)
    _central_takes(aws, organisation)
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
    text = _stackset_template()
    assert "Transform" not in json.loads(text) and "AWS::Serverless" not in text
    assert "us-east-1" not in text and f"{ARTIFACTS}-${{AWS::Region}}" in text
    assert Path(ROOT / "org" / "central.yaml").exists()
