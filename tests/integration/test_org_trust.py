"""A member's CentralActionRole trusts the central account's Slack interactions function only, not the
central account's root (docs/deploy-organisation.md, "Who may act in a member"): any other principal of
the central account that may call sts:AssumeRole is refused, so none can hand a member a Stop now with a
forged requester past the Slack admin check. The roles are the StackSet's (template.yaml, deployed by
moto's CloudFormation); the trust policy is evaluated by the kit (reaper_devkit.moto_ext.sts_trust, with
aws:PrincipalArn: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-principalarn)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from cfnlint.decode.cfn_yaml import loads

from reaper.org import click
from reaper_devkit.moto_ext.sts_trust import trust_enforced, trusts
from tests.conftest import ROOT
from tests.helpers.credentials import client_as
from tests.helpers.organisation import CENTRAL, REGION

LAMBDA_TRUST = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}


def _as_role(aws: boto3.session.Session, name: str) -> Any:
    """STS with the credentials of a role of the central account (made here, assumed in its own account)."""
    arn = aws.client("iam").create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(LAMBDA_TRUST))["Role"]["Arn"]
    return client_as("sts", aws.client("sts").assume_role(RoleArn=arn, RoleSessionName=name[:64])["Credentials"])


def _as_user(aws: boto3.session.Session, name: str) -> Any:
    iam = aws.client("iam")
    iam.create_user(UserName=name)
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return boto3.client("sts", region_name=REGION, aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])


def _assumes(sts: Any, account: str) -> str:
    try:
        sts.assume_role(RoleArn=click.role_arn(account, REGION), RoleSessionName="mlreaper-central-stop")
    except ClientError as exc:
        return str(exc.response["Error"]["Code"])
    return "allowed"


def test_only_the_central_interactions_role_may_assume_a_members_central_action_role(organisation, aws):  # noqa: F811
    # Given the StackSet's member roles, and principals of the central account that may all call sts:AssumeRole
    member = organisation["members"][0]
    callers = {
        "the interactions function's role": _as_role(aws, click.INTERACTIONS_ROLE),
        "another role of the central account": _as_role(aws, "central-ops-admin"),
        "a role whose name only starts the same": _as_role(aws, click.INTERACTIONS_ROLE + "-2"),
        "an IAM user of the central account": _as_user(aws, "central-operator"),
        "the central account's root": aws.client("sts"),
    }
    # When each assumes the member's CentralActionRole, the trust policy enforced
    with trust_enforced():
        answers = {who: _assumes(sts, member) for who, sts in callers.items()}
    # Then only the interactions function's role is let in
    assert answers == {
        "the interactions function's role": "allowed",
        "another role of the central account": "AccessDenied",
        "a role whose name only starts the same": "AccessDenied",
        "an IAM user of the central account": "AccessDenied",
        "the central account's root": "AccessDenied",
    }


def test_the_member_template_names_the_role_central_yaml_makes():
    role = loads((ROOT / "template.yaml").read_text())["Resources"]["CentralActionRole"]["Properties"]
    [trust] = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${CentralAccountId}:root"}}
    assert trust["Condition"] == {
        "ArnEquals": {"aws:PrincipalArn": {"Fn::Sub": "arn:${AWS::Partition}:iam::${CentralAccountId}:role/" + click.INTERACTIONS_ROLE}}
    }
    central = loads((ROOT / "org" / "central.yaml").read_text())["Resources"]
    assert central["CentralInteractionsRole"]["Properties"]["RoleName"] == click.INTERACTIONS_ROLE


ROOT_ONLY = {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{CENTRAL}:root"}, "Action": "sts:AssumeRole"}


@pytest.mark.parametrize(
    ("condition", "principal", "trusted"),
    [
        (None, f"arn:aws:iam::{CENTRAL}:role/anything", True),  # no condition: the whole account (the old trust)
        ({"ArnEquals": {"aws:PrincipalArn": f"arn:aws:iam::{CENTRAL}:role/a"}}, f"arn:aws:iam::{CENTRAL}:role/a", True),
        ({"ArnEquals": {"aws:PrincipalArn": f"arn:aws:iam::{CENTRAL}:role/a"}}, f"arn:aws:iam::{CENTRAL}:role/b", False),
        ({"ArnEquals": {"aws:PrincipalArn": f"arn:aws:iam::{CENTRAL}:role/a"}}, None, False),  # the root
        ({"ArnLike": {"aws:PrincipalArn": f"arn:aws:iam::{CENTRAL}:role/a*"}}, f"arn:aws:iam::{CENTRAL}:role/ab", True),
        ({"StringEquals": {"aws:PrincipalArn": ["x", f"arn:aws:iam::{CENTRAL}:role/a"]}}, f"arn:aws:iam::{CENTRAL}:role/a", True),
        ({"StringEquals": {"aws:SourceIp": "10.0.0.1"}}, f"arn:aws:iam::{CENTRAL}:role/a", False),  # a key the kit does not know
        ({"NotArnEquals": {"aws:PrincipalArn": "x"}}, f"arn:aws:iam::{CENTRAL}:role/a", False),  # an operator it does not know
    ],
)
def test_the_kit_evaluates_aws_principal_arn_and_refuses_what_it_cannot_evaluate(condition, principal, trusted):
    statement = {**ROOT_ONLY, **({"Condition": condition} if condition else {})}
    assert trusts({"Version": "2012-10-17", "Statement": [statement]}, CENTRAL, principal) is trusted
