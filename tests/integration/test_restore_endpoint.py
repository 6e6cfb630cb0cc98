"""`reaper restore NAME` and the restore function, for every endpoint type, against moto."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from reaper.cli.main import main
from reaper.core.errors import BadEventError
from reaper.kinds.endpoint import restore as endpoint_restore
from reaper.record.actionlog import ActionLog
from reaper_devkit import seed_endpoint as se
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext.sagemaker_inference import script_status
from reaper_devkit.template import function_actions
from tests.conftest import TABLE, drain, event, load_function

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "llm"}
SWEEP = ["sweep", "--kind", "endpoint", "--mode", "enforce", "--grace-minutes", "0", "--json"]


@pytest.fixture
def aas(aws):
    return aws.client("application-autoscaling")


@pytest.fixture
def env(table, queue, monkeypatch) -> dict[str, str]:
    monkeypatch.setenv("REAPER_TABLE", table)
    monkeypatch.setenv("REAPER_QUEUE_URL", queue)
    monkeypatch.setattr(endpoint_restore, "sleep", lambda _s: None)  # polls are counted, not waited
    return {"table": table, "queue": queue}


def step_scaling(aws: Any, endpoint: str) -> str:
    """A step-scaling policy and the alarm that invokes it, on the endpoint's variant."""
    aas, cw = aws.client("application-autoscaling"), aws.client("cloudwatch")
    arn: str = aas.put_scaling_policy(
        PolicyName=f"{endpoint}-step",
        ServiceNamespace="sagemaker",
        ResourceId=f"endpoint/{endpoint}/variant/AllTraffic",
        ScalableDimension="sagemaker:variant:DesiredInstanceCount",
        PolicyType="StepScaling",
        StepScalingPolicyConfiguration={
            "AdjustmentType": "ChangeInCapacity",
            "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}],
        },
    )["PolicyARN"]
    cw.put_metric_alarm(
        AlarmName=f"{endpoint}-latency-high",
        MetricName="ModelLatency",
        Namespace="AWS/SageMaker",
        Statistic="Average",
        Dimensions=[{"Name": "EndpointName", "Value": endpoint}, {"Name": "VariantName", "Value": "AllTraffic"}],
        Period=60,
        EvaluationPeriods=3,
        Threshold=500000,
        ComparisonOperator="GreaterThanThreshold",
        AlarmActions=[arn],
    )
    return arn


@pytest.fixture
def reaped(aws, sm, aas, env, capsys) -> dict[str, Any]:
    """llm-dev (classic, GPU, autoscaling with target tracking and step scaling) taken to zero by the CLI."""
    now = datetime.now(UTC)
    se.classic(sm, "llm-dev", DEV, instance_type="ml.g4dn.xlarge", count=2)
    se.age("llm-dev", now, 300)
    se.autoscale(aas, "llm-dev", minimum=2, maximum=6)
    old_step = step_scaling(aws, "llm-dev")
    assert main(SWEEP) == 0
    rows = {json.loads(line)["id"]: json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert rows["llm-dev"]["executed"] is True and "llm-dev" not in {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]}
    drain(aws, env["queue"])
    return {"old_step_arn": old_step}


def test_restore_brings_a_deleted_endpoint_back_as_it_was(aws, sm, aas, reaped, env, capsys):
    # Given llm-dev was deleted by the reaper
    # When `reaper restore llm-dev` runs
    with recording() as calls:
        code = main(["restore", "llm-dev"])
    out = capsys.readouterr()
    # Then it is back under the same name, with the same config and tags
    assert code == 0 and "restored endpoint llm-dev" in out.out
    desc = sm.describe_endpoint(EndpointName="llm-dev")
    assert desc["EndpointStatus"] == "InService" and desc["EndpointConfigName"] == "llm-dev-config"
    assert {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=desc["EndpointArn"])["Tags"]} == DEV
    # And its autoscaling: the target, both policies, and the alarm pointed at the new step policy
    target = aas.describe_scalable_targets(ServiceNamespace="sagemaker", ResourceIds=["endpoint/llm-dev/variant/AllTraffic"])[
        "ScalableTargets"
    ]
    assert [(t["MinCapacity"], t["MaxCapacity"]) for t in target] == [(2, 6)]
    policies = {
        p["PolicyName"]: p
        for p in aas.describe_scaling_policies(ServiceNamespace="sagemaker", ResourceId="endpoint/llm-dev/variant/AllTraffic")[
            "ScalingPolicies"
        ]
    }
    assert set(policies) == {"llm-dev-invocations", "llm-dev-step"}
    assert policies["llm-dev-invocations"]["TargetTrackingScalingPolicyConfiguration"]["TargetValue"] == 70.0
    alarm = aws.client("cloudwatch").describe_alarms(AlarmNames=["llm-dev-latency-high"])["MetricAlarms"][0]
    assert alarm["AlarmActions"] == [policies["llm-dev-step"]["PolicyARN"]]
    # And the owner is told twice: restoring, then back
    notices = [m for m in drain(aws, env["queue"]) if m["type"] == "notice"]
    assert [n["title"] for n in notices] == ["Restoring endpoint llm-dev", "Endpoint llm-dev is back"]
    assert "GPU" in notices[0]["text"] and notices[0]["owner"] == "ana@example.com"
    assert calls.actions <= function_actions("RestoreFunction")
    assert calls.ungranted("RestoreFunction") == []  # on the resource it names, conditions included


def test_restore_leaves_out_aws_system_tags_and_says_which(aws, sm, aas, env, capsys):
    # Given an endpoint CloudFormation made: AWS wrote aws:cloudformation:* tags on it (mixed case too)
    now = datetime.now(UTC)
    arn = se.classic(sm, "stack-ep", DEV)
    cfn = {"aws:cloudformation:stack-name": "ml-stack", "AWS:CloudFormation:logical-id": "Endpoint"}
    se.system_tags(arn, cfn)
    se.age("stack-ep", now, 300)
    assert main(SWEEP) == 0
    capsys.readouterr()
    drain(aws, env["queue"])
    record = ActionLog(aws.client("dynamodb"), TABLE).latest_restore("endpoint", "stack-ep")
    assert record is not None and {t["Key"] for t in record["tags"]} >= set(cfn)  # recorded as they were
    # When it is restored (AWS refuses any aws: key on CreateEndpoint: the kit does too)
    code = main(["restore", "stack-ep"])
    out = capsys.readouterr()
    # Then it is back with the owner's tags, and the result names the ones it could not bring back
    assert code == 0, out.err
    back = sm.describe_endpoint(EndpointName="stack-ep")
    assert {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=back["EndpointArn"])["Tags"]} == DEV
    assert "its 3 tags (not AWS:CloudFormation:logical-id, aws:cloudformation:stack-name" in out.out
    notices = [m for m in drain(aws, env["queue"]) if m["type"] == "notice"]
    assert all("aws:cloudformation:stack-name" in n["text"] for n in notices) and len(notices) == 2


def test_restore_twice_is_safe(aws, sm, reaped, env, capsys):
    assert main(["restore", "llm-dev"]) == 0
    capsys.readouterr()
    drain(aws, env["queue"])
    # When it runs again, Then nothing is created twice and it says so
    assert main(["restore", "llm-dev"]) == 0
    out = capsys.readouterr().out
    assert "already back" in out and "nothing to do" in out
    assert [e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]] == ["llm-dev"]
    assert drain(aws, env["queue"]) == []


def test_restore_reports_progress_while_creating(aws, sm, reaped, env, capsys):
    # Given AWS takes two polls to bring it InService
    script_status("llm-dev", ["Creating", "Creating", "Creating", "InService"])
    assert main(["restore", "llm-dev"]) == 0
    err = capsys.readouterr().err
    assert "creating endpoint llm-dev from config llm-dev-config" in err
    assert "llm-dev: Creating after 15 s" in err and "llm-dev: InService after 30 s" in err


def test_restore_that_fails_in_aws_says_why_and_exits_1(aws, sm, reaped, env, capsys):
    script_status("llm-dev", ["Creating", "Failed"])
    assert main(["restore", "llm-dev"]) == 1
    assert "did not come back" in capsys.readouterr().err
    record = ActionLog(aws.client("dynamodb"), TABLE).latest_restore("endpoint", "llm-dev")
    assert record is not None and record["status"] == "failed" and "ping health check" in record["failure"]
    assert any(n.get("title") == "Endpoint llm-dev did not come back" for n in drain(aws, env["queue"]))


@pytest.mark.parametrize(
    ("delete", "says"),
    [
        (lambda sm: sm.delete_endpoint_config(EndpointConfigName="llm-dev-config"), "endpoint configuration llm-dev-config was deleted"),
        (lambda sm: sm.delete_model(ModelName="llm-dev-model-alltraffic"), "model llm-dev-model-alltraffic"),
    ],
)
def test_restore_says_clearly_what_someone_deleted_meanwhile(aws, sm, reaped, env, capsys, delete, says):
    # Given the config (or model) was deleted after the endpoint went to zero
    delete(sm)
    # When restoring, Then exit 2 with what is missing and what to do; nothing is created
    assert main(["restore", "llm-dev"]) == 2
    err = capsys.readouterr().err
    assert says in err and "reaper restore llm-dev" in err
    assert sm.list_endpoints()["Endpoints"] == []


def test_restore_without_a_record_or_without_a_log_is_refused(aws, sm, env, capsys, monkeypatch):
    assert main(["restore", "never-reaped"]) == 2
    assert "no restore record for 'never-reaped' as endpoint or bedrock-pt" in capsys.readouterr().err
    monkeypatch.delenv("REAPER_TABLE")
    assert main(["restore", "never-reaped"]) == 2
    assert "needs the action log" in capsys.readouterr().err


def test_components_come_back_with_their_copies_and_autoscaling(aws, sm, aas, env, capsys):
    # Given an idle component endpoint whose component autoscales with a minimum of 1
    now = datetime.now(UTC)
    se.components(sm, "ic-dev", {"ic-a": 2, "ic-b": 1}, DEV)
    se.age("ic-dev", now, 300)
    aas.register_scalable_target(
        ServiceNamespace="sagemaker",
        ResourceId="inference-component/ic-a",
        ScalableDimension="sagemaker:inference-component:DesiredCopyCount",
        MinCapacity=1,
        MaxCapacity=4,
    )
    assert main(SWEEP) == 0
    copies = lambda n: sm.describe_inference_component(InferenceComponentName=n)["RuntimeConfig"]["DesiredCopyCount"]  # noqa: E731

    def minimum():
        return aas.describe_scalable_targets(ServiceNamespace="sagemaker", ResourceIds=["inference-component/ic-a"])["ScalableTargets"][0][
            "MinCapacity"
        ]  # noqa: E731

    assert (copies("ic-a"), copies("ic-b"), minimum()) == (0, 0, 0)
    assert sm.describe_endpoint(EndpointName="ic-dev")["ProductionVariants"][0]["CurrentInstanceCount"] == 0
    capsys.readouterr()
    # When restored, Then copies and the minimum are as they were, and the instances come back
    with recording() as calls:
        assert main(["restore", "ic-dev"]) == 0
    assert (copies("ic-a"), copies("ic-b"), minimum()) == (2, 1, 1)
    assert sm.describe_endpoint(EndpointName="ic-dev")["ProductionVariants"][0]["CurrentInstanceCount"] == 1
    assert "ic-a × 2, ic-b × 1" in capsys.readouterr().out
    assert calls.actions <= function_actions("RestoreFunction")
    assert calls.ungranted("RestoreFunction") == []  # on the resource it names, conditions included
    # And again: nothing to do
    assert main(["restore", "ic-dev"]) == 0 and "already back" in capsys.readouterr().out


def test_a_deleted_component_stops_the_restore_with_its_name(aws, sm, env, capsys):
    se.components(sm, "ic-dev", {"ic-a": 2}, DEV)
    se.age("ic-dev", datetime.now(UTC), 300)
    assert main(SWEEP) == 0
    sm.delete_inference_component(InferenceComponentName="ic-a")
    capsys.readouterr()
    assert main(["restore", "ic-dev"]) == 2
    assert "inference component ic-a was deleted" in capsys.readouterr().err


def test_async_comes_back_without_the_reapers_wake_policy(aws, sm, aas, env, capsys):
    # Given an idle async endpoint with no autoscaling of its own
    se.asynchronous(sm, "async-dev", DEV, count=2)
    se.age("async-dev", datetime.now(UTC), 300)
    assert main(SWEEP) == 0
    rid = "endpoint/async-dev/variant/AllTraffic"
    assert aas.describe_scalable_targets(ServiceNamespace="sagemaker", ResourceIds=[rid])["ScalableTargets"][0]["MinCapacity"] == 0
    assert sm.describe_endpoint(EndpointName="async-dev")["ProductionVariants"][0]["CurrentInstanceCount"] == 0
    capsys.readouterr()
    # When restored, Then its 2 instances are back, and what the reaper added is gone
    assert main(["restore", "async-dev"]) == 0
    assert sm.describe_endpoint(EndpointName="async-dev")["ProductionVariants"][0]["CurrentInstanceCount"] == 2
    assert aas.describe_scalable_targets(ServiceNamespace="sagemaker", ResourceIds=[rid])["ScalableTargets"] == []
    assert aws.client("cloudwatch").describe_alarms(AlarmNames=["mlreaper-wake-async-dev"])["MetricAlarms"] == []


def test_restore_function_does_what_the_command_does(aws, sm, reaped, env, lambda_context, monkeypatch):
    # Given the restore function as deployed (it does not wait for InService)
    monkeypatch.setenv("REAPER_RESTORE_WAIT_MINUTES", "0")
    script_status("llm-dev", ["Creating", "Creating"])
    app = load_function("restore")
    # When invoked with the request the Slack button (and the schedule) send
    with recording() as calls:
        result = app.handler(event("restore-request.json"), lambda_context)
    # Then the endpoint is being recreated; the endpoint function finishes it on the state change
    assert result["ok"] is True and "is Creating" in result["result"]
    assert sm.describe_endpoint(EndpointName="llm-dev")["EndpointConfigName"] == "llm-dev-config"
    record = ActionLog(aws.client("dynamodb"), TABLE).latest_restore("endpoint", "llm-dev")
    assert record is not None and record["status"] == "restoring"
    assert calls.actions <= function_actions("RestoreFunction")
    assert calls.ungranted("RestoreFunction") == []  # on the resource it names, conditions included


def test_restore_function_answers_a_restore_that_cannot_go_ahead_and_tells_someone(aws, sm, env, lambda_context):
    app = load_function("restore")
    result = app.handler({"name": "no-such-endpoint"}, lambda_context)
    assert result["ok"] is False and "no restore record" in result["error"]
    notices = drain(aws, env["queue"])
    assert [n["title"] for n in notices] == ["Could not restore no-such-endpoint"]


@pytest.mark.parametrize("bad", ["llm-dev", {}, {"name": ""}, {"name": 7}, ["llm-dev"]])
def test_restore_function_refuses_malformed_requests(aws, sm, env, lambda_context, bad):
    app = load_function("restore")
    with pytest.raises(BadEventError):
        app.handler(bad, lambda_context)
    assert drain(aws, env["queue"]) == []


def _policies(aas: Any, rid: str) -> dict[str, dict[str, Any]]:
    found = aas.describe_scaling_policies(ServiceNamespace="sagemaker", ResourceId=rid)["ScalingPolicies"]
    return {p["PolicyName"]: p for p in found}


def test_async_without_autoscaling_gets_the_documented_scale_in_policy_so_a_wake_does_not_stay_up(aws, sm, aas, env, capsys):
    # Given an idle async endpoint with no autoscaling of its own
    se.asynchronous(sm, "async-bare", DEV)
    se.age("async-bare", datetime.now(UTC), 300)
    with recording() as calls:
        assert main(SWEEP) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    rid = "endpoint/async-bare/variant/AllTraffic"
    # Then the variant has minimum 0, the backlog target tracking AWS documents, and the wake policy
    assert aas.describe_scalable_targets(ServiceNamespace="sagemaker", ResourceIds=[rid])["ScalableTargets"][0]["MinCapacity"] == 0
    policies = _policies(aas, rid)
    assert set(policies) == {"mlreaper-backlog-tracking", "mlreaper-wake-on-backlog"}
    tracking = policies["mlreaper-backlog-tracking"]["TargetTrackingScalingPolicyConfiguration"]
    assert tracking["CustomizedMetricSpecification"]["MetricName"] == "ApproximateBacklogSizePerInstance"
    assert tracking["CustomizedMetricSpecification"]["Dimensions"] == [{"Name": "EndpointName", "Value": "async-bare"}]
    assert not tracking.get("DisableScaleIn")
    assert "backlog scale-in policy added on AllTraffic" in row["detail"]
    assert calls.actions <= function_actions("EndpointFunction") and calls.ungranted("EndpointFunction") == []
    drain(aws, env["queue"])
    # When restored, Then nothing of the reaper's is left: the target (and its policies) are gone again
    assert main(["restore", "async-bare"]) == 0
    assert aas.describe_scalable_targets(ServiceNamespace="sagemaker", ResourceIds=[rid])["ScalableTargets"] == []
    assert aas.describe_scaling_policies(ServiceNamespace="sagemaker", ResourceId=rid)["ScalingPolicies"] == []


def test_async_with_its_own_scale_in_policy_gets_none_of_the_reapers(aws, sm, aas, env, capsys):
    se.asynchronous(sm, "async-own", DEV, count=2)
    se.age("async-own", datetime.now(UTC), 300)
    rid = se.autoscale(aas, "async-own", minimum=1, maximum=3)  # target tracking: scales in on its own
    assert main(SWEEP) == 0
    capsys.readouterr()
    assert set(_policies(aas, rid)) == {"async-own-invocations", "mlreaper-wake-on-backlog"}
    assert main(["restore", "async-own"]) == 0
    assert set(_policies(aas, rid)) == {"async-own-invocations"}
    target = aas.describe_scalable_targets(ServiceNamespace="sagemaker", ResourceIds=[rid])["ScalableTargets"][0]
    assert (target["MinCapacity"], target["MaxCapacity"]) == (1, 3)


def test_async_with_only_a_scale_out_step_policy_gets_the_scale_in_and_restore_keeps_the_owners(aws, sm, aas, env, capsys):
    se.asynchronous(sm, "async-step", DEV)
    se.age("async-step", datetime.now(UTC), 300)
    rid = "endpoint/async-step/variant/AllTraffic"
    aas.register_scalable_target(
        ServiceNamespace="sagemaker",
        ResourceId=rid,
        ScalableDimension="sagemaker:variant:DesiredInstanceCount",
        MinCapacity=1,
        MaxCapacity=2,
    )
    step_scaling(aws, "async-step")  # +1 on latency: never scales in
    assert main(SWEEP) == 0
    capsys.readouterr()
    assert set(_policies(aas, rid)) == {"async-step-step", "mlreaper-backlog-tracking", "mlreaper-wake-on-backlog"}
    assert main(["restore", "async-step"]) == 0
    assert set(_policies(aas, rid)) == {"async-step-step"}
    assert aas.describe_scalable_targets(ServiceNamespace="sagemaker", ResourceIds=[rid])["ScalableTargets"][0]["MinCapacity"] == 1


def _alarm_names(aws: Any, prefix: str) -> set[str]:
    found = aws.client("cloudwatch").describe_alarms(AlarmNamePrefix=prefix)["MetricAlarms"]
    return {a["AlarmName"] for a in found}


def test_restore_deletes_the_reapers_target_tracking_policy_and_aws_its_alarms_with_the_restore_functions_grants(aws, sm, aas, env, capsys):
    # Given an async endpoint whose owner scales it out only (a step policy and its alarm), taken to zero:
    # the reaper added its backlog target tracking, for which AWS made two TargetTracking- alarms
    se.asynchronous(sm, "async-tt", DEV)
    se.age("async-tt", datetime.now(UTC), 300)
    rid = "endpoint/async-tt/variant/AllTraffic"
    dimension = "sagemaker:variant:DesiredInstanceCount"
    aas.register_scalable_target(ServiceNamespace="sagemaker", ResourceId=rid, ScalableDimension=dimension, MinCapacity=1, MaxCapacity=2)
    step_scaling(aws, "async-tt")
    assert main(SWEEP) == 0
    capsys.readouterr()
    tracking = _policies(aas, rid)["mlreaper-backlog-tracking"]
    made = {a["AlarmName"] for a in tracking["Alarms"]}
    assert len(made) == 2 and made == _alarm_names(aws, f"TargetTracking-{rid}-")
    # When it is restored, as the restore function would
    with recording() as calls:
        assert main(["restore", "async-tt"]) == 0
    # Then the reaper's policy is gone and AWS deleted its alarms; the owner's step policy and alarm stay
    assert set(_policies(aas, rid)) == {"async-tt-step"}
    assert _alarm_names(aws, "TargetTracking-") == set() and _alarm_names(aws, "async-tt-latency-high") == {"async-tt-latency-high"}
    # And what AWS did for the caller (its permission check, the alarms it deleted) is the restore function's to do
    deleted = {r.resource.rsplit(":", 1)[1] for r in calls.requests if r.action == "cloudwatch:DeleteAlarms"}
    assert made <= deleted and "" in deleted  # the two alarms, and Application Auto Scaling's unnamed check
    assert calls.actions <= function_actions("RestoreFunction")
    assert calls.ungranted("RestoreFunction") == []


def test_async_when_aws_refuses_zero_instances_directly_the_scale_in_policy_takes_it_there(aws, sm, aas, env, capsys, monkeypatch):
    from botocore.exceptions import ClientError

    from reaper.aws.clients import Clients

    se.asynchronous(sm, "async-refused", DEV)
    se.age("async-refused", datetime.now(UTC), 300)
    original = Clients.__call__

    def refusing(self: Any, service: str) -> Any:
        client = original(self, service)
        if service == "sagemaker":

            def refuse(**_kw: Any) -> Any:
                raise ClientError(
                    {"Error": {"Code": "ValidationException", "Message": "DesiredInstanceCount must be at least 1"}},
                    "UpdateEndpointWeightsAndCapacities",
                )

            monkeypatch.setattr(client, "update_endpoint_weights_and_capacities", refuse)
        return client

    monkeypatch.setattr(Clients, "__call__", refusing)
    assert main(SWEEP) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert row["verdict"] == "act" and row["executed"] is True
    assert "AWS did not take 0 instances directly" in row["detail"] and "scale-in policy takes it to 0" in row["detail"]
    assert "mlreaper-backlog-tracking" in _policies(aas, "endpoint/async-refused/variant/AllTraffic")
