"""AWS idioms every kind needs, in one place: an error's code, "not found", a one-line message,
and a one-off EventBridge Scheduler schedule.

Services say "not found" in several ways: SageMaker with `ResourceNotFound` or, for a name that
does not exist, `ValidationException` "Could not find …"; FSx with `FileSystemNotFound`,
`BackupNotFound`, `DataRepositoryTaskNotFound`; Application Auto Scaling with
`ObjectNotFoundException`. Codes first; the SageMaker message only with `ValidationException`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypedDict

from botocore.exceptions import BotoCoreError, ClientError

NOT_FOUND_CODES = frozenset(
    {
        "ResourceNotFound",
        "ResourceNotFoundException",
        "RecordNotFound",
        "FileSystemNotFound",
        "BackupNotFound",
        "DataRepositoryTaskNotFound",
        "ObjectNotFoundException",
        "NoSuchEntity",
        # EC2: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html
        "InvalidVolume.NotFound",
        "InvalidSnapshot.NotFound",
    }
)
# SageMaker's words for a missing resource under ValidationException
# DescribeTrainingJob says "Requested resource not found." (https://github.com/aws/aws-sdk/issues/165)
_SAGEMAKER_MISSING = ("could not find", "does not exist", "requested resource not found", "no scalable target", "no scaling policy")

AwsError = (ClientError, BotoCoreError)


def error_code(exc: BaseException) -> str:
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code", ""))
    return ""


def is_not_found(exc: BaseException) -> bool:
    """Does this error say the thing asked about does not exist?"""
    if not isinstance(exc, ClientError):
        return False
    code = error_code(exc)
    if code in NOT_FOUND_CODES:
        return True
    message = str(exc.response.get("Error", {}).get("Message", "")).lower()
    return code == "ValidationException" and any(words in message for words in _SAGEMAKER_MISSING)


def short(exc: BaseException) -> str:
    """`Code: message` for a ClientError, the text for anything else: one line for a reason."""
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        return f"{err.get('Code', 'Error')}: {err.get('Message', '')}".strip()
    return " ".join(str(exc).split()) or type(exc).__name__


class RetryPolicy(TypedDict, total=False):
    """https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html"""

    MaximumEventAgeInSeconds: int
    MaximumRetryAttempts: int


class Target(TypedDict, total=False):
    """The members sent of https://docs.aws.amazon.com/scheduler/latest/APIReference/API_Target.html"""

    Arn: str
    RoleArn: str
    Input: str
    RetryPolicy: RetryPolicy


def create_one_off_schedule(
    scheduler: Any,
    *,
    name: str,
    group: str,
    at: datetime,
    timezone: str,
    target_arn: str,
    role_arn: str,
    payload: Mapping[str, object],
    description: str,
    retry: RetryPolicy | None = None,
) -> bool:
    """An EventBridge Scheduler `at()` schedule that deletes itself once it has run.

    Returns False when a schedule of that name exists already (a repeated delivery made it):
    names are derived from what they do, so that is the same schedule.
    """
    target: Target = {"Arn": target_arn, "RoleArn": role_arn, "Input": json.dumps(payload)}
    if retry:
        target["RetryPolicy"] = retry
    try:
        scheduler.create_schedule(
            Name=name,
            GroupName=group,
            Description=description,
            ScheduleExpression=f"at({at:%Y-%m-%dT%H:%M:%S})",
            ScheduleExpressionTimezone=timezone,
            FlexibleTimeWindow={"Mode": "OFF"},
            ActionAfterCompletion="DELETE",
            Target=target,
        )
    except ClientError as exc:
        if error_code(exc) == "ConflictException":
            return False
        raise
    return True
