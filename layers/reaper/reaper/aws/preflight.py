"""The CLI's configuration, checked before a command makes its first real call.

Each check raises one `ConfigError` naming what is wrong (the CLI prints it on one line and exits 2),
instead of letting every kind in every region fail on its own with the same cause. Nothing here
runs in the deployed functions: their configuration is the stack's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError, ProfileNotFound
from botocore.utils import is_valid_endpoint_url, is_valid_ipv6_endpoint_url

from reaper.aws.faults import error_code
from reaper.core.errors import ConfigError, CredentialsError

# Regions are checked against the SageMaker endpoints in botocore's own partition data: every kind
# is a SageMaker or GPU resource, and a region SageMaker is not in has nothing to sweep.
REGION_SERVICE = "sagemaker"


def session(profile: str | None = None) -> boto3.session.Session:
    """A session for `profile` (or AWS_PROFILE); an unknown profile is a configuration error."""
    try:
        return boto3.session.Session(profile_name=profile)
    except ProfileNotFound as exc:
        name = exc.kwargs.get("profile", profile)
        raise ConfigError(f"AWS profile {name!r} is not in your AWS config files (aws configure list-profiles shows them)") from None


def check_credentials(s: boto3.session.Session) -> None:
    """Credentials from the standard chain, resolved now (no AWS call): none is exit 3, not a row per kind."""
    try:
        found = s.get_credentials()
    except BotoCoreError as exc:  # an expired SSO token, a broken credential_process
        raise CredentialsError(f"AWS credentials could not be loaded: {exc}") from None
    if found is None:
        raise CredentialsError("no AWS credentials found (standard chain: AWS_PROFILE, AWS_ACCESS_KEY_ID, ~/.aws, instance role)")


def check_endpoints(s: boto3.session.Session, environ: Mapping[str, str]) -> None:
    """Each endpoint the configuration sets (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>, the profile's
    endpoint_url) is a URL as botocore accepts one, or the command stops here in one line (exit 2) instead of
    in a traceback at the first client ("Invalid endpoint: localhost:4566")."""
    if environ.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").strip().lower() == "true":  # botocore uses none of them
        return
    configured = [(k, v) for k, v in environ.items() if k.startswith("AWS_ENDPOINT_URL") and v.strip()]
    profile_url = s._session.get_scoped_config().get("endpoint_url") if s.profile_name in s.available_profiles else None
    if isinstance(profile_url, str):
        configured.append((f"endpoint_url of profile {s.profile_name}", profile_url))
    for name, url in configured:
        if not (is_valid_endpoint_url(url) or is_valid_ipv6_endpoint_url(url)):
            raise ConfigError(f"{name}={url!r} is not a URL: give its scheme and host, e.g. http://localhost:4566")


def check_reach(sts: Any) -> None:
    """One call before a sweep, which needs no permission ("No permissions are required to perform this
    operation": https://docs.aws.amazon.com/STS/latest/APIReference/API_GetCallerIdentity.html): credentials
    AWS refuses are exit 3 and an endpoint that cannot be reached exit 4, each in one line, instead of an
    `error` row for every kind in every region."""
    sts.get_caller_identity()


def known_regions(s: boto3.session.Session) -> set[str]:
    regions: set[str] = set()
    for partition in s.get_available_partitions():
        regions.update(s.get_available_regions(REGION_SERVICE, partition_name=partition))
    return regions


def check_regions(s: boto3.session.Session, regions: Iterable[str]) -> None:
    """Refuse a region botocore does not know for SageMaker at once; a typo otherwise costs every
    client its connect timeouts and retries (36 s for `us-moon-1`) before failing."""
    known = known_regions(s)
    for region in regions:
        if region not in known:
            raise ConfigError(f"unknown region {region!r}: SageMaker is not in it (e.g. us-east-1, eu-west-1; names are lower case)")


def check_table(dynamodb: Any, table: str, region: str) -> None:
    """The action-log table exists and can be read: one Query of a key that is never written (the
    permission every reader of the log has already; DescribeTable would be one more to grant)."""
    try:
        dynamodb.query(
            TableName=table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": "PREFLIGHT#never-written"}},
            Limit=1,
        )
    except ClientError as exc:  # an unreachable endpoint (BotoCoreError) goes on to the CLI too: exit 4
        if error_code(exc) == "ResourceNotFoundException":
            raise ConfigError(
                f"action-log table {table!r} not found in {region}: create it with `reaper init --table {table}`, "
                "or set REAPER_TABLE to the stack's ActionLogTable"
            ) from None
        raise  # denied, throttled, refused credentials: the CLI's exit 4 or 3 (reaper/cli/exits.py), not a usage error
