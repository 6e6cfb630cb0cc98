"""Least privilege: each function's role in template.yaml grants exactly what its code declares.

Integration tests complete the check from the other side: every call they record is granted.
"""

from __future__ import annotations

import re

import pytest

from reaper import kinds
from reaper.aws.tagging import TAG_WRITE_PERMISSIONS
from reaper.kinds.endpoint.autoscaling import wake_alarm_name
from reaper.sweep.iam import (
    COMMON,
    READ_VERBS,
    iam_action,
    implied,
    kind_denied,
    kind_destructive,
    restore_function_permissions,
    sweep_function_permissions,
)
from reaper_devkit.iam_check import Request, granted
from reaper_devkit.template import (
    attached_policies,
    default_conditions,
    function_actions,
    function_statements,
    load,
    resolve_ifs,
    statement_actions,
    sweep_functions,
)

FUNCTIONS = {k: v for k, v in load()["Resources"].items() if v["Type"] == "AWS::Serverless::Function"}


CONDITIONS = sorted(load().get("Conditions", {}))


@pytest.mark.parametrize("held", [frozenset(), frozenset(CONDITIONS)], ids=["no-condition-holds", "every-condition-holds"])
@pytest.mark.parametrize("kind", sorted(kinds.REGISTRY))
def test_each_kind_has_a_function_whose_role_is_exactly_its_declared_permissions(kind, held):
    # each way the template's conditions go (AgentChannel=metric: no Logs read; logs: FilterLogEvents)
    functions = sweep_functions()
    assert kind in functions, f"no function in template.yaml has Metadata ReaperKind: {kind}"
    granted = function_actions(functions[kind], held)
    declared = sweep_function_permissions(kind, held)
    assert granted - declared == set(), f"granted but never called: {sorted(granted - declared)}"
    assert declared - granted == set(), f"called but not granted: {sorted(declared - granted)}"


def test_every_conditional_permission_names_a_template_condition():
    for kind in kinds.REGISTRY.values():
        assert set(kind.declaration.conditional_permissions) <= set(CONDITIONS), kind.name


def test_the_default_deployment_reads_the_contract_metric_and_never_logs():
    # Given the template's defaults (AgentChannel=metric)
    assert "UseLogsChannel" not in default_conditions()
    actions = function_actions(sweep_functions()["notebook"])
    # Then the notebook function may read the metric and may not call CloudWatch Logs at all
    assert "cloudwatch:GetMetricData" in actions and not {a for a in actions if a.startswith("logs:")}
    # and with logs, FilterLogEvents on the stack's log group only
    [stmt] = [s for s in function_statements("NotebookFunction", {"UseLogsChannel"}) if "logs:FilterLogEvents" in statement_actions(s)]
    assert statement_actions(stmt) == {"logs:FilterLogEvents"}
    assert all("log-group:/mlreaper/${AgentLifecycleConfigName}" in r["Sub"] for r in stmt["Resource"])


@pytest.mark.parametrize("kind", sorted(kinds.REGISTRY))
def test_every_action_declares_permissions_and_origin_states(kind):
    for action in kinds.REGISTRY[kind].actions.values():
        assert action.permissions, f"{kind}.{action.name} declares no IAM permissions"
        assert action.valid_origin_states, f"{kind}.{action.name} declares no valid origin states"


def test_notifier_reads_its_secret_and_writes_only_its_post_claims():
    from reaper.slack import notifier

    assert function_actions("NotifierFunction") == set(notifier.PERMISSIONS)
    # DiscountAwareSavings=on: the digest's Cost Explorer read, and nothing else
    for condition, extra in notifier.CONDITIONAL_PERMISSIONS.items():
        held = default_conditions() | {condition}
        assert function_actions("NotifierFunction", held) == set(notifier.PERMISSIONS) | set(extra)


def test_interactions_function_role_is_exactly_what_a_click_needs():
    from reaper.slack import interactions as slack_interactions

    assert function_actions("InteractionsFunction") == set(slack_interactions.PERMISSIONS)


def test_buttons_write_only_the_two_protection_tags():
    stmt = next(s for s in function_statements("InteractionsFunction") if s.get("Sid") == "WriteProtectionTags")
    keys = stmt["Condition"]["ForAllValues:StringEquals"]["aws:TagKeys"]
    assert keys == [{"Sub": "${TagPrefix}snooze-until"}, {"Sub": "${TagPrefix}exempt"}]


def test_buttons_can_snooze_or_exempt_the_storage_kinds_volumes_and_backups():
    # Given the buttons' tag statement, and a volume and an FSx backup the storage kind posts about
    stmts = function_statements("InteractionsFunction")
    for action, arn in (
        ("ec2:CreateTags", "arn:aws:ec2:eu-west-1:123456789012:volume/vol-0123456789abcdef0"),
        ("fsx:TagResource", "arn:aws:fsx:eu-west-1:123456789012:backup/backup-0123456789abcdef0"),
    ):
        # Then a snooze or exempt click may tag it (the condition on the two keys is the statement's own)
        assert granted(Request(action, arn, {"aws:TagKeys": ("reaper:exempt",), "aws:PrincipalAccount": ("123456789012",)}), stmts), arn


def test_no_function_uses_managed_or_wildcard_policies():
    for name, fn in FUNCTIONS.items():
        for policy in fn["Properties"].get("Policies", []):
            assert isinstance(policy, dict) and "Statement" in policy, f"{name}: only inline statements, got {policy!r}"
            for stmt in resolve_ifs(policy["Statement"], CONDITIONS) + resolve_ifs(policy["Statement"], ()):  # both ways of each !If
                actions = stmt["Action"] if isinstance(stmt["Action"], list) else [stmt["Action"]]
                assert not any("*" in a for a in actions), f"{name}: wildcard action in {actions}"


def test_every_function_is_accounted_for():
    known = set(sweep_functions().values()) | {"NotifierFunction", "InteractionsFunction"}
    known |= {n for n, f in FUNCTIONS.items() if f.get("Metadata", {}).get("ReaperRestore")}
    assert set(FUNCTIONS) == known


def test_iam_names_for_calls_whose_service_names_differ():
    assert iam_action("resourcegroupstaggingapi", "GetResources") == "tag:GetResources"
    assert iam_action("sqs", "SendMessageBatch") == "sqs:SendMessage"
    assert "sqs:SendMessage" in COMMON and "dynamodb:PutItem" in COMMON


# -- the Deny backstop on exempt and production resources -------------------------------------

SWEEP_FUNCTIONS = sweep_functions()


def _denies(logical_id: str) -> dict[str, tuple[dict, dict]]:
    """{Sid: (statement, !Sub variables)} of the Deny statements attached to the function's role."""
    out = {}
    for doc, variables in attached_policies(logical_id).values():
        for stmt in doc["Statement"]:
            if stmt["Effect"] == "Deny":
                out[stmt["Sid"]] = (stmt, variables)
    return out


@pytest.mark.parametrize("kind", sorted(kinds.REGISTRY))
def test_every_destructive_action_a_kind_declares_is_denied_on_exempt_and_production_resources(kind):
    # Given the kind's destructive permissions and the Deny statements on its function's role
    destructive = kind_destructive(kind)
    assert destructive, f"{kind} declares no action that changes its resources"
    denies = _denies(SWEEP_FUNCTIONS[kind])
    exempt, _ = denies["DenyExempt"]
    production, variables = denies["DenyProduction"]
    # Then each is denied when the exempt tag (prefix from the parameter) says true, any case ...
    assert destructive <= statement_actions(exempt), f"not denied on exempt: {sorted(destructive - statement_actions(exempt))}"
    assert exempt["Resource"] == "*"
    assert exempt["Condition"] == {"StringEqualsIgnoreCase": {"aws:ResourceTag/${TagPrefix}exempt": "true"}}
    # ... and when ml:stage is one of the ProductionStages parameter's values
    assert destructive <= statement_actions(production), f"not denied in production: {sorted(destructive - statement_actions(production))}"
    assert production["Resource"] == "*"
    assert production["Condition"] == {"StringEqualsIgnoreCase": {"aws:ResourceTag/ml:stage": ["${Stages}"]}}
    assert variables == {"Stages": {"Join": ['", "', {"Split": [",", {"Ref": "ProductionStages"}]}]}}
    # and nothing else is denied but the consent reads with power (a notebook's presigned URL): a Deny on
    # a read or a tag write would break the sweep
    assert statement_actions(exempt) == statement_actions(production) == kind_denied(kind)


def _presign_denied_and_opted_in(kind: str, function: str, presign: str, grants: str, refuses: list[str]) -> None:
    """`presign` is denied on exempt and production resources and granted only under JupyterReadsOn, on `grants`
    and not on `refuses`."""
    assert kind_denied(kind) == kind_destructive(kind) | {presign}
    denies = _denies(function)
    assert presign in statement_actions(denies["DenyExempt"][0]) and presign in statement_actions(denies["DenyProduction"][0])
    # Then it is granted only under JupyterReadsOn, on the resources the API takes
    assert presign not in function_actions(function, set(default_conditions()))
    allows = [s for s in function_statements(function, {"JupyterReadsOn"}) if s["Effect"] == "Allow"]
    [stmt] = [s for s in allows if presign in statement_actions(s)]
    assert statement_actions(stmt) == {presign}
    assert granted(Request(presign, grants), [stmt])
    assert not any(granted(Request(presign, arn), [stmt]) for arn in refuses)


def test_the_jupyter_read_is_denied_on_exempt_and_production_notebooks_and_granted_only_when_opted_in():
    # Given JupyterReads (a presigned URL opens the notebook's Jupyter, which could also run code)
    nb = "arn:aws:sagemaker:eu-west-1:{}:notebook-instance/nb"
    presign = "sagemaker:CreatePresignedNotebookInstanceUrl"
    _presign_denied_and_opted_in("notebook", "NotebookFunction", presign, nb.format("123456789012"), [nb.format("210987654321")])
    assert load()["Parameters"]["JupyterReads"]["Default"] == "off"


def test_the_studio_jupyter_read_is_denied_on_exempt_and_production_and_granted_only_when_opted_in():
    # Given JupyterReads for Studio (a presigned domain URL signs in as a user profile and opens its space's Jupyter)
    profile = "arn:aws:sagemaker:eu-west-1:{}:user-profile/d-abc/ana"
    others = ["arn:aws:sagemaker:eu-west-1:123456789012:notebook-instance/nb", profile.format("210987654321")]
    _presign_denied_and_opted_in(
        "studio-app", "StudioAppFunction", "sagemaker:CreatePresignedDomainUrl", profile.format("123456789012"), others
    )


def test_destructive_means_a_change_to_the_swept_resource():
    assert kind_destructive("notebook") == {"sagemaker:StopNotebookInstance", "sagemaker:UpdateNotebookInstance"}
    assert kind_destructive("fsx") == {
        "fsx:CreateBackup",
        "fsx:CreateDataRepositoryTask",
        "fsx:DeleteFileSystem",
        "fsx:UpdateDataRepositoryAssociation",
    }
    assert "sagemaker:DeleteEndpoint" in kind_destructive("endpoint")
    assert not kind_destructive("endpoint") & {"sagemaker:AddTags", "sagemaker:DescribeEndpoint", "iam:PassRole"}


def test_the_stage_values_the_deny_compares_have_no_blanks():
    stages = load()["Parameters"]["ProductionStages"]
    pattern = re.compile(stages["AllowedPattern"])
    assert pattern.match(stages["Default"]) and pattern.match("prod")
    assert not pattern.match("prod, production") and not pattern.match("prod,,production") and not pattern.match("")


@pytest.mark.parametrize("kind", sorted(kinds.REGISTRY))
def test_each_sweep_function_starts_only_once_its_backstop_is_attached(kind):
    logical_id = SWEEP_FUNCTIONS[kind]
    assert load()["Resources"][logical_id]["DependsOn"] == f"{logical_id}ProtectedDeny"
    assert load()["Resources"][f"{logical_id}ProtectedDeny"]["Properties"]["Roles"] == [{"Ref": f"{logical_id}Role"}]


# -- scopes: what AWS checks implicitly, role passing, the untag path ---------------------------


@pytest.mark.parametrize("kind", sorted(kinds.REGISTRY))
def test_permissions_aws_checks_implicitly_are_declared(kind):
    declared = sweep_function_permissions(kind)
    assert implied(declared) <= declared, f"{kind}: missing {sorted(implied(declared) - declared)}"


def test_tag_on_create_is_known_for_every_create_that_passes_tags():
    assert implied({"sagemaker:CreateEndpoint"}) == {"sagemaker:AddTags"}
    assert implied({"fsx:CreateBackup", "fsx:CreateFileSystemFromBackup"}) == {"fsx:TagResource", "ec2:GetSecurityGroupsForVpc"}
    assert implied({"scheduler:CreateSchedule"}) == {"iam:PassRole"}


@pytest.mark.parametrize("kind", sorted(kinds.REGISTRY))
def test_the_warning_tag_can_be_written_and_removed_on_the_kinds_own_resources(kind):
    # Given the tag calls the kind writes reaper:warned-at with, and removes it with
    k = kinds.get(kind)
    write, remove = TAG_WRITE_PERMISSIONS[k.tag_service]
    stmts = function_statements(SWEEP_FUNCTIONS[kind])
    arn = {
        "notebook": "arn:aws:sagemaker:eu-west-1:123456789012:notebook-instance/nb",
        "endpoint": "arn:aws:sagemaker:eu-west-1:123456789012:endpoint/ep",
        "training-job": "arn:aws:sagemaker:eu-west-1:123456789012:training-job/job",
        "fsx": "arn:aws:fsx:eu-west-1:123456789012:file-system/fs-0123456789abcdef0",
        "ec2": "arn:aws:ec2:eu-west-1:123456789012:instance/i-0123456789abcdef0",
        "studio-app": "arn:aws:sagemaker:eu-west-1:123456789012:app/d-abc123/ana/jupyterlab/default",
        "capacity": "arn:aws:ec2:eu-west-1:123456789012:capacity-reservation/cr-0123456789abcdef0",
        "bedrock-pt": "arn:aws:bedrock:eu-west-1:123456789012:provisioned-model/0123abcd4567",
        "mlflow": "arn:aws:sagemaker:eu-west-1:123456789012:mlflow-tracking-server/tracking",
        "storage": "arn:aws:ec2:eu-west-1:123456789012:volume/vol-0123456789abcdef0",
    }[kind]
    # Then both are granted on its resources, and neither on another account's
    for action in (write, remove):
        assert granted(Request(action, arn), stmts), f"{kind}: {action} on {arn}"
        assert not granted(Request(action, arn.replace("123456789012", "210987654321")), stmts)


def _pass_role_statements(logical_id: str) -> list[dict]:
    return [s for s in function_statements(logical_id) if s["Effect"] == "Allow" and "iam:PassRole" in statement_actions(s)]


def test_only_functions_that_hand_a_role_to_scheduler_may_pass_one():
    passing = {n for n in FUNCTIONS if _pass_role_statements(n)}
    assert passing == {n for n in FUNCTIONS if "scheduler:CreateSchedule" in function_actions(n)} == set(SWEEP_FUNCTIONS.values())
    # every sweep function passes the continuation role; the FSx and endpoint functions also their own
    own = {"FsxFunction": "FsxCheckSchedulerRole", "EndpointFunction": "RestoreSchedulerRole"}
    for name in passing:
        roles = {"SweepContinuationRole", *([own[name]] if name in own else [])}
        stmts = _pass_role_statements(name)
        assert {s["Resource"]["GetAtt"].removesuffix(".Arn") for s in stmts} == roles, name
        for stmt in stmts:
            role = stmt["Resource"]["GetAtt"].removesuffix(".Arn")
            assert statement_actions(stmt) == {"iam:PassRole"}
            assert stmt["Condition"] == {"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}}
            ok = Request(
                "iam:PassRole",
                f"arn:aws:iam::123456789012:role/mlreaper-{role}-AB12",
                {"iam:PassedToService": ("scheduler.amazonaws.com",)},
            )
            assert granted(ok, [stmt])
            assert not granted(Request("iam:PassRole", "arn:aws:iam::123456789012:role/Admin", ok.context), [stmt])
            assert not granted(Request("iam:PassRole", ok.resource, {"iam:PassedToService": ("lambda.amazonaws.com",)}), [stmt])


@pytest.mark.parametrize("kind", sorted(kinds.REGISTRY))
def test_a_sweep_function_arranges_its_own_continuations_only(kind):
    # Given the statement that lets a sweep function create a one-off schedule for its next part
    [stmt] = [s for s in function_statements(SWEEP_FUNCTIONS[kind]) if s.get("Sid") == "SweepContinuation"]
    assert statement_actions(stmt) == {"scheduler:CreateSchedule"}
    resource = stmt["Resource"]["Sub"]
    # Then only in the sweeps' group, under its own kind's names (reaper.sweep.continuation.schedule_name)
    assert resource.endswith(f":schedule/${{SweepScheduleGroup}}/mlreaper-sweep-{kind}-*")
    from datetime import UTC, datetime

    from reaper.sweep.continuation import Cursor, schedule_name

    name = schedule_name(Cursor(kind, "eu-west-1", "x", datetime(2026, 12, 2, tzinfo=UTC), 2, "e" * 200))
    assert name.startswith(f"mlreaper-sweep-{kind}-") and len(name) <= 64 and re.fullmatch(r"[0-9a-zA-Z_.-]+", name)
    # and Scheduler may invoke with the continuation role the six sweep functions, nothing else
    invoke = load()["Resources"]["SweepContinuationInvoke"]["Properties"]
    assert invoke["Roles"] == [{"Ref": "SweepContinuationRole"}]
    [allow] = invoke["PolicyDocument"]["Statement"]
    assert allow["Action"] == "lambda:InvokeFunction"
    assert sorted(r["GetAtt"] for r in allow["Resource"]) == sorted(f"{f}.Arn" for f in SWEEP_FUNCTIONS.values())


def test_dependent_actions_of_what_the_restore_function_calls_are_declared():
    declared = restore_function_permissions()
    assert implied(declared) <= declared, f"missing {sorted(implied(declared) - declared)}"
    assert {"cloudwatch:DescribeAlarms", "ec2:GetSecurityGroupsForVpc", "iam:CreateServiceLinkedRole"} <= function_actions(
        "RestoreFunction"
    )


SLR = "arn:aws:iam::123456789012:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"  # noqa: E501 (an ARN)


@pytest.mark.parametrize("logical_id", ["EndpointFunction", "RestoreFunction"])
def test_the_autoscaling_service_linked_role_may_be_created_for_sagemaker_only(logical_id):
    stmts = function_statements(logical_id)
    sagemaker = {"iam:AWSServiceName": ("sagemaker.application-autoscaling.amazonaws.com",)}
    assert granted(Request("iam:CreateServiceLinkedRole", SLR, sagemaker), stmts)
    assert not granted(Request("iam:CreateServiceLinkedRole", SLR), stmts)  # no service named
    ecs = "arn:aws:iam::123456789012:role/aws-service-role/ecs.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_ECSService"  # noqa: E501 (an ARN)
    assert not granted(
        Request("iam:CreateServiceLinkedRole", ecs, {"iam:AWSServiceName": ("ecs.application-autoscaling.amazonaws.com",)}), stmts
    )
    admin = "arn:aws:iam::123456789012:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/Admin"
    assert not granted(Request("iam:CreateServiceLinkedRole", admin, sagemaker), stmts)


@pytest.mark.parametrize("logical_id", ["EndpointFunction", "RestoreFunction"])
def test_autoscaling_is_granted_on_sagemaker_targets_only(logical_id):
    stmts = function_statements(logical_id)
    target = "arn:aws:application-autoscaling:us-east-1:123456789012:scalable-target/0123abcd"

    def asks(namespace: str, dimension: str) -> Request:
        ctx = {"application-autoscaling:service-namespace": (namespace,), "application-autoscaling:scalable-dimension": (dimension,)}
        return Request("application-autoscaling:RegisterScalableTarget", target, ctx)

    assert granted(asks("sagemaker", "sagemaker:variant:DesiredInstanceCount"), stmts)
    assert granted(asks("sagemaker", "sagemaker:inference-component:DesiredCopyCount"), stmts)
    assert not granted(asks("ecs", "ecs:service:DesiredCount"), stmts)
    assert not granted(asks("dynamodb", "dynamodb:table:WriteCapacityUnits"), stmts)
    assert not granted(Request("application-autoscaling:RegisterScalableTarget", target), stmts)  # no namespace in the request
    for s in stmts:
        if any(a.startswith("application-autoscaling:") and not a.split(":")[1].startswith("Describe") for a in statement_actions(s)):
            assert s["Resource"] != "*" and "Condition" in s


@pytest.mark.parametrize("logical_id", ["EndpointFunction", "RestoreFunction"])
def test_alarms_are_written_only_under_the_reapers_names_or_to_repoint_sagemaker_scaling(logical_id):
    stmts = function_statements(logical_id)
    wake = f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{wake_alarm_name('ep')}"
    policy = "arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:1a2b:resource/sagemaker/endpoint/ep/variant/v:policyName/p"
    user_alarm = "arn:aws:cloudwatch:us-east-1:123456789012:alarm:billing-alarm"
    # an alarm the reaper did not make, pointing at anything but a SageMaker scaling policy: refused
    assert not granted(Request("cloudwatch:PutMetricAlarm", user_alarm), stmts)
    assert not granted(
        Request("cloudwatch:PutMetricAlarm", user_alarm, {"cloudwatch:AlarmActions": ("arn:aws:sns:us-east-1:123456789012:t",)}), stmts
    )
    assert not granted(
        Request("cloudwatch:PutMetricAlarm", user_alarm, {"cloudwatch:AlarmActions": (policy, "arn:aws:sns:us-east-1:123456789012:t")}),
        stmts,
    )
    assert not granted(Request("cloudwatch:DeleteAlarms", user_alarm), stmts)
    # a recorded step-scaling alarm put back on its new policy: allowed
    assert granted(Request("cloudwatch:PutMetricAlarm", user_alarm, {"cloudwatch:AlarmActions": (policy,)}), stmts)
    if logical_id == "EndpointFunction":  # adds the wake alarm
        assert granted(Request("cloudwatch:PutMetricAlarm", wake, {"cloudwatch:AlarmActions": (policy,)}), stmts)
        assert not granted(Request("cloudwatch:DeleteAlarms", wake), stmts)
    else:  # removes it
        assert granted(Request("cloudwatch:DeleteAlarms", wake), stmts)
    # Application Auto Scaling's own: its permission check (no alarm named) and a SageMaker target-tracking
    # policy's alarms, which AWS deletes with the policy; not another service's target tracking
    unnamed = "arn:aws:cloudwatch:us-east-1:123456789012:alarm:"
    tracking = "arn:aws:cloudwatch:us-east-1:123456789012:alarm:TargetTracking-endpoint/ep/variant/v-AlarmHigh-7f1c"
    component = "arn:aws:cloudwatch:us-east-1:123456789012:alarm:TargetTracking-inference-component/ic-a-AlarmLow-7f1c"
    table = "arn:aws:cloudwatch:us-east-1:123456789012:alarm:TargetTracking-table/orders-AlarmHigh-7f1c"
    assert granted(Request("cloudwatch:DeleteAlarms", unnamed), stmts) and granted(Request("cloudwatch:PutMetricAlarm", unnamed), stmts)
    assert granted(Request("cloudwatch:DeleteAlarms", tracking), stmts) and granted(Request("cloudwatch:DeleteAlarms", component), stmts)
    assert not granted(Request("cloudwatch:DeleteAlarms", table), stmts)
    assert not granted(Request("cloudwatch:PutMetricAlarm", tracking), stmts)  # only AWS's own, pointing at the policy


@pytest.mark.parametrize("logical_id", ["NotebookFunction", "TrainingJobFunction", "FsxFunction", "EndpointFunction", "RestoreFunction"])
def test_no_write_is_granted_on_every_resource(logical_id):
    for s in function_statements(logical_id):
        if s["Effect"] != "Allow" or s["Resource"] != "*":
            continue
        writes = {a for a in statement_actions(s) if not a.split(":")[1].startswith(READ_VERBS)}
        assert not writes, f"{logical_id}: {sorted(writes)} on every resource"


# -- nothing dropped by Lambda itself ---------------------------------------------------------


def test_every_asynchronously_invoked_function_keeps_its_failures_in_an_alarmed_queue():
    resources = load()["Resources"]
    # schedules, rules, Scheduler, the digest schedule; Slack calls the interactions function synchronously
    asynchronous = {n for n in FUNCTIONS if n != "InteractionsFunction"}
    for name in asynchronous:
        config = FUNCTIONS[name]["Properties"]["EventInvokeConfig"]
        assert config["DestinationConfig"]["OnFailure"] == {"Type": "SQS", "Destination": {"GetAtt": "FailedInvocationsQueue.Arn"}}, name
        assert config["MaximumRetryAttempts"] == 2
    alarm = resources["FailedInvocationsAlarm"]["Properties"]
    assert alarm["Dimensions"] == [{"Name": "QueueName", "Value": {"GetAtt": "FailedInvocationsQueue.QueueName"}}]
    assert alarm["Threshold"] == 0 and alarm["ComparisonOperator"] == "GreaterThanThreshold"
    assert alarm["AlarmActions"] == [{"Ref": "AlarmTopic"}]
    queues = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::SQS::Queue"]
    assert len(queues) == 3 and all(q.get("SqsManagedSseEnabled") is True for q in queues)


def test_every_checkov_skip_says_why():
    for name, res in load()["Resources"].items():
        for skip in res.get("Metadata", {}).get("checkov", {}).get("skip", []):
            assert re.fullmatch(r"CKV_AWS_\d+", skip["id"]) and len(skip.get("comment", "")) > 40, f"{name}: {skip}"


def test_cost_explorers_paid_read_is_granted_to_the_notifier_only_and_only_with_digest_bill_on():
    # reaper report --bill reads from the CLI; the digest's line only with DigestBill=on ($0.01 a request, docs/bill.md)
    from reaper.report.bill import PERMISSIONS as BILL_READ
    from reaper.slack import notifier

    others = set(CONDITIONS) - {"DigestReadsBill"}
    for name in FUNCTIONS:
        assert not function_actions(name, others) & set(BILL_READ), name
        if name != "NotifierFunction":
            assert not function_actions(name, CONDITIONS) & set(BILL_READ), name
    assert function_actions("NotifierFunction", {"DigestReadsBill"}) == set(notifier.PERMISSIONS) | set(BILL_READ)
