"""Stop now, clicked in the central account: forwarded to the member account's own kind function.

The central side decides nothing: it assumes the member's CentralActionRole (trusted by the central
interactions function's role only, INTERACTIONS_ROLE; allowed to invoke the member's sweep functions and nothing else) and hands the click
to the function that logged the resource, which runs `reaper.slack.stop.stop_now`, the same gate as
a sweep (protection, state, the kind's reasons to keep) in the member's account.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, TypedDict

import boto3

from reaper.aws.clients import RETRY_CONFIG
from reaper.core.errors import BadEventError
from reaper.core.events import parse_eventbridge, parse_stop_now
from reaper.record.actionlog import ActionLog
from reaper.record.logentry import LogEntry

PERMISSIONS = ("sts:AssumeRole",)
LOOKBACK = timedelta(days=7)  # a digest's button is for a resource logged this week
ROLE_PREFIX = "mlreaper-central-action-"  # + the member stack's region (IAM role names are account-wide)
# The central interactions function's role (org/central.yaml): the only principal a member's CentralActionRole
# trusts (template.yaml, aws:PrincipalArn), so nothing else in the central account can hand a member a Stop now
INTERACTIONS_ROLE = "mlreaper-central-interactions"


class Credentials(TypedDict):
    """AssumeRole's temporary credentials (https://docs.aws.amazon.com/STS/latest/APIReference/API_Credentials.html)."""

    AccessKeyId: str
    SecretAccessKey: str
    SessionToken: str
    Expiration: datetime


# (assumed-role credentials, region) -> a Lambda client in the member account
LambdaFor = Callable[[Credentials, str], Any]


def role_arn(account: str, region: str, partition: str = "aws") -> str:
    return f"arn:{partition}:iam::{account}:role/{ROLE_PREFIX}{region}"


def interactions_role_arn(central_account: str, partition: str = "aws") -> str:
    """The principal each member's CentralActionRole trusts (its aws:PrincipalArn)."""
    return f"arn:{partition}:iam::{central_account}:role/{INTERACTIONS_ROLE}"


def function_for(entries: list[LogEntry], arn: str) -> str | None:
    """The member function that last logged `arn` (the forwarded records carry its name)."""
    named = [e.function for e in entries if e.arn == arn and e.function]
    return named[-1] if named else None


class Forwarded(TypedDict):
    """A Stop now handed to the member function that logged the resource."""

    forwarded: str  # the resource's ARN
    account: str
    region: str
    function: str


class Refused(TypedDict):
    refused: str


def forward_stop(sts: Any, lambda_for: LambdaFor, function: str, event: Mapping[str, object]) -> Forwarded:
    """Invoke the member's `function` with the Stop now event (asynchronously, as the member's own
    interactions function does); the member answers in the Slack thread itself. The event's detail is
    parsed first (reaper.core.events.StopNowDetail): a malformed one is a BadEventError and nothing is assumed or invoked."""
    detail = parse_stop_now(event.get("detail"))
    arn, parts = detail.arn, detail.arn.split(":")
    if len(parts) < 6 or not (parts[4].isdigit() and len(parts[4]) == 12):
        raise BadEventError(f"Stop now needs a resource ARN with its account, got {arn!r}")
    partition, region, account = parts[1], parts[3], parts[4]
    creds = sts.assume_role(RoleArn=role_arn(account, region, partition), RoleSessionName="mlreaper-central-stop")["Credentials"]
    client = lambda_for(creds, region)
    client.invoke(
        FunctionName=function, InvocationType="Event", Payload=json.dumps({**event, "account": account, "region": region}).encode()
    )
    return {"forwarded": arn, "account": account, "region": region, "function": function}


def stop_from_log(log: ActionLog, sts: Any, lambda_for: LambdaFor, event: Any, now: datetime) -> Forwarded | Refused:
    """A Stop now event for a member's resource: the function that logged it (in the organisation's log,
    the last LOOKBACK, sent by the resource's own account) gets it. A resource its account never logged
    is refused: there is no function to ask. A malformed event is a BadEventError before the log is read."""
    detail = parse_stop_now(parse_eventbridge(event).detail)
    arn, account = detail.arn, detail.account
    # only the account in the ARN may have logged it: the log's `account` is EventBridge's, the sender's
    function = function_for([e for e in log.entries(now - LOOKBACK, now) if e.account == account], arn)
    if function is None:
        return {"refused": f"{arn} is in no member's record of the last {LOOKBACK.days} days: nothing was forwarded"}
    return forward_stop(sts, lambda_for, function, event)


def boto_lambda_for(creds: Credentials, region: str) -> Any:
    """A Lambda client in the member account, with the assumed role's credentials."""
    return boto3.client(
        "lambda",
        region_name=region,
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
        config=RETRY_CONFIG,
    )
