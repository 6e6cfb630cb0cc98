"""The creation-time notice of every kind (reaper/kinds/creation.py): each kind's real function, called with the
CloudTrail record of its Create call (events/<kind>-cloudtrail-create.json, its ids pointed at what moto made),
asks for ml:owner, ml:stage and ml:project as the training job's admission does, once per resource; a resource
created with them (and a kill date) is not told; a failed call and a resource gone since say nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper_devkit import seed_bedrock, seed_capacity, seed_fsx, seed_mlflow
from reaper_devkit import seed_studio as studio
from reaper_devkit.calls import recording
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function

TAGGED = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "churn", "reaper:kill-after": "2027-01-31"}


def _fsx(aws: Any, tags: dict[str, str]) -> tuple[str, Callable[[dict[str, Any]], None]]:
    subnet, group = seed_fsx.network(aws.client("ec2"))
    fs_id = seed_fsx.file_system(aws.client("fsx"), subnet, group, tags=tags)

    def point(ev: dict[str, Any]) -> None:
        fs = ev["detail"]["responseElements"]["fileSystem"]
        fs["fileSystemId"], fs["resourceARN"] = fs_id, f"arn:aws:fsx:us-east-1:123456789012:file-system/{fs_id}"

    return fs_id, point


def _studio(aws: Any, tags: dict[str, str]) -> tuple[str, Callable[[dict[str, Any]], None]]:
    sm = aws.client("sagemaker")
    domain = studio.domain(sm, "d1")
    studio.user(sm, domain, "ana")
    studio.space(sm, domain, "ana-space", owner="ana")
    arn = studio.app(sm, domain, space_name="ana-space", tags=tags)

    def point(ev: dict[str, Any]) -> None:
        ev["detail"]["requestParameters"]["domainId"] = domain
        ev["detail"]["responseElements"]["appArn"] = arn

    return "default", point


def _capacity(aws: Any, tags: dict[str, str]) -> tuple[str, Callable[[dict[str, Any]], None]]:
    cr = seed_capacity.odcr(aws.client("ec2"), tags=tags, now=datetime.now(UTC), created_ago=timedelta(minutes=1))

    def point(ev: dict[str, Any]) -> None:
        ev["detail"]["responseElements"]["CreateCapacityReservationResponse"]["capacityReservation"]["capacityReservationId"] = cr

    return cr, point


def _bedrock(aws: Any, tags: dict[str, str]) -> tuple[str, Callable[[dict[str, Any]], None]]:
    arn = seed_bedrock.provisioned(aws.client("bedrock"), "pt-new", datetime.now(UTC), tags=tags)

    def point(ev: dict[str, Any]) -> None:
        ev["detail"]["responseElements"]["provisionedModelArn"] = arn

    return "pt-new", point


def _mlflow(aws: Any, tags: dict[str, str]) -> tuple[str, Callable[[dict[str, Any]], None]]:
    seed_mlflow.server(aws.client("sagemaker"), "untagged-tracking", tags=tags)
    return "untagged-tracking", lambda ev: None


TEMPLATE_FUNCTION = {
    "fsx": "FsxFunction",
    "studio-app": "StudioAppFunction",
    "capacity": "CapacityFunction",
    "bedrock-pt": "BedrockPtFunction",
    "mlflow": "MlflowFunction",
}
KINDS = {
    "fsx": ("fsx", "fsx-cloudtrail-create.json", _fsx),
    "studio-app": ("studio_app", "studio-app-cloudtrail-create.json", _studio),
    "capacity": ("capacity", "capacity-cloudtrail-create.json", _capacity),
    "bedrock-pt": ("bedrock_pt", "bedrock-pt-cloudtrail-create.json", _bedrock),
    "mlflow": ("mlflow", "mlflow-cloudtrail-create.json", _mlflow),
}


def _event(name: str, point: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    ev = json.loads(json.dumps(event(name)))
    point(ev)
    return ev


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_resource_created_without_its_ml_tags_is_told_once_what_it_lacks(aws, deployed_env, lambda_context, kind):
    # Given a new resource of the kind, created without tags, and CloudTrail's record of its Create call
    function, sample, make = KINDS[kind]
    rid, point = make(aws, {})
    app = load_function(function)
    # When the record is delivered twice
    with recording() as calls:
        results = [app.handler(_event(sample, point), lambda_context) for _ in range(2)]
    assert calls.actions and calls.actions <= function_actions(TEMPLATE_FUNCTION[kind])  # the role grants every read
    # Then the owner (here: the admin channel) is told once, of the three ml: tags and of a kill date or budget
    assert results[0]["checked"] == rid and results[0]["posted"] is True and results[1]["posted"] is False
    problems = " ".join(results[0]["problems"])
    assert all(f"no `{key}` tag" in problems for key in ("ml:owner", "ml:stage", "ml:project")), problems
    assert "neither a kill date nor a budgeted project" in problems
    notices = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("type") == "notice"]
    assert len(notices) == 1 and notices[0]["kind"] == kind and "was created without what the reaper needs" in notices[0]["title"]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_resource_created_with_its_tags_is_not_told(aws, deployed_env, lambda_context, kind):
    function, sample, make = KINDS[kind]
    rid, point = make(aws, TAGGED)
    result = load_function(function).handler(_event(sample, point), lambda_context)
    assert result["checked"] == rid and result["problems"] == [] and result["posted"] is False
    assert not [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("type") == "notice"]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_failed_call_says_nothing(aws, deployed_env, lambda_context, kind):
    function, sample, _ = KINDS[kind]
    failed = event(sample)
    failed["detail"]["errorCode"] = "ValidationException"
    result = load_function(function).handler(failed, lambda_context)
    assert result["posted"] is False and "the call failed" in result["skipped"]


def test_a_server_deleted_since_says_nothing(aws, deployed_env, lambda_context):
    result = load_function("mlflow").handler(event("mlflow-cloudtrail-create.json"), lambda_context)  # never made
    assert result["posted"] is False and "gone" in result["skipped"]
