"""A silent agent: attached, the notebook InService for a while, and not one report.

The agent reports every 5 minutes while the notebook runs (the MLReaper/NotebookActivity metric, or
with AgentChannel=logs a sample in the stack's log group), so half an hour of nothing means it
cannot reach CloudWatch (Logs) or is not allowed to write there. The notebook is kept (unknown is never
idle) and its owner is told once per start, with the commands that fix the two usual causes.
"""

from __future__ import annotations

from datetime import datetime

from reaper.aws.metrics import Series
from reaper.core.model import Decision, Resource, Verdict
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc, human_duration, iso
from reaper.kinds.notebook.model import METRIC, NAMESPACE, SILENT_AFTER, NotebookFacts, activity_log_group
from reaper.kinds.notebook.settings import NotebookSettings


def is_silent(facts: NotebookFacts, points: Series, window_end: datetime, now: datetime) -> bool:
    """InService for at least SILENT_AFTER, and no datapoint in the periods of the last SILENT_AFTER."""
    if facts.in_service_since is None or as_utc(now) - as_utc(facts.in_service_since) < SILENT_AFTER:
        return False
    since = window_end - SILENT_AFTER
    return not any(as_utc(ts) >= since for ts, _ in points)  # period starts: the last six 5-minute periods


def silent_agent(resource: Resource, facts: NotebookFacts, settings: Settings, now: datetime) -> Decision:
    assert facts.in_service_since is not None
    name, region = resource.id, resource.region
    policy = settings.of(NotebookSettings).agent_publish_policy_arn or (
        "$(aws cloudformation describe-stacks --stack-name STACK --query "
        "\"Stacks[0].Outputs[?OutputKey=='NotebookActivityPublishPolicyArn'].OutputValue\" --output text)"
    )
    describe = f"aws sagemaker describe-notebook-instance --region {region} --notebook-instance-name {name}"
    # Role: the agent signs PutMetricData (logs: PutLogEvents) with the notebook role's credentials, and
    # the stack's policy allows exactly that (cloudwatch:namespace = MLReaper; logs: CreateLogStream and
    # PutLogEvents on the streams of the stack's log group).
    role_fix = (
        f"aws iam attach-role-policy --policy-arn {policy} --role-name "
        f"\"$({describe} --query RoleArn --output text | awk -F/ '{{print $NF}}')\""
    )
    # Route: a notebook with DirectInternetAccess=Disabled reaches only its VPC; CloudWatch needs an
    # interface endpoint (service com.amazonaws.REGION.monitoring; logs: com.amazonaws.REGION.logs) or a NAT gateway.
    # https://docs.aws.amazon.com/sagemaker/latest/dg/appendix-notebook-and-internet-access.html
    # https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-interface-VPC.html
    # https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/cloudwatch-logs-and-interface-VPC.html
    logs = settings.of(NotebookSettings).agent_channel == "logs"
    endpoint = "logs" if logs else "monitoring"
    vpc_fix = (
        f"read SUBNET SG <<< \"$({describe} --query '[SubnetId,SecurityGroups[0]]' --output text)\"; "
        f"aws ec2 create-vpc-endpoint --region {region} --vpc-endpoint-type Interface "
        f"--service-name com.amazonaws.{region}.{endpoint} --private-dns-enabled "
        f"--vpc-id \"$(aws ec2 describe-subnets --region {region} --subnet-ids $SUBNET --query 'Subnets[0].VpcId' --output text)\" "
        f"--subnet-ids $SUBNET --security-group-ids $SG"
    )
    running = human_duration(as_utc(now) - as_utc(facts.in_service_since))
    group = activity_log_group(settings)
    nothing = f"activity sample (log group {group}, stream {name})" if logs else f"{NAMESPACE}/{METRIC} datapoint"
    may_not = f"logs:PutLogEvents on {group}" if logs else f"cloudwatch:PutMetricData into {NAMESPACE}"
    reason = (
        f"activity agent silent: attached ({facts.lifecycle_config}) and InService for {running}, but no "
        f"{nothing} in the last {int(SILENT_AFTER.total_seconds() // 60)} min, "
        "so the reaper cannot see whether it is idle (kept: unknown is never idle). Likely causes: "
        f"(1) the notebook role may not call {may_not}: attach the stack's "
        f"NotebookActivityPublishPolicyArn: `{role_fix}`; "
        f"(2) the notebook runs in a VPC without internet access and has no route to CloudWatch{' Logs' if logs else ''}: add a {endpoint} "
        f"VPC endpoint (its security group must allow HTTPS from the notebook) or a NAT gateway: `{vpc_fix}`. "
        f"The agent's own errors: /var/log/mlreaper-agent/agent.log on the notebook, and the lifecycle log "
        f"(/aws/sagemaker/NotebookInstances, stream {name}/LifecycleConfigOnStart)."
    )
    return Decision(
        Verdict.KEEP,
        reason,
        evidence={"agent": True, "silent_minutes": int(SILENT_AFTER.total_seconds() // 60), "in_service_since": facts.in_service_since},
        notify=True,
        notify_key=f"notebook-silent-agent:{iso(facts.in_service_since)}",  # once per start
        unknown="agent-silent",
    )
