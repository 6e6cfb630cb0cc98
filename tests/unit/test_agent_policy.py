"""The managed policy the stack ships for notebook roles: the agent's samples into the stack's log
group and nothing else (plus PutMetricData into MLReaper for agents installed before, until their
notebook restarts), exported so admins can attach it."""

from __future__ import annotations

from reaper_devkit.template import load
from tests.unit.test_agent import load_agent

T = load()
NAMESPACE = "MLReaper"  # where agents installed before the Logs channel still publish


def statements() -> dict[str, dict]:
    policy = T["Resources"]["NotebookActivityPublishPolicy"]
    assert policy["Type"] == "AWS::IAM::ManagedPolicy"
    return {s["Sid"]: s for s in policy["Properties"]["PolicyDocument"]["Statement"]}


def test_notebook_roles_may_write_samples_only_into_the_stack_log_group():
    s = statements()["SendActivitySamplesOnly"]
    assert s["Effect"] == "Allow"
    assert sorted(s["Action"]) == ["logs:CreateLogStream", "logs:PutLogEvents"]
    # the streams of that one log group, in this account and region: no other group, no read
    assert s["Resource"] == {
        "Sub": "arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:${NotebookActivityLogGroup}:log-stream:*"
    }
    group = T["Resources"]["NotebookActivityLogGroup"]["Properties"]
    assert group["LogGroupName"] == {"Sub": "/mlreaper/${AgentLifecycleConfigName}"}
    assert 1 <= group["RetentionInDays"] <= 3  # samples are read for 3 hours
    # the agent's default group is the stack's with the default lifecycle configuration name
    assert load_agent().LOG_GROUP == "/mlreaper/mlreaper-activity-agent"


def test_old_agents_may_still_publish_only_into_the_namespace_the_reaper_falls_back_to():
    s = statements()["PublishNotebookActivityOnlyOldAgents"]
    assert s["Action"] == "cloudwatch:PutMetricData"
    # PutMetricData has no resource type; the namespace condition is what limits it
    assert s["Condition"] == {"StringEquals": {"cloudwatch:namespace": NAMESPACE}}
    assert set(statements()) == {"SendActivitySamplesOnly", "PublishNotebookActivityOnlyOldAgents"}


def test_the_policy_arn_is_an_exported_output():
    out = T["Outputs"]["NotebookActivityPublishPolicyArn"]
    assert out["Value"] == {"Ref": "NotebookActivityPublishPolicy"}
    assert "NotebookActivityPublishPolicyArn" in out["Export"]["Name"]["Sub"]
