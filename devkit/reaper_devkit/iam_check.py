"""What IAM authorizes for each recorded AWS call, and whether a function's role in template.yaml allows it.

A call becomes one or more requests: its own action on the resource ARN it names (with the
condition keys the request carries), plus what AWS checks implicitly — the tag action when it
passes Tags at creation, iam:PassRole when it hands a role to a service. A request is granted when
an Allow statement names the action, a Resource pattern matches the ARN and every condition holds
(a condition on a key the request does not carry does not hold). The Deny backstop depends on
resource tags and is checked by tests/unit/test_iam.py instead.

ARN formats: the Service Authorization Reference of each service
(https://docs.aws.amazon.com/service-authorization/latest/reference/reference_policies_actions-resources-contextkeys.html).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reaper.sweep.iam import PASSES_ROLE, TAG_ON_CREATE
from reaper_devkit.template import attached_policies, function_statements, load, statement_actions

ACCOUNT = "123456789012"  # moto's account; template patterns are resolved for it
STACK_REGION = "us-east-1"  # the tests' region, where the stack would be


@dataclass(frozen=True)
class Request:
    action: str
    resource: str  # an ARN, or "*" for an action that takes no resource
    context: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __str__(self) -> str:
        extra = f" {dict(self.context)}" if self.context else ""
        return f"{self.action} on {self.resource}{extra}"


Params = Mapping[str, Any]
ArnOf = Callable[[str, str, Params], list[str]]  # (region, account, params) -> ARNs


def _sm(kind: str, param: str) -> ArnOf:
    return lambda region, account, p: [f"arn:aws:sagemaker:{region}:{account}:{kind}/{str(p[param]).lower()}"]


def _fsx(kind: str, param: str) -> ArnOf:
    return lambda region, account, p: [f"arn:aws:fsx:{region}:{account}:{kind}/{p[param]}"]


def _fsx_new(kind: str, new: str) -> ArnOf:
    return lambda region, account, p: [f"arn:aws:fsx:{region}:{account}:{kind}/{new}"]


def _both(*arns: ArnOf) -> ArnOf:
    return lambda region, account, p: [a for f in arns for a in f(region, account, p)]


def _target(region: str, account: str, p: Params) -> list[str]:
    return [f"arn:aws:application-autoscaling:{region}:{account}:scalable-target/new"]


def _alarm(region: str, account: str, p: Params) -> list[str]:
    names = p["AlarmNames"] if "AlarmNames" in p else [p["AlarmName"]]
    return [f"arn:aws:cloudwatch:{region}:{account}:alarm:{n}" for n in names]


RESOURCE_OF: dict[str, ArnOf] = {
    "sagemaker:StopNotebookInstance": _sm("notebook-instance", "NotebookInstanceName"),
    "sagemaker:UpdateNotebookInstance": _sm("notebook-instance", "NotebookInstanceName"),
    "sagemaker:CreatePresignedNotebookInstanceUrl": _sm("notebook-instance", "NotebookInstanceName"),
    # CreatePresignedDomainUrl "Creates a URL for a specified UserProfile in a Domain": its resource is the user profile
    "sagemaker:CreatePresignedDomainUrl": lambda region, account, p: [
        f"arn:aws:sagemaker:{region}:{account}:user-profile/{p['DomainId']}/{str(p['UserProfileName']).lower()}"
    ],
    "sagemaker:StopTrainingJob": _sm("training-job", "TrainingJobName"),
    "sagemaker:StopProcessingJob": _sm("processing-job", "ProcessingJobName"),
    "sagemaker:StopHyperParameterTuningJob": _sm("hyper-parameter-tuning-job", "HyperParameterTuningJobName"),
    "sagemaker:UpdateTrainingJob": _sm("training-job", "TrainingJobName"),
    "sagemaker:StopTransformJob": _sm("transform-job", "TransformJobName"),
    "sagemaker:StopAutoMLJob": _sm("automl-job", "AutoMLJobName"),
    "sagemaker:DeleteEndpoint": _sm("endpoint", "EndpointName"),
    "sagemaker:UpdateEndpointWeightsAndCapacities": _sm("endpoint", "EndpointName"),
    "sagemaker:CreateEndpoint": _both(_sm("endpoint", "EndpointName"), _sm("endpoint-config", "EndpointConfigName")),
    "sagemaker:UpdateInferenceComponentRuntimeConfig": _sm("inference-component", "InferenceComponentName"),
    "sagemaker:AddTags": lambda region, account, p: [p["ResourceArn"]],
    "sagemaker:DeleteTags": lambda region, account, p: [p["ResourceArn"]],
    "fsx:DeleteFileSystem": _fsx("file-system", "FileSystemId"),
    "ec2:CancelCapacityReservation": lambda region, account, p: [
        f"arn:aws:ec2:{region}:{account}:capacity-reservation/{p['CapacityReservationId']}"
    ],
    "fsx:CreateBackup": _both(_fsx("file-system", "FileSystemId"), _fsx_new("backup", "backup-new")),
    "fsx:CreateDataRepositoryTask": _both(_fsx("file-system", "FileSystemId"), _fsx_new("task", "task-new")),
    "fsx:CreateFileSystemFromBackup": _both(_fsx("backup", "BackupId"), _fsx_new("file-system", "fs-new")),
    # association/<file system id>/<association id>; the request names only the association, so its file system is a placeholder
    "fsx:UpdateDataRepositoryAssociation": lambda region, account, p: [
        f"arn:aws:fsx:{region}:{account}:association/fs-of-association/{p['AssociationId']}"
    ],
    "fsx:TagResource": lambda region, account, p: [p["ResourceARN"]],
    "fsx:UntagResource": lambda region, account, p: [p["ResourceARN"]],
    "application-autoscaling:RegisterScalableTarget": _target,
    "application-autoscaling:DeregisterScalableTarget": _target,
    "application-autoscaling:PutScalingPolicy": _target,
    "application-autoscaling:DeleteScalingPolicy": _target,
    "cloudwatch:PutMetricAlarm": _alarm,
    "cloudwatch:DeleteAlarms": _alarm,
    "scheduler:CreateSchedule": lambda region, account, p: [
        f"arn:aws:scheduler:{region}:{account}:schedule/{p.get('GroupName', 'default')}/{p['Name']}"
    ],
    "scheduler:DeleteSchedule": lambda region, account, p: [
        f"arn:aws:scheduler:{region}:{account}:schedule/{p.get('GroupName', 'default')}/{p['Name']}"
    ],
    "logs:FilterLogEvents": lambda region, account, p: [f"arn:aws:logs:{region}:{account}:log-group:{p['logGroupName']}"],
    "s3:ListBucket": lambda region, account, p: [f"arn:aws:s3:::{p['Bucket']}"],
    "logs:DescribeLogStreams": lambda region, account, p: [f"arn:aws:logs:{region}:{account}:log-group:{p['logGroupName']}"],
    "dynamodb:PutItem": lambda region, account, p: [f"arn:aws:dynamodb:{region}:{account}:table/{p['TableName']}"],
    "dynamodb:Query": lambda region, account, p: [f"arn:aws:dynamodb:{region}:{account}:table/{p['TableName']}"],
    "dynamodb:DeleteItem": lambda region, account, p: [f"arn:aws:dynamodb:{region}:{account}:table/{p['TableName']}"],
    "dynamodb:UpdateItem": lambda region, account, p: [f"arn:aws:dynamodb:{region}:{account}:table/{p['TableName']}"],
    # BatchWriteItem names its tables as the keys of RequestItems
    "dynamodb:BatchWriteItem": lambda region, account, p: [f"arn:aws:dynamodb:{region}:{account}:table/{t}" for t in p["RequestItems"]],
    # Budgets ARNs have no region; DescribeBudgets names no budget: it reads the account's budgets
    "budgets:ViewBudget": lambda region, account, p: [f"arn:aws:budgets::{account}:budget/{p.get('BudgetName', '*')}"],
    "budgets:ModifyBudget": lambda region, account, p: [
        f"arn:aws:budgets::{account}:budget/{(p.get('Budget') or p.get('NewBudget') or p)['BudgetName']}"
    ],
    "sqs:SendMessage": lambda region, account, p: [f"arn:aws:sqs:{region}:{account}:{str(p['QueueUrl']).rstrip('/').rsplit('/', 1)[-1]}"],
}
# where the tag-on-create authorization lands: the resource the call creates
CREATED = {
    "sagemaker:CreateEndpoint": _sm("endpoint", "EndpointName"),
    "fsx:CreateBackup": _fsx_new("backup", "backup-new"),
    "fsx:CreateDataRepositoryTask": _fsx_new("task", "task-new"),
    "fsx:CreateFileSystemFromBackup": _fsx_new("file-system", "fs-new"),
}


TAG_WRITES_WITH_KEYS = frozenset({"sagemaker:AddTags", "fsx:TagResource", "ec2:CreateTags"})


def _context(action: str, p: Params) -> dict[str, tuple[str, ...]]:
    if action.startswith("application-autoscaling:") and "ServiceNamespace" in p:
        return {
            "application-autoscaling:service-namespace": (p["ServiceNamespace"],),
            "application-autoscaling:scalable-dimension": (p["ScalableDimension"],),
        }
    if action in TAG_WRITES_WITH_KEYS and p.get("Tags"):
        # aws:TagKeys: the keys in the request (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-tagkeys)
        return {"aws:TagKeys": tuple(str(t.get("Key")) for t in p["Tags"])}
    if action == "cloudwatch:PutMetricAlarm":
        actions = [*p.get("AlarmActions", []), *p.get("OKActions", []), *p.get("InsufficientDataActions", [])]
        return {"cloudwatch:AlarmActions": tuple(actions)} if actions else {}
    return {}


# "Permissions for Put, Update, Delete, and Get actions are governed by the permissions used for the
# underlying PutItem, UpdateItem, DeleteItem, and GetItem operations. For the ConditionCheck action, you
# can use the dynamodb:ConditionCheckItem permission" (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html)
TRANSACT_WRITE = "dynamodb:TransactWriteItems"
TRANSACT_ITEM_ACTION = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
}


# Application Auto Scaling checks that its caller may use CloudWatch alarms before it proceeds: as the
# caller, it sends PutMetricAlarm and DeleteAlarms with no alarm name and DescribeAlarms with one record
# ("Application Auto Scaling validates permissions for requests associated with both the target service
# and CloudWatch before proceeding with the request",
# https://docs.aws.amazon.com/autoscaling/application/userguide/security_iam_permission_validation.html).
# A request naming no alarm is authorized on the alarm ARN with an empty name (`...:alarm:`).
AUTOSCALING_WRITES = frozenset(
    {
        "application-autoscaling:RegisterScalableTarget",
        "application-autoscaling:DeregisterScalableTarget",
        "application-autoscaling:PutScalingPolicy",
        "application-autoscaling:DeleteScalingPolicy",
    }
)


def autoscaling_validation(region: str, account: str = ACCOUNT) -> list[Request]:
    unnamed = f"arn:aws:cloudwatch:{region}:{account}:alarm:"
    return [
        Request("cloudwatch:PutMetricAlarm", unnamed),
        Request("cloudwatch:DeleteAlarms", unnamed),
        Request("cloudwatch:DescribeAlarms", "*"),
    ]


def on_behalf(done: Iterable[tuple[str, str, str, str, tuple[str, ...]]]) -> list[Request]:
    """The alarms AWS made or deleted for an Application Auto Scaling caller (the kit's journal,
    moto_ext.autoscaling_sagemaker.ON_BEHALF), as requests the caller must be allowed."""
    out: list[Request] = []
    for action, region, account, name, actions in done:
        context = {"cloudwatch:AlarmActions": actions} if actions else {}
        out.append(Request(action, f"arn:aws:cloudwatch:{region}:{account}:alarm:{name}", context))
    return out


def requests_for(action: str, params: Params, region: str, account: str = ACCOUNT) -> list[Request]:
    """Everything IAM authorizes for one call of `action` with these parameters."""
    if action == TRANSACT_WRITE:  # each item is authorized as its own operation
        return [
            r
            for item in params["TransactItems"]
            for op, body in item.items()
            for r in requests_for(TRANSACT_ITEM_ACTION[op], body, region, account)
        ]
    arns = RESOURCE_OF[action](region, account, params) if action in RESOURCE_OF else ["*"]
    context = _context(action, params)
    out = [Request(action, arn, context) for arn in arns]
    if action in TAG_ON_CREATE and params.get("Tags"):
        out += [Request(TAG_ON_CREATE[action], arn) for arn in CREATED[action](region, account, params)]
    if action in AUTOSCALING_WRITES:
        out += autoscaling_validation(region, account)
    role = (params.get("Target") or {}).get("RoleArn") if action in PASSES_ROLE else None
    if role:
        out.append(Request("iam:PassRole", role, {"iam:PassedToService": (PASSES_ROLE[action],)}))
    return out


# -- the template's side ---------------------------------------------------------------------


def _sub(text: str) -> str:
    fixed = {"AWS::Partition": "aws", "AWS::AccountId": ACCOUNT, "AWS::Region": STACK_REGION}
    return re.sub(r"\$\{([^}]+)\}", lambda m: fixed.get(m.group(1), "*"), text)


def _get_att(target: str) -> list[str]:
    logical_id, _ = target.split(".", 1)
    kind = load()["Resources"][logical_id]["Type"]
    pattern = {
        "AWS::DynamoDB::Table": f"arn:aws:dynamodb:*:{ACCOUNT}:table/*",
        "AWS::SQS::Queue": f"arn:aws:sqs:*:{ACCOUNT}:*",
        "AWS::IAM::Role": f"arn:aws:iam::{ACCOUNT}:role/*{logical_id}*",  # CloudFormation names roles after the logical id
        "AWS::Serverless::Function": f"arn:aws:lambda:*:{ACCOUNT}:function:*",
    }.get(kind)
    if pattern is None:
        raise ValueError(f"no ARN pattern for !GetAtt {target} ({kind})")
    return [pattern]


def patterns(value: Any) -> list[str]:
    """The ARN patterns a template value stands for (every branch of an !If)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [p for v in value for p in patterns(v)]
    if "Sub" in value:
        return [_sub(value["Sub"] if isinstance(value["Sub"], str) else value["Sub"][0])]
    if "GetAtt" in value:
        return _get_att(value["GetAtt"])
    if "If" in value:
        return patterns(value["If"][1]) + patterns(value["If"][2])
    if "Ref" in value:
        return [f"arn:aws:*:*:{ACCOUNT}:*"]
    raise ValueError(f"cannot read Resource {value!r}")


def _glob(pattern: str) -> re.Pattern[str]:
    """IAM wildcards: * any run of characters, ? one character."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern) + r"\Z")


def _matches(pattern: str, value: str) -> bool:
    return bool(_glob(pattern).match(value))


def _holds(condition: Mapping[str, Mapping[str, Any]], context: Mapping[str, tuple[str, ...]]) -> bool:  # noqa: C901 - one case per operator
    for operator, tests in condition.items():
        for key, wanted in tests.items():
            allowed = [wanted] if isinstance(wanted, str | dict) else list(wanted)
            allowed_text = [p for w in allowed for p in patterns(w)]
            have = context.get(key)
            if operator == "Null":
                if (have is None) != (str(wanted).lower() == "true"):
                    return False
            elif have is None:
                return False
            elif operator == "StringEquals":
                if not all(v in allowed_text for v in have):
                    return False
            elif operator == "StringEqualsIgnoreCase":  # the Deny backstop's operator (DenyExempt, DenyProduction)
                if not all(v.lower() in {a.lower() for a in allowed_text} for v in have):
                    return False
            # ForAllValues:StringEquals is matched as a glob: a template parameter in a !Sub reads as `*` here
            elif operator in ("StringLike", "ForAllValues:StringLike", "ForAllValues:StringEquals"):
                if not all(any(_matches(a, v) for a in allowed_text) for v in have):
                    return False
            else:
                raise ValueError(f"condition operator {operator} is not modelled here")
    return True


def granted(request: Request, statements: Iterable[Mapping[str, Any]]) -> bool:
    for stmt in statements:
        if stmt.get("Effect") != "Allow" or request.action not in statement_actions(stmt):
            continue
        if not any(_matches(p, request.resource) for p in patterns(stmt["Resource"])):
            continue
        if _holds(stmt.get("Condition", {}), request.context):
            return True
    return False


def ungranted(requests: Iterable[Request], logical_id: str, conditions: Collection[str] | None = None) -> list[str]:
    """The requests the function's role does not allow, as text (empty = all granted), in a deployment
    where the template's `conditions` hold (default: its parameters' defaults)."""
    stmts = function_statements(logical_id, conditions)
    return sorted({str(r) for r in requests if not granted(r, stmts)})


# -- the Deny backstop, as deployed ---------------------------------------------------------------
# "An explicit deny in any of these policies overrides the allow"
# (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html): a request the role's
# Allow statements grant is still refused when a Deny statement on the role matches it. The backstop's Deny
# statements compare the resource's tags (`aws:ResourceTag/<key>`, one value each) with StringEqualsIgnoreCase;
# a request whose resource lacks the tag does not match them (a condition on a key the request does not carry
# does not hold).


def resource_tagged(request: Request, tags: Mapping[str, str]) -> Request:
    """The request with its resource's tags as IAM reads them at the call: `aws:ResourceTag/<key>` (the key as written)."""
    return Request(request.action, request.resource, {**request.context, **{f"aws:ResourceTag/{k}": (v,) for k, v in tags.items()}})


def _cfn(node: Any, params: Mapping[str, str]) -> str:
    """A !Sub variable's value for these parameter values (Ref, Split then Join: what the backstop uses); else refused."""
    if isinstance(node, str):
        return node
    if "Ref" in node:
        return params[node["Ref"]]
    if "Join" in node:
        sep, items = node["Join"]
        parts = items["Split"] if isinstance(items, dict) else None
        values = _cfn(parts[1], params).split(parts[0]) if parts else [_cfn(i, params) for i in items]
        return str(sep).join(values)
    raise ValueError(f"!Sub variable not modelled: {node}")


def _substituted(text: str, values: Mapping[str, str]) -> str:
    """!Sub's text with every ${Name} replaced by its value (a name without one is refused, never guessed)."""
    return re.sub(r"\$\{([^}]+)\}", lambda m: values[m.group(1)], text)


def deny_statements(logical_id: str, params: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The Deny statements of the policies attached to the function's role, their !Sub text resolved for these
    parameter values (default: the template's defaults), so a tag key and the stages read as deployed."""
    t = load()
    values = {name: str(p.get("Default", "")) for name, p in t.get("Parameters", {}).items()} | dict(params or {})
    out: list[dict[str, Any]] = []
    for name, (_, variables) in attached_policies(logical_id).items():
        doc = t["Resources"][name]["Properties"]["PolicyDocument"]["Sub"]
        text = doc if isinstance(doc, str) else doc[0]
        pseudo = {"AWS::Partition": "aws", "AWS::AccountId": ACCOUNT, "AWS::Region": STACK_REGION}
        subs = {**values, **pseudo, **{k: _cfn(v, values) for k, v in variables.items()}}
        resolved = json.loads(_substituted(text, subs))
        out.extend(stmt for stmt in resolved["Statement"] if stmt.get("Effect") == "Deny")
    return out


def denied(request: Request, statements: Iterable[Mapping[str, Any]]) -> str | None:
    """The Sid of the first Deny statement that matches the request (action, resource, conditions), or None."""
    for stmt in statements:
        if stmt.get("Effect") != "Deny" or request.action not in statement_actions(dict(stmt)):
            continue
        if any(_matches(p, request.resource) for p in patterns(stmt["Resource"])) and _holds(stmt.get("Condition", {}), request.context):
            return str(stmt.get("Sid", "Deny"))
    return None


def decision(request: Request, logical_id: str, params: Mapping[str, str] | None = None) -> str:
    """What the function's role, as deployed with these parameter values, answers to the request: "denied by <Sid>"
    (an explicit Deny matches it), "allowed", or "not granted" (no Allow matches it)."""
    sid = denied(request, deny_statements(logical_id, params))
    if sid is not None:
        return f"denied by {sid}"
    return "allowed" if granted(request, function_statements(logical_id)) else "not granted"
