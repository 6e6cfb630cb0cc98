"""The endpoint function, called with the JSON in events/ against moto (with the moto extensions)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper import kinds
from reaper.core.errors import BadEventError
from reaper.core.model import Decision, Mode, Outcome, Verdict
from reaper.handlers import handle_kind_event
from reaper.kinds.base import ActContext
from reaper.record.actionlog import ActionLog
from reaper.sweep import pipeline
from reaper.wiring import build_runtime
from reaper_devkit import seed_endpoint as se
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext.sagemaker_inference import set_status
from reaper_devkit.template import function_actions
from tests.conftest import TABLE, drain, event, load_function, throttle
from tests.helpers.events import MALFORMED_ANY_KIND
from tests.helpers.modes import enforce_mode

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
MUTATING = ("Delete", "Update", "Create", "Register", "Deregister", "Put", "Add")


def endpoints(sm: Any) -> set[str]:
    return {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]}


def copies(sm: Any, name: str) -> int:
    return int(sm.describe_inference_component(InferenceComponentName=name)["RuntimeConfig"]["DesiredCopyCount"])


def tags(sm: Any, name: str) -> dict[str, str]:
    arn = sm.describe_endpoint(EndpointName=name)["EndpointArn"]
    return {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=arn)["Tags"]}


@pytest.fixture
def aas(aws):
    return aws.client("application-autoscaling")


@pytest.fixture
def fleet(sm, cw, aas) -> dict[str, str]:
    """One endpoint per interesting case; the value is the verdict a correct sweep gives."""
    now = datetime.now(UTC)
    se.classic(sm, "idle-gpu", DEV, instance_type="ml.g4dn.xlarge")
    se.age("idle-gpu", now, 130)
    se.autoscale(aas, "idle-gpu", minimum=1, maximum=3)
    se.classic(sm, "busy", DEV)
    se.age("busy", now, 300)
    se.invocations(cw, "busy", now, [0, 2])
    se.classic(sm, "young", DEV)
    se.age("young", now, 30)
    se.components(sm, "ic-idle", {"ic-a": 2, "ic-b": 1}, DEV)
    se.age("ic-idle", now, 300)
    se.components(sm, "ic-busy", {"ic-c": 1}, DEV)
    se.age("ic-busy", now, 300)
    se.component_invocations(cw, "ic-c", now, [5])  # AWS publishes component endpoints' invocations per component
    se.asynchronous(sm, "async-idle", DEV)
    se.age("async-idle", now, 300)
    se.classic(sm, "exempt", {**DEV, "reaper:exempt": "true"})
    se.age("exempt", now, 300)
    se.classic(sm, "snoozed", {**DEV, "reaper:snooze-until": (now + timedelta(days=2)).strftime("%Y-%m-%d")})
    se.age("snoozed", now, 300)
    se.classic(sm, "prod", {"ml:owner": "ops@example.com", "ml:stage": "Prod "})
    se.age("prod", now, 300)
    se.classic(sm, "bad-tag", {**DEV, "reaper:idle-minutes": "soon"})
    se.age("bad-tag", now, 300)
    se.classic(sm, "creating", DEV)
    set_status("creating", "Creating")
    return {
        "idle-gpu": "act",
        "busy": "keep",
        "young": "keep",
        "ic-idle": "act",
        "ic-busy": "keep",
        "async-idle": "act",
        "exempt": "exempt",
        "snoozed": "exempt",
        "prod": "exempt",
        "bad-tag": "exempt",
        "creating": "keep",
    }


def test_dry_run_decides_every_endpoint_and_changes_nothing(aws, sm, fleet, deployed_env, lambda_context):
    # Given the deployed defaults (dry-run)
    app = load_function("endpoint")
    # When the schedule fires
    with recording() as calls:
        result = app.handler(event("endpoint-schedule.json"), lambda_context)
    # Then every endpoint has the expected verdict and nothing changed in AWS
    assert result["resources"] == len(fleet) and result["acted"] == []
    counts = {v: list(fleet.values()).count(v) for v in ("act", "keep", "exempt")}
    assert {k: result["verdicts"][k] for k in counts} == counts
    assert endpoints(sm) == set(fleet)
    assert copies(sm, "ic-a") == 2 and copies(sm, "ic-c") == 1
    assert not {a for a in calls.actions if a.split(":")[1].startswith(MUTATING) and not a.startswith(("dynamodb:", "sqs:"))}
    assert calls.actions <= function_actions("EndpointFunction")
    assert calls.ungranted("EndpointFunction") == []  # on the resource it names, conditions included
    # And the messages say what would happen, with cost, evidence and the restore command
    by_id = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert set(by_id) == {"idle-gpu", "ic-idle", "async-idle", "prod", "bad-tag"}
    gpu = by_id["idle-gpu"]
    assert gpu["verdict"] == "act" and gpu["executed"] is False and gpu["mode"] == "dry-run"
    assert gpu["instance_type"] == "ml.g4dn.xlarge" and gpu["instance_count"] == 1
    assert gpu["hourly_usd"] == pytest.approx(0.7364) and gpu["monthly_usd"] == pytest.approx(0.7364 * 730, abs=0.01)
    assert gpu["reason"].startswith("0 invocations in 2 h 1")  # InService for 2 h 10 m, no data
    assert gpu["undo"].startswith(f"reaper restore idle-gpu --table {TABLE}") and "GPU endpoint" in gpu["undo"] and "minutes" in gpu["undo"]
    assert "production stage" in by_id["prod"]["reason"] and "reaper:idle-minutes" in by_id["bad-tag"]["reason"]


def test_enforce_takes_exactly_the_idle_dev_endpoints_to_zero_each_its_own_way(
    aws, sm, aas, fleet, deployed_env, lambda_context, monkeypatch
):
    # Given enforce with no grace
    enforce_mode(monkeypatch)
    app = load_function("endpoint")
    # When the schedule fires
    with recording() as calls:
        result = app.handler(event("endpoint-schedule.json"), lambda_context)
    # Then the three idle dev endpoints went to zero and nothing else changed
    assert sorted(result["acted"]) == ["async-idle", "ic-idle", "idle-gpu"]
    assert endpoints(sm) == set(fleet) - {"idle-gpu"}  # classic: deleted
    assert sm.describe_endpoint_config(EndpointConfigName="idle-gpu-config") and sm.describe_model(ModelName="idle-gpu-model-alltraffic")
    assert (copies(sm, "ic-a"), copies(sm, "ic-b"), copies(sm, "ic-c")) == (0, 0, 1)  # components: 0 copies
    target = aas.describe_scalable_targets(ServiceNamespace="sagemaker", ResourceIds=["endpoint/async-idle/variant/AllTraffic"])[
        "ScalableTargets"
    ]
    assert [t["MinCapacity"] for t in target] == [0]  # async: minimum 0 ...
    alarms = aws.client("cloudwatch").describe_alarms(AlarmNames=["mlreaper-wake-async-idle"])["MetricAlarms"]
    assert alarms and alarms[0]["MetricName"] == "HasBacklogWithoutCapacity"  # ... woken by its backlog
    assert sm.describe_endpoint(EndpointName="async-idle")["ProductionVariants"][0]["CurrentInstanceCount"] == 0
    # And the classic endpoint's restore record holds its config, tags and autoscaling
    record = ActionLog(aws.client("dynamodb"), TABLE).latest_restore("endpoint", "idle-gpu")
    assert record is not None and record["config_name"] == "idle-gpu-config" and record["type"] == "classic"
    assert {t["Key"]: t["Value"] for t in record["tags"]} == DEV
    assert [(t["min"], t["max"], [p["name"] for p in t["policies"]]) for t in record["autoscaling"]] == [(1, 3, ["idle-gpu-invocations"])]
    assert (
        aas.describe_scalable_targets(ServiceNamespace="sagemaker", ResourceIds=["endpoint/idle-gpu/variant/AllTraffic"])["ScalableTargets"]
        == []
    )
    assert calls.actions <= function_actions("EndpointFunction")
    assert calls.ungranted("EndpointFunction") == []  # on the resource it names, conditions included
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "act"}
    assert all(m["executed"] for m in messages.values()) and set(messages) == {"idle-gpu", "ic-idle", "async-idle"}
    assert "restore record written" in messages["idle-gpu"]["detail"] and "reaper restore idle-gpu" in messages["idle-gpu"]["undo"]
    assert "ic-a (was 2)" in messages["ic-idle"]["detail"]


def test_enforce_warns_first_then_acts_after_the_grace_period(aws, sm, fleet, deployed_env, lambda_context, monkeypatch):
    # Given enforce with a 60-minute grace
    enforce_mode(monkeypatch, grace=60)
    app = load_function("endpoint")
    # When the first sweep runs, Then it only warns and tags
    first = app.handler(event("endpoint-schedule.json"), lambda_context)
    assert first["acted"] == [] and first["verdicts"]["warn"] == 3
    assert "reaper:warned-at" in tags(sm, "idle-gpu") and endpoints(sm) == set(fleet)
    drain(aws, deployed_env["REAPER_QUEUE_URL"])
    # When a sweep runs after the grace period, Then it acts, and the record keeps the tags without the warning
    later = datetime.now(UTC) + timedelta(minutes=61)
    se.invocations(aws.client("cloudwatch"), "busy", later, [3])
    done = handle_kind_event(event("endpoint-schedule.json", id="after-grace"), "endpoint", app.RUNTIME, now=later)
    assert sorted(done["acted"]) == ["async-idle", "ic-idle", "idle-gpu"] and done["errors"] == []
    record = ActionLog(aws.client("dynamodb"), TABLE).latest_restore("endpoint", "idle-gpu")
    assert record is not None and "reaper:warned-at" not in {t["Key"] for t in record["tags"]}
    assert "reaper:warned-at" not in tags(sm, "ic-idle")
    acted = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "act"}
    assert "could not remove" not in (acted["idle-gpu"]["detail"] or "")


def test_same_event_three_times_acts_and_posts_once(aws, sm, fleet, deployed_env, lambda_context, monkeypatch):
    enforce_mode(monkeypatch)
    app = load_function("endpoint")
    results = [app.handler(event("endpoint-schedule.json"), lambda_context) for _ in range(3)]
    assert sorted(results[0]["acted"]) == ["async-idle", "ic-idle", "idle-gpu"]
    assert results[1]["acted"] == [] and results[2]["acted"] == []
    assert results[1]["errors"] == [] and results[2]["errors"] == []
    acts = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "act"]
    assert sorted(m["id"] for m in acts) == ["async-idle", "ic-idle", "idle-gpu"]


@pytest.fixture
def two_idle_classics(sm: Any, deployed_env: dict[str, str]) -> None:
    """Idle dev classic endpoints a and b, in service for 5 hours."""
    now = datetime.now(UTC)
    for name in ("a", "b"):
        se.classic(sm, name, DEV, instance_type="ml.m5.large")
        se.age(name, now, 300)


def test_throttled_delete_is_an_error_and_the_sweep_goes_on(aws, sm, deployed_env, lambda_context, monkeypatch, two_idle_classics):
    # Given two idle classic endpoints, and DeleteEndpoint throttled for one of them
    enforce_mode(monkeypatch)
    app = load_function("endpoint")
    client = app.RUNTIME.clients()("sagemaker")
    throttle(monkeypatch, client, "delete_endpoint", {"EndpointName": "a"})
    # When the sweep runs
    result = app.handler(event("endpoint-schedule.json"), lambda_context)
    # Then a is an error, still there; b is deleted
    assert result["acted"] == ["b"] and len(result["errors"]) == 1 and "ThrottlingException" in result["errors"][0]
    assert endpoints(sm) == {"a"}
    errors = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "error"]
    assert [m["id"] for m in errors] == ["a"]


def test_throttled_config_read_is_an_error_for_that_endpoint_only(aws, sm, deployed_env, lambda_context, monkeypatch, two_idle_classics):
    app = load_function("endpoint")
    client = app.RUNTIME.clients()("sagemaker")
    throttle(monkeypatch, client, "describe_endpoint_config", {"EndpointConfigName": "a-config"})
    result = app.handler(event("endpoint-schedule.json"), lambda_context)
    assert result["verdicts"]["error"] == 1 and result["verdicts"]["act"] == 1
    assert "ThrottlingException" in result["errors"][0] and result["errors"][0].startswith("endpoint a:")


def test_without_an_action_log_every_endpoint_action_is_refused_and_nothing_changes(aws, sm, queue, lambda_context, monkeypatch):
    # Given enforce, a queue, and no action log
    monkeypatch.setenv("REAPER_QUEUE_URL", queue)
    enforce_mode(monkeypatch)
    now = datetime.now(UTC)
    se.classic(sm, "classic", DEV)
    se.age("classic", now, 300)
    se.components(sm, "ic", {"ic-x": 1}, DEV)
    se.age("ic", now, 300)
    app = load_function("endpoint")
    # When the sweep runs
    result = app.handler(event("endpoint-schedule.json"), lambda_context)
    # Then the delete and the scale-to-zero are both refused (their restore records need the log), nothing changed
    assert result["acted"] == [] and result["verdicts"]["error"] == 2
    assert all("no action log" in e for e in result["errors"])
    assert "classic" in endpoints(sm) and copies(sm, "ic-x") == 1
    errors = {m["id"]: m for m in drain(aws, queue) if m["verdict"] == "error"}
    assert set(errors) == {"classic", "ic"} and all("restore record" in m["reason"] for m in errors.values())


@pytest.mark.parametrize("missing", ["config", "model"])
def test_missing_config_or_model_refuses_the_delete(aws, sm, deployed_env, lambda_context, monkeypatch, missing):
    # Given an idle dev endpoint whose config (or model) someone deleted
    enforce_mode(monkeypatch)
    se.classic(sm, "orphan", DEV)
    se.age("orphan", datetime.now(UTC), 300)
    if missing == "config":
        sm.delete_endpoint_config(EndpointConfigName="orphan-config")
    else:
        sm.delete_model(ModelName="orphan-model-alltraffic")
    app = load_function("endpoint")
    # When the sweep runs, Then it is refused with a reason, and nothing is deleted
    result = app.handler(event("endpoint-schedule.json"), lambda_context)
    assert result["acted"] == [] and result["verdicts"]["error"] == 1
    assert "could not be brought back" in result["errors"][0]
    assert endpoints(sm) == {"orphan"}
    assert ActionLog(aws.client("dynamodb"), TABLE).latest_restore("endpoint", "orphan") is None


def test_the_delete_checks_again_just_before_acting(aws, sm, table):
    # Given a decision to delete taken while the model existed, and the model deleted since
    se.classic(sm, "racy", DEV)
    se.age("racy", datetime.now(UTC), 300)
    kind = kinds.get("endpoint")
    from reaper.core.settings import Settings

    rt = build_runtime(Settings(mode=Mode.ENFORCE, grace_minutes=0, table=table), session=aws, region="us-east-1")
    now = datetime.now(UTC)
    resource = next(r for r in kind.discover(rt.clients(), rt.settings, now) if r.id == "racy")
    sm.delete_model(ModelName="racy-model-alltraffic")
    outcome = Outcome(resource, Decision(Verdict.ACT, "idle", action="delete"), Mode.ENFORCE)
    ctx = ActContext(clients=rt.clients(), settings=rt.settings, now=now, log=rt.log, event_id="race")
    # When the pipeline acts
    outcome.result = pipeline.enforce(kind, outcome, ctx)
    # Then the action refuses: error, nothing deleted, no record
    assert (
        outcome.verdict is Verdict.ERROR
        and "refused to delete" in (outcome.error or "")
        and "racy-model-alltraffic" in (outcome.error or "")
    )
    assert endpoints(sm) == {"racy"} and rt.log is not None and rt.log.latest_restore("endpoint", "racy") is None


@pytest.mark.parametrize(
    "bad",
    [
        *MALFORMED_ANY_KIND,
        {
            "id": "x",
            "detail-type": "SageMaker Endpoint State Change",
            "source": "aws.sagemaker",
            "detail": {"EndpointStatus": "IN_SERVICE"},
        },
        {"id": "x", "detail-type": "SageMaker Endpoint State Change", "source": "aws.sagemaker", "detail": {"EndpointName": "idle-gpu"}},
        {"id": "x", "detail-type": "SageMaker Training Job State Change", "source": "aws.sagemaker", "detail": {}},
    ],
)
def test_malformed_events_are_refused_and_change_nothing(aws, sm, fleet, deployed_env, lambda_context, monkeypatch, bad):
    enforce_mode(monkeypatch)
    app = load_function("endpoint")
    with pytest.raises(BadEventError):
        app.handler(bad, lambda_context)
    assert endpoints(sm) == set(fleet) and copies(sm, "ic-a") == 2
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []
