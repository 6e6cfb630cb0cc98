"""IAM actions each function needs, derived from what the code declares.

tests/unit/test_iam.py holds template.yaml to exactly these, and integration tests check that
every AWS call made is among them.
"""

from __future__ import annotations

from reaper import actionlog, outbox
from reaper import kinds as kind_registry

COMMON = set(actionlog.PERMISSIONS) | set(outbox.SQS_PERMISSIONS)
RESTORE_COMMON = set(actionlog.RECORD_PERMISSIONS) | set(outbox.SQS_PERMISSIONS)


def sweep_function_permissions(kind_name: str) -> set[str]:
    return kind_registry.get(kind_name).permissions() | COMMON


# boto3 service name -> IAM prefix, where they differ
SERVICE_PREFIX = {"resourcegroupstaggingapi": "tag", "monitoring": "cloudwatch"}
# operations whose IAM action has another name
OPERATION_ACTION = {"sqs:SendMessageBatch": "sqs:SendMessage", "sqs:DeleteMessageBatch": "sqs:DeleteMessage"}


def iam_action(service: str, operation: str) -> str:
    action = f"{SERVICE_PREFIX.get(service, service)}:{operation}"
    return OPERATION_ACTION.get(action, action)
