"""The test kit refuses what AWS refuses, in-process and against a moto server.

Each case names the AWS page the rule comes from (see devkit/reaper_devkit/moto_ext/*).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper.aws.faults import is_not_found as job_gone
from reaper_devkit import seed_endpoint as se
from reaper_devkit import seed_fsx as sf
from reaper_devkit import seed_training as st
from reaper_devkit.local_aws import local_account, session
from reaper_devkit.moto_ext import fsx as fsx_ext
from tests.plugins import aws_shapes


def refused(call: Any, **kwargs: Any) -> dict[str, str]:
    with pytest.raises(ClientError) as err:
        call(**kwargs)
    return dict(err.value.response["Error"])


# -- FSx: API_CreateBackup, API_DeleteFileSystem ----------------------------------------------


def test_a_persistent_file_system_linked_by_an_association_cannot_be_backed_up(aws):
    fsx = aws.client("fsx")
    subnet, group = sf.network(aws.client("ec2"))
    linked = sf.file_system(fsx, subnet, group, deployment="PERSISTENT_2")
    sf.link(fsx, linked, "s3://datasets/run-1", fs_path="/data")
    assert refused(fsx.create_backup, FileSystemId=linked)["Code"] == "BadRequest"
    legacy = sf.file_system(fsx, subnet, group, deployment="PERSISTENT_1", throughput=50, import_path="s3://datasets/in")
    assert refused(fsx.create_backup, FileSystemId=legacy)["Code"] == "BadRequest"
    plain = sf.file_system(fsx, subnet, group, deployment="PERSISTENT_2")
    assert fsx.create_backup(FileSystemId=plain)["Backup"]["Lifecycle"] == "CREATING"


@pytest.mark.parametrize("running", ["PENDING", "EXECUTING"])
def test_a_file_system_cannot_be_deleted_while_its_export_is_running(aws, running):
    fsx = aws.client("fsx")
    subnet, group = sf.network(aws.client("ec2"))
    fs_id = sf.file_system(fsx, subnet, group, deployment="SCRATCH_2", throughput=None)
    sf.link(fsx, fs_id, "s3://datasets/out")
    task = fsx.create_data_repository_task(Type="EXPORT_TO_REPOSITORY", FileSystemId=fs_id, Report={"Enabled": False})["DataRepositoryTask"]
    if running == "EXECUTING":
        fsx_ext.settle_tasks("EXECUTING")
    assert refused(fsx.delete_file_system, FileSystemId=fs_id)["Code"] == "BadRequest"
    assert fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]["Lifecycle"] == "AVAILABLE"
    fsx_ext.settle_tasks("SUCCEEDED", task_ids=[task["TaskId"]])
    assert fsx.delete_file_system(FileSystemId=fs_id)["FileSystemId"] == fs_id


# -- tags: the aws: prefix, and the Tag shapes' patterns ----------------------------------------


@pytest.mark.parametrize("key", ["aws:cloudformation:stack-name", "AWS:Owner", "Aws:x"])
def test_no_caller_may_set_an_aws_tag_on_sagemaker_or_fsx(aws, key):
    sm, fsx = aws.client("sagemaker"), aws.client("fsx")
    arn = se.classic(sm, "llm-dev")
    assert refused(sm.add_tags, ResourceArn=arn, Tags=[{"Key": key, "Value": "x"}])["Code"] == "ValidationException"
    se.model(sm, "m2")
    sm.create_endpoint_config(
        EndpointConfigName="c2",
        ProductionVariants=[{"VariantName": "AllTraffic", "ModelName": "m2", "InstanceType": "ml.m5.xlarge", "InitialInstanceCount": 1}],
    )
    error = refused(
        sm.create_endpoint,
        EndpointName="restored",
        EndpointConfigName="c2",
        Tags=[{"Key": "team", "Value": "a"}, {"Key": key, "Value": "x"}],
    )
    assert error["Code"] == "ValidationException" and "aws:" in error["Message"]
    assert "restored" not in [e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]]
    subnet, group = sf.network(aws.client("ec2"))
    fs_id = sf.file_system(fsx, subnet, group)
    fs_arn = fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]["ResourceARN"]
    assert refused(fsx.tag_resource, ResourceARN=fs_arn, Tags=[{"Key": key, "Value": "x"}])["Code"] == "ValidationException"
    assert refused(fsx.create_backup, FileSystemId=fs_id, Tags=[{"Key": key, "Value": "x"}])["Code"] == "ValidationException"


def test_an_fsx_tag_value_with_a_comma_is_refused_and_the_shape_check_names_it(aws):
    # FSx TagValue: ^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$ - no comma (API_Tag, botocore's fsx model)
    fsx = aws.client("fsx")
    subnet, group = sf.network(aws.client("ec2"))
    fs_id = sf.file_system(fsx, subnet, group)
    error = refused(fsx.create_backup, FileSystemId=fs_id, Tags=[{"Key": "reaper:source-security-groups", "Value": "sg-1,sg-2"}])
    assert error["Code"] == "ValidationException" and "regular expression pattern" in error["Message"]
    found = aws_shapes.take()  # the plugin saw the same request before it left: it would fail this test
    assert any(v.startswith("fsx.CreateBackup request: Tags[0].Value='sg-1,sg-2' does not match pattern") for v in found), found
    assert fsx.create_backup(FileSystemId=fs_id, Tags=[{"Key": "reaper:source-security-groups", "Value": "sg-1 sg-2"}])["Backup"][
        "BackupId"
    ]


# -- SageMaker: a missing training job ----------------------------------------------------------


def test_a_missing_training_job_is_a_validation_exception_as_on_aws_and_the_code_knows_it_is_gone(aws):
    sm = aws.client("sagemaker")
    st.training_job(sm, "present", datetime.now(UTC), hours_ago=1)
    with pytest.raises(ClientError) as err:
        sm.describe_training_job(TrainingJobName="gone-job")
    assert err.value.response["Error"] == {"Code": "ValidationException", "Message": "Requested resource not found."}
    assert job_gone(err.value)
    assert sm.describe_training_job(TrainingJobName="present")["TrainingJobStatus"] == "InProgress"
    throttled = ClientError({"Error": {"Code": "ValidationException", "Message": "1 validation error detected"}}, "DescribeTrainingJob")
    assert not job_gone(throttled)


@pytest.mark.slow
def test_the_rules_hold_against_a_moto_server_too():
    with local_account():
        s = session()
        sm, fsx = s.client("sagemaker"), s.client("fsx")
        arn = se.classic(sm, "srv")
        assert refused(sm.add_tags, ResourceArn=arn, Tags=[{"Key": "aws:x", "Value": "y"}])["Code"] == "ValidationException"
        subnet, group = sf.network(s.client("ec2"))
        linked = sf.file_system(fsx, subnet, group)
        sf.link(fsx, linked, "s3://datasets/run-2")
        assert refused(fsx.create_backup, FileSystemId=linked)["Code"] == "BadRequest"
        assert refused(sm.describe_training_job, TrainingJobName="nope")["Message"] == "Requested resource not found."


def _tagged_notebooks(sm: Any, n: int) -> None:
    for i in range(n):
        sm.create_notebook_instance(
            NotebookInstanceName=f"nb-{i:03d}",
            InstanceType="ml.t3.medium",
            RoleArn="arn:aws:iam::123456789012:role/r",
            Tags=[{"Key": "ml:owner", "Value": "a@x.io"}, {"Key": "ml:project", "Value": "p"}, {"Key": "stage", "Value": "dev"}],
        )


def test_get_resources_pages_by_resources_unless_tags_per_page_is_named(aws):
    """AWS: ResourcesPerPage bounds a page; TagsPerPage only when the request names it (moto_ext.tagging_pages)."""
    _tagged_notebooks(aws.client("sagemaker"), 150)
    tagging = aws.client("resourcegroupstaggingapi")
    by_resources = tagging.get_resources(ResourceTypeFilters=["sagemaker:notebook-instance"], ResourcesPerPage=100)
    assert len(by_resources["ResourceTagMappingList"]) == 100
    rest = tagging.get_resources(
        ResourceTypeFilters=["sagemaker:notebook-instance"], ResourcesPerPage=100, PaginationToken=by_resources["PaginationToken"]
    )
    assert len(rest["ResourceTagMappingList"]) == 50 and not rest.get("PaginationToken")
    by_tags = tagging.get_resources(ResourceTypeFilters=["sagemaker:notebook-instance"], ResourcesPerPage=100, TagsPerPage=100)
    assert 0 < len(by_tags["ResourceTagMappingList"]) <= 33  # three tags each: a page never splits a resource
    with pytest.raises(ClientError, match="TagsPerPage"):
        tagging.get_resources(TagsPerPage=50)  # AWS: 100 to 500
