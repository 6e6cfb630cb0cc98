"""An organisation in moto as the organisation tests deploy it: an OU of three member accounts, the central
stack (org/central.yaml), the StackSet of template.yaml in every member, a member's session and sweep, and
what the central function takes."""

from __future__ import annotations

import importlib.util
import io
import json
import zipfile
from datetime import datetime
from typing import Any

import boto3
import pytest
from cfnlint.decode.cfn_yaml import loads

from reaper.core.settings import Settings
from reaper.handlers import sweep_in_parts
from reaper.org import central
from reaper.record.actionlog import create_table
from reaper.wiring import build_runtime
from reaper_devkit import seed
from tests.conftest import ROOT, drain

REGION = "us-east-1"
CENTRAL = "123456789012"  # moto's default account: the management account, here also the central one
ARTIFACTS = "mlreaper-artifacts"  # + "-<region>": the buckets `make deploy-org` fills
MEMBER_LOG = "mlreaper-member-log"
IDLE = [0] * 36


def stackset_template() -> str:
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


def code_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("app.py", "def handler(event, context):\n    return {}\n")
    return buf.getvalue()


def member_session(account: str) -> boto3.session.Session:
    creds = boto3.client("sts", region_name=REGION).assume_role(
        RoleArn=f"arn:aws:iam::{account}:role/OrganizationAccountAccessRole", RoleSessionName="org-test"
    )["Credentials"]
    return boto3.session.Session(
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
        region_name=REGION,
    )


def central_stack(aws: boto3.session.Session, org_id: str) -> dict[str, str]:
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


def deploy_organisation(aws: boto3.session.Session) -> dict[str, Any]:
    """An organisation with an OU of three member accounts, the central stack, and the StackSet deployed to the OU."""
    orgs = aws.client("organizations")
    org_id = orgs.create_organization(FeatureSet="ALL")["Organization"]["Id"]
    root = orgs.list_roots()["Roots"][0]["Id"]
    ou = orgs.create_organizational_unit(ParentId=root, Name="ml-teams")["OrganizationalUnit"]["Id"]
    members = []
    for team in ("vision", "speech", "nlp"):
        account = orgs.create_account(AccountName=team, Email=f"{team}@example.com")["CreateAccountStatus"]["AccountId"]
        orgs.move_account(AccountId=account, SourceParentId=root, DestinationParentId=ou)
        members.append(account)
    hub = central_stack(aws, org_id)
    s3 = aws.client("s3")
    s3.create_bucket(Bucket=f"{ARTIFACTS}-{REGION}")
    s3.put_object(Bucket=f"{ARTIFACTS}-{REGION}", Key="code.zip", Body=code_zip())
    cfn = aws.client("cloudformation")
    cfn.create_stack_set(
        StackSetName="mlreaper",
        TemplateBody=stackset_template(),
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


def sweep_member(account: str, bus: str, now: datetime, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """One member's scheduled notebook sweep (dry-run, the default), as its function runs it."""
    member = member_session(account)
    create_table(member.client("dynamodb"), MEMBER_LOG)
    sm, cw = member.client("sagemaker"), member.client("cloudwatch")
    seed.notebook(sm, f"idle-{account[-4:]}", {"ml:owner": f"owner-{account[-4:]}@example.com", "ml:stage": "dev"})
    seed.activity(cw, f"idle-{account[-4:]}", now, IDLE)
    seed.notebook(sm, f"blind-{account[-4:]}", {"ml:owner": "ana@example.com", "ml:stage": "dev"}, agent=False)
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "StackSet-mlreaper-NotebookFunction")
    rt = build_runtime(Settings.validated({"table": MEMBER_LOG, "central_event_bus_arn": bus}), session=member, region=REGION)
    return sweep_in_parts(rt, "notebook", now, f"sweep-{account}", None)


def central_takes(aws: boto3.session.Session, hub: dict[str, Any]) -> list[dict[str, Any]]:
    """What the rule delivered, each written by the central function's code."""
    return [central.take(aws.client("dynamodb"), hub["table"], e) for e in drain(aws, hub["queue"])]
