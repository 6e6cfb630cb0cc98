"""Clients signed as someone else: with the credentials an AssumeRole answered, or as a principal outside the organisation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import boto3

from tests.conftest import REGION


def client_as(service: str, creds: Mapping[str, Any], region: str = REGION) -> Any:
    """A `service` client signed with AssumeRole's `Credentials` (its key, secret and session token)."""
    return boto3.client(
        service,
        region_name=region,
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
    )


def outsider(service: str) -> Any:
    """A `service` client of a role in account 999999999999, outside the organisation, assumed by its own user."""
    session = boto3.session.Session(aws_access_key_id="AKIAOUTSIDER", aws_secret_access_key="x", region_name=REGION)
    creds = session.client("sts").assume_role(RoleArn="arn:aws:iam::999999999999:role/x", RoleSessionName="outsider")["Credentials"]
    return client_as(service, creds)
