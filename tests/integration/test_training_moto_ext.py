"""The moto jobs extension behaves like SageMaker where the guard relies on it, in-process and in
server mode (ThreadedMotoServer)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper_devkit import seed_training as st
from reaper_devkit.local_aws import local_account, session
from reaper_devkit.moto_ext import sagemaker_jobs

RUNNING = {"Filters": [{"Name": "TrainingJobStatus", "Operator": "Equals", "Value": "InProgress"}]}


def check_jobs(sm: Any) -> None:
    now = datetime.now(UTC)
    # Given a training job made through the API and moved 5 h into the past
    arn = st.training_job(sm, "j", now, hours_ago=5, count=2)
    d = sm.describe_training_job(TrainingJobName="j")
    assert d["TrainingJobStatus"] == "InProgress" and "TrainingEndTime" not in d
    assert abs((now - d["TrainingStartTime"]) - timedelta(hours=5)) < timedelta(seconds=2)
    # Search returns the real shape and pages
    for i in range(12):
        st.training_job(sm, f"k{i}", now, hours_ago=1)
    pages = list(sm.get_paginator("search").paginate(Resource="TrainingJob", SearchExpression=RUNNING, PaginationConfig={"PageSize": 5}))
    assert [len(p["Results"]) for p in pages] == [5, 5, 3]
    assert pages[0]["Results"][0]["TrainingJob"]["TrainingJobName"] == "k11"  # AWS's default: LastModifiedTime, newest first
    oldest_first = sm.search(Resource="TrainingJob", SortBy="CreationTime", SortOrder="Ascending", MaxResults=100)["Results"]
    assert oldest_first[0]["TrainingJob"]["TrainingJobArn"] == arn
    newest_first = sm.search(Resource="TrainingJob", SortBy="CreationTime", SortOrder="Descending", MaxResults=100)["Results"]
    assert newest_first[-1]["TrainingJob"]["TrainingJobArn"] == arn
    # A stop reads Stopping once, then Stopped; stopping again is refused as on AWS
    sm.stop_training_job(TrainingJobName="j")
    assert sm.describe_training_job(TrainingJobName="j")["TrainingJobStatus"] == "Stopping"
    assert sm.describe_training_job(TrainingJobName="j")["TrainingJobStatus"] == "Stopped"
    with pytest.raises(ClientError) as err:
        sm.stop_training_job(TrainingJobName="j")
    assert err.value.response["Error"]["Code"] == "ValidationException"
    # Processing jobs keep their resources and stop the same way
    st.processing_job(sm, "p", now, hours_ago=2, instance_type="ml.m5.xlarge")
    p = sm.describe_processing_job(ProcessingJobName="p")
    assert p["ProcessingJobStatus"] == "InProgress" and p["ProcessingResources"]["ClusterConfig"]["InstanceType"] == "ml.m5.xlarge"
    sm.stop_processing_job(ProcessingJobName="p")
    assert sm.describe_processing_job(ProcessingJobName="p")["ProcessingJobStatus"] == "Stopping"
    # A tuning job lists the training jobs it launched; stopping it stops the running ones
    st.tuning_job(sm, "t", now, hours_ago=3, children=[(3, 2), (1, None)])
    children = sm.list_training_jobs_for_hyper_parameter_tuning_job(HyperParameterTuningJobName="t", MaxResults=100)["TrainingJobSummaries"]
    assert [(c["TrainingJobName"], c["TrainingJobStatus"]) for c in children] == [("t-001", "Completed"), ("t-002", "InProgress")]
    sm.stop_hyper_parameter_tuning_job(HyperParameterTuningJobName="t")
    assert sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName="t")["HyperParameterTuningJobStatus"] == "Stopping"
    assert sm.describe_training_job(TrainingJobName="t-002")["TrainingJobStatus"] == "Stopping"
    check_batch_jobs(sm, now)


def check_batch_jobs(sm: Any, now: datetime) -> None:
    # Transform and AutoML jobs run, list as running, stop through Stopping, and refuse a second stop
    st.transform_job(sm, "x", now, hours_ago=2)
    aml = st.automl_job(sm, "a", now, hours_ago=2)
    assert [s["TransformJobName"] for s in sm.list_transform_jobs(StatusEquals="InProgress")["TransformJobSummaries"]] == ["x"]
    assert [s["AutoMLJobName"] for s in sm.list_auto_ml_jobs(StatusEquals="InProgress")["AutoMLJobSummaries"]] == ["a"]
    assert "TransformEndTime" not in sm.describe_transform_job(TransformJobName="x")
    sm.stop_transform_job(TransformJobName="x")
    sm.stop_auto_ml_job(AutoMLJobName="a")
    assert sm.describe_transform_job(TransformJobName="x")["TransformJobStatus"] == "Stopping"
    assert sm.describe_transform_job(TransformJobName="x")["TransformJobStatus"] == "Stopped"
    assert sm.describe_auto_ml_job_v2(AutoMLJobName="a")["AutoMLJobStatus"] == "Stopping"
    assert sm.describe_auto_ml_job_v2(AutoMLJobName="a")["AutoMLJobStatus"] == "Stopped"
    for stop in (lambda: sm.stop_transform_job(TransformJobName="x"), lambda: sm.stop_auto_ml_job(AutoMLJobName="a")):
        with pytest.raises(ClientError) as err:
            stop()
        assert err.value.response["Error"]["Code"] == "ValidationException"
    # A candidate the AutoML job launched carries its AutoMLJobArn, in Search and DescribeTrainingJob
    child = st.training_job(sm, "a-c1", now, hours_ago=1)
    sagemaker_jobs.link_automl(child, aml)
    assert sm.describe_training_job(TrainingJobName="a-c1")["AutoMLJobArn"] == aml
    found = sm.search(Resource="TrainingJob", SearchExpression=RUNNING, MaxResults=100)["Results"]
    assert {r["TrainingJob"]["TrainingJobName"]: r["TrainingJob"].get("AutoMLJobArn") for r in found}["a-c1"] == aml


def test_in_process(sm):
    check_jobs(sm)


@pytest.mark.slow
def test_in_server_mode():
    with local_account():
        check_jobs(session().client("sagemaker"))
