"""Seeding helpers for FSx for Lustre: a network, file systems, their S3 links, their I/O, and the
training jobs that read them. Shared by the FSx tests, the demo scene and the benchmark.

File systems are made through the API; what only time sets (creation time, lifecycle) goes
through reaper_devkit.moto_ext.fsx.set_file_system.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from reaper_devkit.moto_ext import fsx as fsx_ext
from reaper_devkit.moto_ext import sagemaker_jobs
from reaper_devkit.seed import ROLE, aligned

METRICS = ("DataReadBytes", "DataWriteBytes", "MetadataOperations")
DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "llm"}


def network(ec2: Any) -> tuple[str, str]:
    """A VPC with one subnet and one security group; returns (subnet id, security group id)."""
    vpc = ec2.create_vpc(CidrBlock="10.40.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.40.1.0/24", AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName="lustre-clients", Description="Lustre 988, 1018-1023", VpcId=vpc)["GroupId"]
    return subnet, group


def file_system(
    fsx: Any,
    subnet: str,
    group: str,
    *,
    deployment: str = "PERSISTENT_2",
    capacity: int = 1200,
    throughput: int | None = 125,
    tags: dict[str, str] | None = None,
    import_path: str | None = None,
    created_at: datetime | None = None,
    more_groups: Sequence[str] = (),
    metadata_mode: str | None = None,
) -> str:
    """An FSx for Lustre file system; returns its id."""
    lustre: dict[str, Any] = {"DeploymentType": deployment}
    if deployment.startswith("PERSISTENT") and throughput:
        lustre["PerUnitStorageThroughput"] = throughput
    if import_path:
        lustre["ImportPath"] = import_path
    if metadata_mode:
        lustre["MetadataConfiguration"] = {"Mode": metadata_mode}
    kwargs: dict[str, Any] = {
        "FileSystemType": "LUSTRE",
        "StorageCapacity": capacity,
        "StorageType": "SSD",
        "SubnetIds": [subnet],
        "SecurityGroupIds": [group, *more_groups],
        "LustreConfiguration": lustre,
    }
    if tags:
        kwargs["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
    fs_id: str = fsx.create_file_system(**kwargs)["FileSystem"]["FileSystemId"]
    if created_at is not None:
        fsx_ext.set_file_system(fs_id, created_at=created_at)
    return fs_id


def link(fsx: Any, fs_id: str, s3_path: str, fs_path: str = "/", auto_export: Sequence[str] = (), auto_import: Sequence[str] = ()) -> str:
    """A data repository association (with automatic export/import events if given); returns its id."""
    kwargs: dict[str, Any] = {}
    if auto_export or auto_import:
        kwargs["S3"] = {k: {"Events": list(v)} for k, v in (("AutoExportPolicy", auto_export), ("AutoImportPolicy", auto_import)) if v}
    dra: str = fsx.create_data_repository_association(
        FileSystemId=fs_id, FileSystemPath=fs_path, DataRepositoryPath=s3_path, BatchImportMetaDataOnCreate=False, **kwargs
    )["Association"]["AssociationId"]
    return dra


def io(
    cloudwatch: Any,
    fs_id: str,
    now: datetime,
    minutes: int = 780,
    busy_minutes_ago: Iterable[int] = (),
    gaps_minutes_ago: Iterable[int] = (),
    write: bool = False,
) -> None:
    """AWS/FSx I/O, one datapoint per metric per 5 minutes over the last `minutes`: zero, except
    the periods that hold a `busy_minutes_ago` (reads, metadata, and writes if `write`); none at all
    for the periods that hold a `gaps_minutes_ago`."""
    end = aligned(now)
    busy = {m // 5 for m in busy_minutes_ago}
    gaps = {m // 5 for m in gaps_minutes_ago}
    data: list[dict[str, Any]] = []
    for k in range(minutes // 5):
        if k in gaps:
            continue
        ts = end - timedelta(minutes=5 * (k + 1)) + timedelta(seconds=7)
        values = {"DataReadBytes": 0.0, "DataWriteBytes": 0.0, "MetadataOperations": 0.0}
        if k in busy:
            values.update(DataReadBytes=4.2e9, MetadataOperations=1800.0, DataWriteBytes=1.1e9 if write else 0.0)
        for metric, value in values.items():
            data.append({"MetricName": metric, "Dimensions": [{"Name": "FileSystemId", "Value": fs_id}], "Timestamp": ts, "Value": value})
    for i in range(0, len(data), 1000):
        cloudwatch.put_metric_data(Namespace="AWS/FSx", MetricData=data[i : i + 1000])


def training_job(
    sagemaker: Any,
    name: str,
    fs_ids: list[str],
    now: datetime,
    *,
    started_hours_ago: float = 4,
    ended_hours_ago: float | None = None,
    status: str = "Completed",
    tags: dict[str, str] | None = None,
) -> str:
    """A training job reading the file systems through FileSystemDataSource (S3 only when none):
    running (`ended_hours_ago` None) or ended `ended_hours_ago` before `now`. Returns its ARN."""
    channels = [
        {
            "ChannelName": f"fsx{i}",
            "DataSource": {
                "FileSystemDataSource": {
                    "FileSystemId": fs_id,
                    "FileSystemAccessMode": "ro",
                    "FileSystemType": "FSxLustre",
                    "DirectoryPath": "/fsx/datasets",
                }
            },
        }
        for i, fs_id in enumerate(fs_ids)
    ] or [{"ChannelName": "train", "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": f"s3://ml-datasets/{name}/"}}}]
    kwargs: dict[str, Any] = {
        "TrainingJobName": name,
        "AlgorithmSpecification": {
            "TrainingImage": "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:latest",
            "TrainingInputMode": "File",
        },
        "RoleArn": ROLE,
        "InputDataConfig": channels,
        "OutputDataConfig": {"S3OutputPath": f"s3://ml-artifacts/{name}"},
        "ResourceConfig": {"InstanceType": "ml.p3.2xlarge", "InstanceCount": 1, "VolumeSizeInGB": 50},
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        "VpcConfig": {"SecurityGroupIds": ["sg-0123456789abcdef0"], "Subnets": ["subnet-0123456789abcdef0"]},
    }
    if tags:
        kwargs["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
    arn: str = sagemaker.create_training_job(**kwargs)["TrainingJobArn"]
    sagemaker_jobs.backdate(arn, now - timedelta(hours=started_hours_ago))
    if ended_hours_ago is not None:
        sagemaker_jobs.finish(arn, status, now - timedelta(hours=ended_hours_ago))
    return arn


def job_ended_event(
    template: dict[str, Any], job_name: str, fs_ids: list[str], ended_at: datetime, status: str = "Completed"
) -> dict[str, Any]:
    """The `SageMaker Training Job State Change` event for this job, from the fixture in events/."""
    detail = dict(template["detail"])
    channel = dict(detail["InputDataConfig"][0])
    channels = []
    for fs_id in fs_ids:
        source = {**channel["DataSource"]["FileSystemDataSource"], "FileSystemId": fs_id}
        channels.append({**channel, "DataSource": {"FileSystemDataSource": source}})
    detail.update(
        TrainingJobName=job_name,
        TrainingJobArn=f"arn:aws:sagemaker:us-east-1:123456789012:training-job/{job_name}",
        TrainingJobStatus=status,
        InputDataConfig=channels + detail["InputDataConfig"][1:],
        TrainingEndTime=int(ended_at.timestamp() * 1000),
        LastModifiedTime=int(ended_at.timestamp() * 1000),
    )
    return {**template, "detail": detail}


def system_tags(fs_arn: str, tags: dict[str, str], region: str = "us-east-1") -> None:
    """Tags AWS writes itself (`aws:cloudformation:*` on a stack's file system): no caller may set an
    `aws:` key (the kit refuses it, as AWS does), so they go straight into moto's backend."""
    from moto.fsx.models import fsx_backends

    backend = fsx_backends[fs_arn.split(":")[4]][region]
    backend.tagger.tag_resource(fs_arn, [{"Key": k, "Value": v} for k, v in tags.items()])
