"""IAM actions each function needs, derived from what the code declares.

tests/unit/test_iam.py holds template.yaml to exactly these (and to the Deny backstop on exempt
and production resources); integration tests check that every AWS call made is granted, on the
resource it names.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from reaper import kinds
from reaper.aws import pricing
from reaper.aws.tagging import TAG_WRITE_PERMISSIONS
from reaper.record import actionlog, forward, org_settings_reader, outbox
from reaper.sweep import continuation

# every sweep function: the action log, the queue, arranging the next part of a long sweep, and list prices
COMMON = set(actionlog.PERMISSIONS) | set(outbox.SQS_PERMISSIONS) | set(continuation.PERMISSIONS) | set(pricing.PERMISSIONS)
CENTRAL_BUS = "HasCentralBus"  # template.yaml's condition: the stack forwards its records to the organisation
CENTRAL_SETTINGS = "ReadsCentralSettings"  # ... and reads its account's modes from the central settings table
RESTORE_COMMON = set(actionlog.RECORD_PERMISSIONS) | set(outbox.SQS_PERMISSIONS)

# Services whose resources the kinds sweep: a change there is a change to the user's resource.
SWEPT_SERVICES = ("sagemaker", "fsx", "ec2", "bedrock")
READ_VERBS = ("Describe", "List", "Get", "Search")
# Permissions of another service that act on a swept resource itself (a command run on an EC2 instance)
ACTS_ON_SWEPT = frozenset({"ssm:SendCommand"})
TAG_WRITES = frozenset(p for perms in TAG_WRITE_PERMISSIONS.values() for p in perms)
# Services that are a swept resource's own door, read only with the admin's consent (a tracking server's MLflow
# API: MlflowReads): their reads are denied on exempt and production resources like a change (docs/kinds/mlflow.md)
CONSENT_SERVICES = ("sagemaker-mlflow",)

# Permissions AWS checks beyond the operation's own action. Tag-on-create: an operation that
# passes Tags is also authorized as the service's tag action on the resource it creates.
# https://docs.aws.amazon.com/sagemaker/latest/dg/security_iam_id-based-policy-examples.html#api-access-policy
# https://docs.aws.amazon.com/fsx/latest/LustreGuide/supported-iam-actions-tagging.html
TAG_ON_CREATE: dict[str, str] = {
    "sagemaker:CreateEndpoint": "sagemaker:AddTags",
    "fsx:CreateBackup": "fsx:TagResource",
    "fsx:CreateDataRepositoryTask": "fsx:TagResource",
    "fsx:CreateFileSystemFromBackup": "fsx:TagResource",
    # https://docs.aws.amazon.com/bedrock/latest/userguide/prov-thru-prereq.html (TagResource beside Create)
    "bedrock:CreateProvisionedModelThroughput": "bedrock:TagResource",
    # "To tag a resource on creation, users must have permission to use the action that creates the resource, such as
    # ec2:CreateVolume [and] permission to use the ec2:CreateTags action"
    # https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/supported-iam-actions-tagging.html
    "ec2:CreateSnapshot": "ec2:CreateTags",
    "ec2:CreateVolume": "ec2:CreateTags",
}
# Dependent actions: "The Dependent actions column of the Actions table shows additional permissions
# that are required to successfully call an action" (Service Authorization Reference).
# - RegisterScalableTarget: "When users call RegisterScalableTarget, Application Auto Scaling creates a
#   service-linked role in your account, if the role does not exist already ... For automatic role
#   creation to succeed, users must have permissions for the iam:CreateServiceLinkedRole action."
#   https://docs.aws.amazon.com/autoscaling/application/userguide/auth-and-access-control.html
#   (granted only for sagemaker.application-autoscaling.amazonaws.com's role: template.yaml)
# - PutScalingPolicy / DeleteScalingPolicy: the caller also needs CloudWatch permissions on the
#   alarms ("You also need to make sure that end users have permissions for the target service and
#   CloudWatch"): https://docs.aws.amazon.com/autoscaling/application/userguide/security_iam_id-based-policy-examples.html
# - fsx:CreateFileSystemFromBackup: ec2:GetSecurityGroupsForVpc among its dependent actions
#   https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonfsx.html
# Application Auto Scaling validates, as the caller of each of its writes, that the caller may describe, put
# and delete CloudWatch alarms (requests naming no alarm), and makes and deletes a target-tracking policy's
# alarms: docs/aws-assumptions.md, "Wakes, and the alarms of target tracking".
_ALARMS = ("cloudwatch:DescribeAlarms", "cloudwatch:PutMetricAlarm", "cloudwatch:DeleteAlarms")
DEPENDENT_ACTIONS: dict[str, tuple[str, ...]] = {
    "application-autoscaling:RegisterScalableTarget": ("iam:CreateServiceLinkedRole", *_ALARMS),
    "application-autoscaling:DeregisterScalableTarget": _ALARMS,
    "application-autoscaling:PutScalingPolicy": _ALARMS,
    "application-autoscaling:DeleteScalingPolicy": _ALARMS,
    "fsx:CreateFileSystemFromBackup": ("ec2:GetSecurityGroupsForVpc",),
}
# An operation that hands a role to a service needs iam:PassRole on that role, for that service.
PASSES_ROLE: dict[str, str] = {"scheduler:CreateSchedule": "scheduler.amazonaws.com"}


def sweep_function_permissions(kind_name: str, conditions: Collection[str] | None = None) -> set[str]:
    """What the kind's sweep function calls, in a deployment where the template's `conditions` hold
    (None: every conditional read too, i.e. whatever any deployment may call)."""
    central = set(forward.PERMISSIONS) if conditions is None or CENTRAL_BUS in conditions else set()
    if conditions is None or CENTRAL_SETTINGS in conditions:
        central |= set(org_settings_reader.PERMISSIONS)
    return kinds.get(kind_name).permissions(conditions) | COMMON | central


def restore_function_permissions() -> set[str]:
    """What `reaper restore` calls, for every kind that has a restorer, plus the log and queue."""
    perms: set[str] = set()
    for kind in kinds.all_kinds():
        perms |= kind.restore_permissions()
    return perms | RESTORE_COMMON


def destructive(permissions: Iterable[str]) -> set[str]:
    """The permissions that change a swept resource itself: in its service, not a read, not a tag write.

    Writing reaper:warned-at stays allowed on a resource that became exempt: clearing it is how a
    warning ends. Autoscaling targets, alarms and schedules are not the user's resource; they are
    scoped by resource and condition instead (see template.yaml).
    """
    return {
        p
        for p in permissions
        if p in ACTS_ON_SWEPT or (p.split(":")[0] in SWEPT_SERVICES and not p.split(":")[1].startswith(READ_VERBS) and p not in TAG_WRITES)
    }


def kind_destructive(kind_name: str) -> set[str]:
    """Every destructive permission the kind's actions declare."""
    kind = kinds.get(kind_name)
    return destructive(p for action in kind.actions.values() for p in action.permissions)


def kind_denied(kind_name: str) -> set[str]:
    """What the Deny backstop must cover for the kind: its destructive permissions, and the reads made only
    with the admin's consent that hold more power than a read (a notebook's presigned URL opens its Jupyter)."""
    kind = kinds.get(kind_name)
    conditional = [p for perms in kind.declaration.conditional_permissions.values() for p in perms]
    consent = destructive(conditional) | {p for p in conditional if p.split(":")[0] in CONSENT_SERVICES}
    return kind_destructive(kind_name) | consent


def implied(permissions: Iterable[str]) -> set[str]:
    """What AWS also checks when these are used (tag-on-create, role passing, dependent actions)."""
    out: set[str] = set()
    for p in permissions:
        if p in TAG_ON_CREATE:
            out.add(TAG_ON_CREATE[p])
        if p in PASSES_ROLE:
            out.add("iam:PassRole")
        out.update(DEPENDENT_ACTIONS.get(p, ()))
    return out


# boto3 service name -> IAM prefix, where they differ
SERVICE_PREFIX = {"resourcegroupstaggingapi": "tag", "monitoring": "cloudwatch"}
# operations whose IAM action has another name
OPERATION_ACTION = {
    "sqs:SendMessageBatch": "sqs:SendMessage",
    "sqs:DeleteMessageBatch": "sqs:DeleteMessage",
    # AWS Budgets authorizes its API by two actions
    # https://docs.aws.amazon.com/cost-management/latest/userguide/budgets-permissions.html
    "budgets:DescribeBudgets": "budgets:ViewBudget",
    "budgets:DescribeBudget": "budgets:ViewBudget",
    "budgets:CreateBudget": "budgets:ModifyBudget",
    "budgets:UpdateBudget": "budgets:ModifyBudget",
    # https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html: "you must have READ access to the bucket" (s3:ListBucket)
    "s3:ListObjectsV2": "s3:ListBucket",
}


def iam_action(service: str, operation: str) -> str:
    action = f"{SERVICE_PREFIX.get(service, service)}:{operation}"
    return OPERATION_ACTION.get(action, action)


# What `reaper iam --read-only` grants (docs/try-read-only.md): the operations whose names begin with these
# verbs read and change nothing (pricing:GetProducts, cloudwatch:GetMetricData, logs:FilterLogEvents, ...;
# cloudtrail:LookupEvents, access level Read: https://docs.aws.amazon.com/service-authorization/latest/reference/list_awscloudtrail.html)
READ_ONLY_VERBS = (*READ_VERBS, "Filter", "BatchGet", "Lookup")
# Operations that need no IAM permission: "No permissions are required to perform this operation."
# https://docs.aws.amazon.com/STS/latest/APIReference/API_GetCallerIdentity.html
NO_PERMISSION_NEEDED = frozenset({"sts:GetCallerIdentity"})


def is_read(permission: str) -> bool:
    return permission.split(":", 1)[1].startswith(READ_ONLY_VERBS)


def read_only_permissions(kind_names: Iterable[str]) -> set[str]:
    """What `reaper plan` and `reaper coverage` may call for these kinds: each kind's dry-run reads (discovery,
    signals, tags, list prices: `Kind.dry_run_reads`). None of its writes, none of the reads only a change or
    an event makes (the gate's re-read, an action's), none a stack condition turns on (the Jupyter and Systems
    Manager readings need the admin's consent), and no call that needs no permission."""
    perms: set[str] = set()
    for name in kind_names:
        perms |= {p for p in kinds.get(name).dry_run_reads() if is_read(p)}
    return perms - NO_PERMISSION_NEEDED


def untriggered_reads(kind_names: Iterable[str]) -> dict[str, str]:
    """The dry-run reads of these kinds that the test kit cannot bring about, each with why (the kinds' declarations)."""
    out: dict[str, str] = {}
    for name in kind_names:
        out.update(kinds.get(name).declaration.untriggered_reads)
    return out


def read_only_policy(kind_names: Iterable[str]) -> dict[str, object]:
    """An IAM identity policy (JSON) granting `read_only_permissions`, on every resource: reads name none."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "MlreaperPlanReadOnly",
                "Effect": "Allow",
                "Action": sorted(read_only_permissions(kind_names)),
                "Resource": "*",
            }
        ],
    }
