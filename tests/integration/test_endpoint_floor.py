"""The endpoint sweep at its floor of calls, and what it does when one optional read fails: models
from ListModels pages, no configuration read for endpoints only told "tag it dev", and a failing
ListInferenceComponents or ListModels that degrades only the endpoints that depend on it."""

from __future__ import annotations

from datetime import UTC, datetime

from reaper_devkit import seed_endpoint as se
from reaper_devkit.calls import recording
from tests.conftest import drain, event, load_function, throttle

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
NO_STAGE = {"ml:owner": "bo@example.com"}


def nonzero(verdicts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in verdicts.items() if v}


def by_id(result_errors: list[str]) -> dict[str, str]:
    return {e.split(":", 1)[0].removeprefix("endpoint "): e for e in result_errors}


def test_models_are_checked_from_list_pages_not_one_describe_each(aws, sm, deployed_env, lambda_context):
    # Given five idle dev classic endpoints, one whose model was deleted
    now = datetime.now(UTC)
    for name in ("a", "b", "c", "d", "e"):
        se.classic(sm, name, DEV)
        se.age(name, now, 300)
    sm.delete_model(ModelName="c-model-alltraffic")
    app = load_function("endpoint")
    # When the sweep runs (dry-run)
    with recording() as calls:
        result = app.handler(event("endpoint-schedule.json"), lambda_context)
    # Then the models came from one ListModels page, none was described, and c is refused by name
    ops = calls.by_operation()
    assert ops.get("sagemaker:ListModels") == 1 and "sagemaker:DescribeModel" not in ops
    assert nonzero(result["verdicts"]) == {"act": 4, "error": 1}
    assert "c-model-alltraffic" in by_id(result["errors"])["c"]


def test_an_endpoint_only_told_to_tag_itself_dev_has_no_configuration_read(aws, sm, cw, deployed_env, lambda_context):
    # Given quiet endpoints without a stage: a classic one, and an async one with a backlog
    now = datetime.now(UTC)
    se.classic(sm, "plain", NO_STAGE)
    se.age("plain", now, 300)
    se.asynchronous(sm, "queued", NO_STAGE)
    se.age("queued", now, 300)
    se.backlog(cw, "queued", now, [0, 4])
    app = load_function("endpoint")
    # When the sweep runs
    with recording() as calls:
        result = app.handler(event("endpoint-schedule.json"), lambda_context)
    # Then no configuration was read; the classic one gets the notice, the async one is in use
    assert "sagemaker:DescribeEndpointConfig" not in calls.by_operation()
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert nonzero(result["verdicts"]) == {"keep": 2}
    assert set(messages) == {"plain"} and "only dev stages" in messages["plain"]["reason"]


def test_failing_list_inference_components_leaves_only_component_endpoints_undecided(
    aws, sm, cw, deployed_env, lambda_context, monkeypatch
):
    # Given idle dev endpoints of each type, and ListInferenceComponents throttled
    now = datetime.now(UTC)
    se.classic(sm, "classic", DEV)
    se.age("classic", now, 300)
    se.asynchronous(sm, "async", DEV)
    se.age("async", now, 300)
    se.components(sm, "ic", {"ic-a": 1}, DEV)
    se.age("ic", now, 300)
    se.classic(sm, "busy", DEV)
    se.age("busy", now, 300)
    se.invocations(cw, "busy", now, [0, 3])
    app = load_function("endpoint")
    throttle(monkeypatch, app.RUNTIME.clients()("sagemaker"), "list_inference_components")
    # When the sweep runs
    result = app.handler(event("endpoint-schedule.json"), lambda_context)
    # Then only the component endpoint is an error, with the reason; the rest of the kind is swept
    assert nonzero(result["verdicts"]) == {"act": 2, "error": 1, "keep": 1}
    errors = by_id(result["errors"])
    assert set(errors) == {"ic"}
    assert "could not list its inference components" in errors["ic"] and "ThrottlingException" in errors["ic"]


def test_failing_list_models_leaves_only_dev_classic_endpoints_undecided(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given two idle dev classic endpoints and an idle dev component endpoint, and ListModels throttled
    now = datetime.now(UTC)
    for name in ("a", "b"):
        se.classic(sm, name, DEV)
        se.age(name, now, 300)
    se.components(sm, "ic", {"ic-a": 1}, DEV)
    se.age("ic", now, 300)
    app = load_function("endpoint")
    throttle(monkeypatch, app.RUNTIME.clients()("sagemaker"), "list_models")
    # When the sweep runs
    result = app.handler(event("endpoint-schedule.json"), lambda_context)
    # Then the classic endpoints are errors saying why (no delete without knowing the models exist);
    # the component endpoint is decided
    errors = by_id(result["errors"])
    assert set(errors) == {"a", "b"} and all("could not check that its models exist" in e for e in errors.values())
    assert nonzero(result["verdicts"]) == {"act": 1, "error": 2}


def test_list_inference_components_denied_degrades_only_component_endpoints_of_every_stage(
    aws, sm, deployed_env, lambda_context, monkeypatch
):
    # Given quiet endpoints of every stage, two of them hosting components, and ListInferenceComponents denied
    # (a role without the permission: not retryable, unlike throttling)
    from botocore.exceptions import ClientError

    now = datetime.now(UTC)
    prod = {"ml:owner": "ops@example.com", "ml:stage": "prod"}
    se.components(sm, "ic-prod", {"ic-p": 1}, prod)
    se.components(sm, "ic-nostage", {"ic-n": 1}, NO_STAGE)
    se.classic(sm, "classic-prod", prod)
    se.classic(sm, "classic-nostage", NO_STAGE)
    se.classic(sm, "classic-dev", DEV)
    for name in ("ic-prod", "ic-nostage", "classic-prod", "classic-nostage", "classic-dev"):
        se.age(name, now, 300)
    app = load_function("endpoint")

    def denied(**_kwargs):
        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not authorized"}}, "ListInferenceComponents")

    monkeypatch.setattr(app.RUNTIME.clients()("sagemaker"), "list_inference_components", denied)
    # When the sweep runs
    result = app.handler(event("endpoint-schedule.json"), lambda_context)
    # Then the two component endpoints are errors naming the denial; every other endpoint is decided as usual
    errors = by_id(result["errors"])
    assert set(errors) == {"ic-prod", "ic-nostage"}
    assert all("could not list its inference components" in e and "AccessDenied" in e for e in errors.values())
    assert nonzero(result["verdicts"]) == {"error": 2, "exempt": 1, "act": 1, "keep": 1}
