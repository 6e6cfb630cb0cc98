"""The managed policy the stack ships for notebook roles: PutMetricData into the reaper's
namespace and nothing else, exported so admins can attach it."""

from __future__ import annotations

from reaper_devkit.template import load
from tests.unit.test_agent import load_agent

T = load()
NAMESPACE = "MLReaper"  # the contract's namespace, which the notebook kind reads


def test_notebook_roles_may_publish_only_into_the_namespace_the_reaper_reads():
    policy = T["Resources"]["NotebookActivityPublishPolicy"]
    assert policy["Type"] == "AWS::IAM::ManagedPolicy"
    [statement] = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Allow"
    assert statement["Action"] == "cloudwatch:PutMetricData"
    # PutMetricData has no resource type; the namespace condition is what limits it
    assert statement["Condition"] == {"StringEquals": {"cloudwatch:namespace": NAMESPACE}}
    assert load_agent().NAMESPACE == NAMESPACE


def test_the_policy_arn_is_an_exported_output():
    out = T["Outputs"]["NotebookActivityPublishPolicyArn"]
    assert out["Value"] == {"Ref": "NotebookActivityPublishPolicy"}
    assert "NotebookActivityPublishPolicyArn" in out["Export"]["Name"]["Sub"]
