"""The FSx and SageMaker response shapes the FSx kind reads, typed (botocore gives plain dicts).

Each is named after its shape in the API reference and holds only the members this kind reads; AWS
marks them optional unless said otherwise, so each is total=False:
- FileSystem, LustreFileSystemConfiguration, DataRepositoryConfiguration, Tag:
  https://docs.aws.amazon.com/fsx/latest/APIReference/API_FileSystem.html,
  API_LustreFileSystemConfiguration.html, API_DataRepositoryConfiguration.html, API_Tag.html
- DataRepositoryAssociation, S3DataRepositoryConfiguration, AutoExportPolicy / AutoImportPolicy:
  https://docs.aws.amazon.com/fsx/latest/APIReference/API_DataRepositoryAssociation.html
- Backup, DataRepositoryTask (Status, Report, FailureDetails):
  https://docs.aws.amazon.com/fsx/latest/APIReference/API_Backup.html, API_DataRepositoryTask.html
A training job's InputDataConfig (Channel, DataSource, FileSystemDataSource) is read by the training-job kind
too: it lives in reaper.aws.sagemaker_shapes, typed once.
"""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict


class Tag(TypedDict, total=False):
    Key: str
    Value: str


class DataRepositoryConfiguration(TypedDict, total=False):
    Lifecycle: str
    ImportPath: str
    ExportPath: str


class LustreFileSystemConfiguration(TypedDict, total=False):
    DeploymentType: str
    PerUnitStorageThroughput: int
    DataRepositoryConfiguration: DataRepositoryConfiguration


class FileSystem(TypedDict, total=False):
    FileSystemId: str
    FileSystemType: str
    ResourceARN: str
    Lifecycle: str
    StorageCapacity: int
    StorageType: str
    CreationTime: datetime
    Tags: list[Tag]
    SubnetIds: list[str]
    VpcId: str
    NetworkInterfaceIds: list[str]
    KmsKeyId: str
    FileSystemTypeVersion: str
    LustreConfiguration: LustreFileSystemConfiguration


class EventsPolicy(TypedDict, total=False):
    """AutoExportPolicy and AutoImportPolicy: the events (NEW, CHANGED, DELETED) they follow."""

    Events: list[str]


class S3DataRepositoryConfiguration(TypedDict, total=False):
    AutoExportPolicy: EventsPolicy
    AutoImportPolicy: EventsPolicy


class DataRepositoryAssociation(TypedDict, total=False):
    AssociationId: str
    FileSystemId: str
    Lifecycle: str
    FileSystemPath: str
    DataRepositoryPath: str
    S3: S3DataRepositoryConfiguration


class DescribeDataRepositoryAssociationsResponse(TypedDict, total=False):
    Associations: list[DataRepositoryAssociation]
    NextToken: str


class FailureDetails(TypedDict, total=False):
    Message: str


class Backup(TypedDict, total=False):
    BackupId: str
    Lifecycle: str
    CreationTime: datetime
    ProgressPercent: int
    FailureDetails: FailureDetails
    Tags: list[Tag]


class TaskStatus(TypedDict, total=False):
    """DataRepositoryTaskStatus."""

    TotalCount: int
    SucceededCount: int
    FailedCount: int


class CompletionReport(TypedDict, total=False):
    Enabled: bool
    Path: str


class DataRepositoryTask(TypedDict, total=False):
    TaskId: str
    Lifecycle: str
    CreationTime: datetime
    StartTime: datetime
    EndTime: datetime
    FailureDetails: FailureDetails
    Status: TaskStatus
    Report: CompletionReport
