"""SageMaker's answers that more than one part of the reaper reads, typed once (botocore gives plain dicts).

A kind's own shapes.py keeps what only that kind reads; what several read lives here: a training job (the
training-job kind, the FSx kind's inputs, the unit costs), an endpoint (the endpoint kind, the unit costs), a tag.
Each holds only the members some reader reads; every member AWS marks optional (``Required: No``) is optional here
(``total=False``), a member that is always there is ``Required``. Each is named after its page in the SageMaker API
reference (https://docs.aws.amazon.com/sagemaker/latest/APIReference/):

- Tag (API_Tag.html);
- DescribeTrainingJob (API_DescribeTrainingJob.html) and Search's TrainingJob (API_TrainingJob.html,
  API_SearchRecord.html), with ResourceConfig (API_ResourceConfig.html, API_InstanceGroup.html), StoppingCondition
  (API_StoppingCondition.html), CheckpointConfig (API_CheckpointConfig.html), WarmPoolStatus (API_WarmPoolStatus.html),
  AlgorithmSpecification (API_AlgorithmSpecification.html) and InputDataConfig's Channel (API_Channel.html,
  API_DataSource.html, API_FileSystemDataSource.html, API_S3DataSource.html);
- DescribeEndpoint (API_DescribeEndpoint.html) and Search's Endpoint (API_Endpoint.html), with ProductionVariantSummary
  (API_ProductionVariantSummary.html) and ProductionVariantManagedInstanceScaling
  (API_ProductionVariantManagedInstanceScaling.html).

They are typing_extensions' TypedDict: pydantic (Python 3.11) validates the training job state-change event's
InputDataConfig with Channel (reaper.kinds.fsx.events), and refuses typing's there; mypy reads both alike.
"""

from __future__ import annotations

from datetime import datetime
from typing import Required

from typing_extensions import TypedDict


class Tag(TypedDict):
    Key: str
    Value: str


# -- a training job ---------------------------------------------------------------------------------------


class InstanceGroup(TypedDict, total=False):
    InstanceType: str
    InstanceCount: int
    InstanceGroupName: str


class ResourceConfig(TypedDict, total=False):
    """A training job's cluster: one instance type and count, or heterogeneous InstanceGroups."""

    InstanceType: str
    InstanceCount: int
    InstanceGroups: list[InstanceGroup]
    KeepAlivePeriodInSeconds: int  # a managed warm pool's


class StoppingCondition(TypedDict, total=False):
    MaxRuntimeInSeconds: int
    MaxWaitTimeInSeconds: int


class CheckpointConfig(TypedDict, total=False):
    S3Uri: Required[str]
    LocalPath: str


class WarmPoolStatus(TypedDict, total=False):
    Status: Required[str]  # Available | Terminated | Reused | InUse
    ResourceRetainedBillableTimeInSeconds: int
    ReusedByJob: str


class AlgorithmSpecification(TypedDict, total=False):
    TrainingInputMode: str


class FileSystemDataSource(TypedDict, total=False):
    FileSystemId: str
    FileSystemType: str


class S3DataSource(TypedDict, total=False):
    S3Uri: str  # only whether the source is there is read


class DataSource(TypedDict, total=False):
    S3DataSource: S3DataSource
    FileSystemDataSource: FileSystemDataSource


class Channel(TypedDict, total=False):
    """An InputDataConfig entry. ChannelName is optional here though AWS requires it: the FSx kind validates an
    event's channels with this shape and reads only their DataSource, so a channel without one is still read."""

    ChannelName: str
    InputMode: str
    DataSource: DataSource


class TrainingJob(TypedDict, total=False):
    """DescribeTrainingJob's answer; Search's TrainingJob has the same members, and Tags."""

    TrainingJobName: Required[str]
    TrainingJobArn: Required[str]
    TrainingJobStatus: Required[str]
    SecondaryStatus: str
    TuningJobArn: str
    AutoMLJobArn: str
    ResourceConfig: ResourceConfig
    StoppingCondition: StoppingCondition
    CheckpointConfig: CheckpointConfig
    WarmPoolStatus: WarmPoolStatus
    AlgorithmSpecification: AlgorithmSpecification
    InputDataConfig: list[Channel]
    EnableManagedSpotTraining: bool
    BillableTimeInSeconds: int
    TrainingTimeInSeconds: int
    CreationTime: datetime
    TrainingStartTime: datetime
    TrainingEndTime: datetime
    LastModifiedTime: datetime
    Tags: list[Tag]  # Search only


# -- an endpoint ------------------------------------------------------------------------------------------


class ManagedInstanceScaling(TypedDict, total=False):
    Status: str  # ENABLED | DISABLED
    MinInstanceCount: int
    MaxInstanceCount: int


class ProductionVariantSummary(TypedDict, total=False):
    """A variant as the endpoint runs it (DescribeEndpoint, Search)."""

    VariantName: Required[str]
    CurrentInstanceCount: int
    DesiredInstanceCount: int
    CurrentServerlessConfig: dict[str, int]  # MemorySizeInMB, MaxConcurrency, ProvisionedConcurrency
    DesiredServerlessConfig: dict[str, int]
    ManagedInstanceScaling: ManagedInstanceScaling


class DescribeEndpointOutput(TypedDict, total=False):
    EndpointName: Required[str]
    EndpointArn: Required[str]
    EndpointConfigName: str  # optional on the page: an endpoint made of inference components may have none
    EndpointStatus: Required[str]
    FailureReason: str  # when EndpointStatus is Failed
    ProductionVariants: list[ProductionVariantSummary]


class Endpoint(DescribeEndpointOutput, total=False):
    """Search's Endpoint: DescribeEndpoint's members, with its tags and times."""

    Tags: list[Tag]
    CreationTime: datetime
    LastModifiedTime: datetime
