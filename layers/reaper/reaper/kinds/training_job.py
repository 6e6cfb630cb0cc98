"""Training-job guard: running SageMaker jobs past their ceilings, or diverged, are stopped.

Covers training jobs (ceilings, divergence, GPU advice), processing jobs and hyperparameter
tuning jobs (ceilings: runtime, and cost from list prices; a tuning job's cost is the sum of
its training jobs). Stopping a training job gives its script SIGTERM and two minutes to save a
checkpoint. The rules are in training_rules (pure); discovery and evidence in their modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from reaper.clients import Clients
from reaper.kinds import training_discovery, training_rules, training_signals
from reaper.kinds.base import ActContext, Action, Kind
from reaper.model import Decision, Resource
from reaper.policy import TagView
from reaper.settings import Settings

NOT_FOUND = ("ResourceNotFound", "ResourceNotFoundException")
# DescribeTrainingJob answers ValidationException "Requested resource not found." for a missing job
# (https://github.com/aws/aws-sdk/issues/165); other describes say "Could not find ...".
GONE_MESSAGES = ("could not find", "requested resource not found")


def job_gone(exc: ClientError) -> bool:
    err = exc.response.get("Error", {})
    return err.get("Code") in NOT_FOUND or any(m in str(err.get("Message", "")).lower() for m in GONE_MESSAGES)
STATUS_FIELD = {"training": "TrainingJobStatus", "processing": "ProcessingJobStatus", "tuning": "HyperParameterTuningJobStatus"}


def job_state(clients: Clients, resource: Resource) -> str | None:
    """The job's status now, read with its own describe call (None when it is gone)."""
    sm = clients("sagemaker")
    job_type = resource.attrs.get("job_type", "training")
    try:
        if job_type == "processing":
            desc = sm.describe_processing_job(ProcessingJobName=resource.id)
        elif job_type == "tuning":
            desc = sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName=resource.id)
        else:
            desc = sm.describe_training_job(TrainingJobName=resource.id)
    except ClientError as exc:
        if job_gone(exc):
            return None
        raise
    state: str = desc.get(STATUS_FIELD.get(job_type, "TrainingJobStatus"), "Unknown")
    return state


def _stop(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    sm = ctx.clients("sagemaker")
    job_type = resource.attrs.get("job_type", "training")
    try:
        if job_type == "processing":
            sm.stop_processing_job(ProcessingJobName=resource.id)
            return "stopping; processing outputs written so far stay in S3"
        if job_type == "tuning":
            sm.stop_hyper_parameter_tuning_job(HyperParameterTuningJobName=resource.id)
            return "stopping the tuning job and its running training jobs; finished training jobs and their models are kept"
        sm.stop_training_job(TrainingJobName=resource.id)
    except ClientError as exc:
        # The job may have ended between the state check and the stop: say so in the error.
        code = exc.response.get("Error", {}).get("Code")
        if code == "ValidationException":
            state = job_state(ctx.clients, resource)
            if state not in (None, "InProgress"):
                raise ClientError(
                    {"Error": {"Code": "JobAlreadyEnded", "Message": f"the job ended on its own ({state}) just before the stop: nothing stopped"}},
                    exc.operation_name,
                ) from exc
        raise
    checkpoint = resource.attrs.get("checkpoint_s3")
    kept = f"checkpoints in {checkpoint}" if checkpoint else "the model artifacts it writes on SIGTERM"
    return f"stopping: the training script got SIGTERM and has 120 s to save; {kept} are kept"


class TrainingJobKind(Kind):
    name = "training-job"
    tag_resource_types = ("sagemaker:training-job", "sagemaker:processing-job", "sagemaker:hyper-parameter-tuning-job")
    tag_service = "sagemaker"
    read_permissions = (
        "sagemaker:Search",
        "sagemaker:DescribeTrainingJob",
        "sagemaker:ListTags",
        "sagemaker:ListProcessingJobs",
        "sagemaker:DescribeProcessingJob",
        "sagemaker:ListHyperParameterTuningJobs",
        "sagemaker:DescribeHyperParameterTuningJob",
        "sagemaker:ListTrainingJobsForHyperParameterTuningJob",
        "cloudwatch:ListMetrics",
        "cloudwatch:GetMetricData",
        "logs:FilterLogEvents",
    )
    actions: Mapping[str, Action] = {
        "stop": Action(
            "stop",
            "stopped",
            ("sagemaker:StopTrainingJob", "sagemaker:StopProcessingJob", "sagemaker:StopHyperParameterTuningJob"),
            frozenset({"InProgress"}),
            _stop,
        ),
    }

    @staticmethod
    def event_route(rt: Any, ev: Any, now: datetime) -> dict[str, Any] | None:
        from reaper.kinds.training_events import route

        return route(rt, ev, now)

    def discover(self, clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
        return training_discovery.training_jobs(clients, self.name) + training_discovery.other_jobs(clients, self.name)

    def signals(self, clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, Any]:
        return training_signals.read(clients, resources, settings, now)

    def decide(self, resource: Resource, signal: Any, view: TagView, settings: Settings, now: datetime) -> Decision:
        sig = signal if resource.attrs.get("job_type") == "training" else None
        return training_rules.decide(resource, sig, view, settings, now)

    def current_state(self, clients: Clients, resource: Resource) -> str | None:
        return job_state(clients, resource)

    def undo_hint(self, resource: Resource, action: str | None) -> str | None:
        if action != "stop":
            return None
        job_type = resource.attrs.get("job_type", "training")
        if job_type == "tuning":
            return (
                "a stopped tuning job cannot be resumed: start a new one warm-started from it "
                f"(WarmStartConfig ParentHyperParameterTuningJobs=[{{HyperParameterTuningJobName: {resource.id}}}], "
                "WarmStartType IDENTICAL_DATA_AND_ALGORITHM)"
            )
        if job_type == "processing":
            return "a stopped processing job cannot be resumed: run it again with the same inputs"
        checkpoint = resource.attrs.get("checkpoint_s3")
        where = f" from the checkpoints in {checkpoint}" if checkpoint else ""
        return (
            f"a stopped training job cannot be resumed: start a new job{where} "
            f"(`aws sagemaker describe-training-job --training-job-name {resource.id} --region {resource.region}` has its settings)"
        )
