"""The AWS answers the training-job kind reads, typed (botocore gives plain dicts): only the members the code reads.

Every member AWS marks optional (``Required: No``) is optional here (``total=False``); a member that is
always there is ``Required``. Each shape is named after its page in the SageMaker API reference
(https://docs.aws.amazon.com/sagemaker/latest/APIReference/):

- DescribeTrainingJob and Search's TrainingJob, with its ResourceConfig, StoppingCondition and Channel: other parts
  read them too (the FSx kind, the unit costs), so they live in reaper.aws.sagemaker_shapes, typed once;
- DescribeProcessingJob (API_DescribeProcessingJob.html), ProcessingResources and ProcessingClusterConfig
  (API_ProcessingResources.html, API_ProcessingClusterConfig.html);
- DescribeHyperParameterTuningJob (API_DescribeHyperParameterTuningJob.html), HyperParameterTrainingJobDefinition
  (API_HyperParameterTrainingJobDefinition.html), HyperParameterTuningResourceConfig
  (API_HyperParameterTuningResourceConfig.html, API_HyperParameterTuningInstanceConfig.html),
  HyperParameterTuningJobConfig (API_HyperParameterTuningJobConfig.html, API_HyperParameterTuningJobObjective.html),
  HyperParameterTrainingJobSummary (API_HyperParameterTrainingJobSummary.html);
- DescribeTransformJob (API_DescribeTransformJob.html, API_TransformResources.html);
- DescribeAutoMLJobV2 (API_DescribeAutoMLJobV2.html).

A response enters typed once, where it is read (the `describe_*` helpers below): the clients are untyped
(`Any`), so these annotated helpers are the only boundary; nothing else casts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Required, TypedDict

from reaper.aws.sagemaker_shapes import ResourceConfig, StoppingCondition, TrainingJob


class ProcessingClusterConfig(TypedDict, total=False):
    InstanceType: str
    InstanceCount: int


class ProcessingResources(TypedDict):
    ClusterConfig: ProcessingClusterConfig


class ProcessingJob(TypedDict, total=False):
    """DescribeProcessingJob's answer."""

    ProcessingJobName: Required[str]
    ProcessingJobArn: Required[str]
    ProcessingJobStatus: Required[str]
    ProcessingResources: ProcessingResources
    StoppingCondition: StoppingCondition
    AutoMLJobArn: str
    CreationTime: datetime
    ProcessingStartTime: datetime
    LastModifiedTime: datetime


class HyperParameterTuningInstanceConfig(TypedDict, total=False):
    InstanceType: str
    InstanceCount: int


class HyperParameterTuningResourceConfig(TypedDict, total=False):
    InstanceType: str
    InstanceCount: int
    InstanceConfigs: list[HyperParameterTuningInstanceConfig]


class HyperParameterTrainingJobDefinition(TypedDict, total=False):
    DefinitionName: str
    ResourceConfig: ResourceConfig
    HyperParameterTuningResourceConfig: HyperParameterTuningResourceConfig
    EnableManagedSpotTraining: bool


class HyperParameterTuningJobObjective(TypedDict, total=False):
    Type: str  # Maximize | Minimize
    MetricName: str


class HyperParameterTuningJobConfig(TypedDict, total=False):
    TrainingJobEarlyStoppingType: str  # Off | Auto
    HyperParameterTuningJobObjective: HyperParameterTuningJobObjective


class BestTrainingJob(TypedDict, total=False):
    TrainingJobName: str


class HyperParameterTuningJob(TypedDict, total=False):
    """DescribeHyperParameterTuningJob's answer."""

    HyperParameterTuningJobName: Required[str]
    HyperParameterTuningJobArn: Required[str]
    HyperParameterTuningJobStatus: Required[str]
    HyperParameterTuningJobConfig: HyperParameterTuningJobConfig
    TrainingJobDefinition: HyperParameterTrainingJobDefinition
    TrainingJobDefinitions: list[HyperParameterTrainingJobDefinition]
    BestTrainingJob: BestTrainingJob
    CreationTime: datetime
    LastModifiedTime: datetime


class TransformResources(TypedDict, total=False):
    InstanceType: str
    InstanceCount: int


class TransformJob(TypedDict, total=False):
    """DescribeTransformJob's answer."""

    TransformJobName: Required[str]
    TransformJobArn: Required[str]
    TransformJobStatus: Required[str]
    TransformResources: TransformResources
    AutoMLJobArn: str
    CreationTime: datetime
    TransformStartTime: datetime


class AutoMLJob(TypedDict, total=False):
    """DescribeAutoMLJobV2's answer."""

    AutoMLJobName: Required[str]
    AutoMLJobArn: Required[str]
    AutoMLJobStatus: Required[str]
    CreationTime: datetime
    LastModifiedTime: datetime


# -- the one boundary per shape: a botocore answer (Any) enters typed here -------------------------------


def describe_training_job(sm: Any, name: str) -> TrainingJob:
    out: TrainingJob = sm.describe_training_job(TrainingJobName=name)
    return out


def describe_processing_job(sm: Any, name: str) -> ProcessingJob:
    out: ProcessingJob = sm.describe_processing_job(ProcessingJobName=name)
    return out


def describe_tuning_job(sm: Any, name: str) -> HyperParameterTuningJob:
    out: HyperParameterTuningJob = sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName=name)
    return out


def describe_transform_job(sm: Any, name: str) -> TransformJob:
    out: TransformJob = sm.describe_transform_job(TransformJobName=name)
    return out


def describe_automl_job(sm: Any, name: str) -> AutoMLJob:
    out: AutoMLJob = sm.describe_auto_ml_job_v2(AutoMLJobName=name)
    return out


def checkpoint_uri(job: TrainingJob) -> str | None:
    """Where the job saves its checkpoints: CheckpointConfig.S3Uri, None without a CheckpointConfig."""
    config = job.get("CheckpointConfig")
    return config.get("S3Uri") if config else None


def searched_training_jobs(page: Any) -> list[TrainingJob]:
    """A Search page's training jobs (SearchRecord.TrainingJob, API_SearchRecord.html)."""
    return [item["TrainingJob"] for item in page.get("Results", []) if item.get("TrainingJob")]
