"""The test kit's MLflow tracking servers answer and refuse as the SageMaker API reference says (moto_ext/mlflow.py),
through the kit's server (boto3 against moto in server mode). What botocore's shapes already refuse (a size outside
Small/Medium/Large, a name outside the pattern, MaxResults over 100) the shape check (tests/plugins/aws_shapes.py)
keeps out of every test; the kit refuses it too, for callers without the shapes."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from reaper_devkit import seed_mlflow
from reaper_devkit.moto_ext.mlflow import set_status


def test_create_goes_creating_then_created_with_its_size_tags_and_active(sm):
    arn = sm.create_mlflow_tracking_server(TrackingServerName="ts-a", ArtifactStoreUri="s3://b/a", RoleArn=seed_mlflow.ROLE)[
        "TrackingServerArn"
    ]
    assert arn.endswith(":mlflow-tracking-server/ts-a")
    first = sm.describe_mlflow_tracking_server(TrackingServerName="ts-a")
    assert first["TrackingServerStatus"] == "Creating" and first["TrackingServerSize"] == "Small"  # the documented default
    then = sm.describe_mlflow_tracking_server(TrackingServerName="ts-a")
    assert then["TrackingServerStatus"] == "Created" and then["IsActive"] == "Active"


def test_a_name_in_use_is_refused(sm):
    seed_mlflow.server(sm, "ts-c")
    with pytest.raises(ClientError, match="ResourceInUse"):
        sm.create_mlflow_tracking_server(TrackingServerName="ts-c", ArtifactStoreUri="s3://b/c", RoleArn=seed_mlflow.ROLE)


def test_stop_and_start_move_through_their_states_and_keep_the_experiments(sm):
    seed_mlflow.server(sm, "ts-d", experiments=("e1", "e2"))
    sm.stop_mlflow_tracking_server(TrackingServerName="ts-d")
    assert seed_mlflow.status(sm, "ts-d") == "Stopping"
    assert seed_mlflow.status(sm, "ts-d") == "Stopped"
    assert sm.describe_mlflow_tracking_server(TrackingServerName="ts-d")["IsActive"] == "Inactive"
    with pytest.raises(ClientError, match="ConflictException"):
        sm.stop_mlflow_tracking_server(TrackingServerName="ts-d")  # stopped already
    sm.start_mlflow_tracking_server(TrackingServerName="ts-d")
    assert seed_mlflow.status(sm, "ts-d") == "Starting"
    assert seed_mlflow.status(sm, "ts-d") == "Started"
    assert seed_mlflow.experiments(sm, "ts-d") == ["e1", "e2"]
    with pytest.raises(ClientError, match="ConflictException"):
        sm.start_mlflow_tracking_server(TrackingServerName="ts-d")  # running


@pytest.mark.parametrize("status", ["Updating", "Creating", "StopFailed", "MaintenanceInProgress"])
def test_a_server_that_is_not_running_cannot_be_stopped(sm, status):
    seed_mlflow.server(sm, "ts-e")
    set_status("ts-e", status, "us-east-1")
    with pytest.raises(ClientError, match="ConflictException"):
        sm.stop_mlflow_tracking_server(TrackingServerName="ts-e")


def test_no_such_server_is_resource_not_found(sm):
    for call in (sm.describe_mlflow_tracking_server, sm.stop_mlflow_tracking_server, sm.start_mlflow_tracking_server):
        with pytest.raises(ClientError, match="ResourceNotFound"):
            call(TrackingServerName="nope")
    seed_mlflow.server(sm, "ts-f")
    sm.delete_mlflow_tracking_server(TrackingServerName="ts-f")
    with pytest.raises(ClientError, match="ResourceNotFound"):
        sm.describe_mlflow_tracking_server(TrackingServerName="ts-f")


def test_list_pages_with_next_token_and_carries_no_size(sm):
    for i in range(3):
        seed_mlflow.server(sm, f"ts-g{i}")
    page = sm.list_mlflow_tracking_servers(MaxResults=2)
    assert len(page["TrackingServerSummaries"]) == 2 and page["NextToken"]
    assert "TrackingServerSize" not in page["TrackingServerSummaries"][0]  # the summary carries no size
    rest = sm.list_mlflow_tracking_servers(MaxResults=2, NextToken=page["NextToken"])
    assert len(rest["TrackingServerSummaries"]) == 1 and "NextToken" not in rest


def test_tags_are_read_by_arn_and_in_bulk(aws, sm):
    arn = seed_mlflow.server(sm, "ts-h", tags={"ml:owner": "ana@example.com"})
    sm.add_tags(ResourceArn=arn, Tags=[{"Key": "reaper:exempt", "Value": "true"}])
    assert {t["Key"] for t in sm.list_tags(ResourceArn=arn)["Tags"]} == {"ml:owner", "reaper:exempt"}
    found = aws.client("resourcegroupstaggingapi").get_resources(ResourceTypeFilters=["sagemaker:mlflow-tracking-server"])
    assert [r["ResourceARN"] for r in found["ResourceTagMappingList"]] == [arn]
