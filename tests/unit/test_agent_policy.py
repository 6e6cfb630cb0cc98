"""The managed policy the stack ships for notebook roles: PutMetricData into MLReaper (the contract's
metric) in both channels, and with AgentChannel=logs also the agent's samples into the stack's log
group; nothing else. Exported so admins can attach it."""

from __future__ import annotations

from typing import Any

import pytest

from reaper_devkit.template import default_conditions, load, resolve_ifs
from tests.helpers.activity_agent import load_agent

T = load()
NAMESPACE = "MLReaper"  # the contract's namespace


def statements(conditions: frozenset[str]) -> dict[str, dict[str, Any]]:
    """The policy's statements in a deployment where `conditions` hold, by Sid."""
    policy = T["Resources"]["NotebookActivityPublishPolicy"]
    assert policy["Type"] == "AWS::IAM::ManagedPolicy"
    return {s["Sid"]: s for s in resolve_ifs(policy["Properties"]["PolicyDocument"]["Statement"], conditions)}


METRIC, LOGS = frozenset(), frozenset({"UseLogsChannel"})


def test_the_default_channel_grants_the_contracts_metric_only():
    # Given the template's defaults: AgentChannel=metric
    assert T["Parameters"]["AgentChannel"]["Default"] == "metric"
    assert not LOGS & default_conditions()
    # Then notebook roles may publish into MLReaper and nothing else: no Logs grant, no log group
    assert set(statements(default_conditions())) == {"PublishNotebookActivityOnly"}
    assert T["Resources"]["NotebookActivityLogGroup"]["Condition"] == "UseLogsChannel"
    assert T["Conditions"]["UseLogsChannel"] == {"Equals": [{"Ref": "AgentChannel"}, "logs"]}


@pytest.mark.parametrize("held", [METRIC, LOGS], ids=["metric", "logs"])
def test_put_metric_data_stays_in_both_channels_limited_to_the_namespace(held):
    # with logs too: agents installed before the switch publish the metric until their notebook restarts
    s = statements(held)["PublishNotebookActivityOnly"]
    assert s["Effect"] == "Allow" and s["Action"] == "cloudwatch:PutMetricData"
    # PutMetricData has no resource type; the namespace condition is what limits it
    assert s["Condition"] == {"StringEquals": {"cloudwatch:namespace": NAMESPACE}}
    assert load_agent().NAMESPACE == NAMESPACE


def test_with_logs_notebook_roles_may_write_samples_only_into_the_stack_log_group():
    assert set(statements(LOGS)) == {"PublishNotebookActivityOnly", "SendActivitySamplesOnly"}
    s = statements(LOGS)["SendActivitySamplesOnly"]
    assert s["Effect"] == "Allow"
    assert sorted(s["Action"]) == ["logs:CreateLogStream", "logs:PutLogEvents"]
    # the streams of that one log group, in this account and region: no other group, no read
    assert s["Resource"] == {
        "Sub": "arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:/mlreaper/${AgentLifecycleConfigName}:log-stream:*"
    }
    group = T["Resources"]["NotebookActivityLogGroup"]["Properties"]
    assert group["LogGroupName"] == {"Sub": "/mlreaper/${AgentLifecycleConfigName}"}
    # samples are read over the idle window, which a reaper:idle-minutes tag may stretch to a week:
    # a shorter retention deletes what that window needs, and the notebook is kept for ever as "gap in
    # activity data". A week and a margin (Logs deletes expired events some time after they expire)
    from reaper.core.policy import IDLE_MINUTES

    assert IDLE_MINUTES[1] < group["RetentionInDays"] * 1440 <= 14 * 1440
    # the agent's default group is the stack's with the default lifecycle configuration name
    assert load_agent().LOG_GROUP == "/mlreaper/mlreaper-activity-agent"


def test_the_policy_arn_is_an_exported_output():
    out = T["Outputs"]["NotebookActivityPublishPolicyArn"]
    assert out["Value"] == {"Ref": "NotebookActivityPublishPolicy"}
    assert "NotebookActivityPublishPolicyArn" in out["Export"]["Name"]["Sub"]
