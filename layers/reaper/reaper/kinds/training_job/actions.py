"""What the training-job kind does (stop a training, processing or tuning job), its state check
just before, and what the owner can do afterwards.

Stopping a training job gives its script SIGTERM and two minutes to save a checkpoint; a stopped
job cannot be resumed, so the undo is a new job from the checkpoints it kept.
https://docs.aws.amazon.com/sagemaker/latest/dg/API_StopTrainingJob.html
"""

from __future__ import annotations

from typing import Any, assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import error_code, is_not_found
from reaper.core.errors import ActionRefused
from reaper.core.model import Decision, KindAction, Resource
from reaper.kinds.base import ActContext, Made, Unconfirmed, action_named
from reaper.kinds.training_job import ActionName
from reaper.kinds.training_job.checkpoints import newest
from reaper.kinds.training_job.model import RUNNING, JobFacts
from reaper.kinds.training_job.shapes import (
    describe_automl_job,
    describe_processing_job,
    describe_training_job,
    describe_transform_job,
    describe_tuning_job,
)

STATUS_FIELD = {
    "training": "TrainingJobStatus",
    "processing": "ProcessingJobStatus",
    "tuning": "HyperParameterTuningJobStatus",
    "transform": "TransformJobStatus",
    "automl": "AutoMLJobStatus",
}


def _status(sm: Any, job_type: str, name: str) -> str:
    """The job's status, from its own describe call (STATUS_FIELD names the member each answer has)."""
    if job_type == "processing":
        return describe_processing_job(sm, name).get("ProcessingJobStatus", "Unknown")
    if job_type == "tuning":
        return describe_tuning_job(sm, name).get("HyperParameterTuningJobStatus", "Unknown")
    if job_type == "transform":
        return describe_transform_job(sm, name).get("TransformJobStatus", "Unknown")
    if job_type == "automl":
        return describe_automl_job(sm, name).get("AutoMLJobStatus", "Unknown")
    return describe_training_job(sm, name).get("TrainingJobStatus", "Unknown")


def current_state(clients: Clients, resource: Resource) -> str | None:
    """The job's status now, read with its own describe call (None when it is gone)."""
    job_type = resource.facts_as(JobFacts).job_type
    try:
        return _status(clients("sagemaker"), job_type, resource.id)
    except ClientError as exc:
        if is_not_found(exc):
            return None
        raise


def confirm(clients: Clients, change: Unconfirmed) -> Made:
    """A stop is made once the job is Stopping or Stopped (its own describe call's status); a job still
    InProgress, or one that ended by itself (Completed, Failed), was not stopped."""
    if action_named(ActionName, change.action) is not ActionName.STOP:
        return Made(None, f"nothing reads whether {change.action} was made")
    job_type = str(change.evidence.get("job_type") or "training")
    if job_type not in STATUS_FIELD:
        return Made(None, f"a {job_type} job")
    try:
        state: str | None = _status(clients("sagemaker"), job_type, change.id)
    except ClientError as exc:
        if not is_not_found(exc):
            raise
        state = None
    return Made.by_state(STATUS_FIELD[job_type], state, {"Stopping", "Stopped"}, {"InProgress", "Completed", "Failed"})


def _stop_call(sm: Any, facts: JobFacts, name: str) -> str | None:
    """Stop the job with its own call; what is kept, for the kinds other than training."""
    if facts.job_type == "processing":
        sm.stop_processing_job(ProcessingJobName=name)
        return "stopping; processing outputs written so far stay in S3"
    if facts.job_type == "tuning":
        sm.stop_hyper_parameter_tuning_job(HyperParameterTuningJobName=name)
        return "stopping the tuning job and its running training jobs; finished training jobs and their models are kept"
    if facts.job_type == "transform":
        # https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_StopTransformJob.html: "When you stop a
        # batch transform job before it is completed, Amazon SageMaker doesn't store the job's output in Amazon S3."
        sm.stop_transform_job(TransformJobName=name)
        return "stopping; a transform job stopped before it completes stores no output in S3: a new job transforms the inputs again"
    if facts.job_type == "automl":
        # https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_StopAutoMLJob.html
        sm.stop_auto_ml_job(AutoMLJobName=name)
        return "stopping the AutoML job and the jobs it launched; candidates already trained are kept"
    sm.stop_training_job(TrainingJobName=name)
    return None


def stop(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    sm = ctx.clients("sagemaker")
    facts = resource.facts_as(JobFacts)
    try:
        detail = _stop_call(sm, facts, resource.id)
    except ClientError as exc:
        # The job may have ended between the state check and the stop: SageMaker then answers
        # ValidationException. Say so, rather than pass on its generic message.
        if error_code(exc) == "ValidationException":
            state = current_state(ctx.clients, resource)
            if state not in (None, RUNNING):
                raise ActionRefused("stop", f"the job ended on its own ({state}) just before the stop: nothing stopped") from exc
        raise
    if detail is not None:
        return detail
    kept = f"checkpoints in {facts.checkpoint_s3}" if facts.checkpoint_s3 else "the model artifacts it writes on SIGTERM"
    return f"stopping: the training script got SIGTERM and has 120 s to save; {kept} are kept; {checkpoint_said(ctx, facts, decision)}"


def checkpoint_said(ctx: ActContext, facts: JobFacts, decision: Decision) -> str:
    """What a stop loses, for the owner: how old the newest checkpoint is (the sweep's reading, else one listing now)."""
    read = decision.evidence.get("checkpoint")
    if isinstance(read, dict) and read.get("text"):
        return f"when read, {read['text']}"
    if facts.checkpoint_s3:
        return newest(ctx.clients, facts.checkpoint_s3).age_text(ctx.now)
    return "it has no checkpoint location (CheckpointConfig): a new job starts from scratch"


def end_warm_pool(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """UpdateTrainingJob with KeepAlivePeriodInSeconds 0, when the pool is still Available just before."""
    sm = ctx.clients("sagemaker")
    warm = describe_training_job(sm, resource.id).get("WarmPoolStatus")
    pool = warm.get("Status") if warm else None
    if pool != "Available":
        raise ActionRefused("end-warm-pool", f"the warm pool is {pool or 'gone'} now (reused or ended on its own): nothing ended")
    sm.update_training_job(TrainingJobName=resource.id, ResourceConfig={"KeepAlivePeriodInSeconds": 0})
    return "warm pool ended (KeepAlivePeriodInSeconds=0): its instances are released; the job and its model are unchanged"


def undo_hint(resource: Resource, action: KindAction | None) -> str | None:
    name = action_named(ActionName, action)
    if name is None:
        return None
    match name:
        case ActionName.END_WARM_POOL:
            return "nothing to undo: the next job with KeepAlivePeriodInSeconds set starts a new warm pool (a slower first start)"
        case ActionName.STOP:
            return _restart_hint(resource)
        case _:
            assert_never(name)


def _restart_hint(resource: Resource) -> str:
    """A stopped job is not resumed: how to start its like again, by job type."""
    facts = resource.facts_as(JobFacts)
    if facts.job_type == "tuning":
        return (
            "a stopped tuning job cannot be resumed: start a new one warm-started from it "
            f"(WarmStartConfig ParentHyperParameterTuningJobs=[{{HyperParameterTuningJobName: {resource.id}}}], "
            "WarmStartType IDENTICAL_DATA_AND_ALGORITHM)"
        )
    if facts.job_type == "processing":
        return "a stopped processing job cannot be resumed: run it again with the same inputs"
    if facts.job_type == "transform":
        return "a stopped transform job cannot be resumed and kept no output: run it again on the same inputs"
    if facts.job_type == "automl":
        return "a stopped AutoML job cannot be resumed: start a new one; the candidates it trained are listed by ListCandidatesForAutoMLJob"
    where = f" from the checkpoints in {facts.checkpoint_s3}" if facts.checkpoint_s3 else ""
    return (
        f"a stopped training job cannot be resumed: start a new job{where} "
        f"(`aws sagemaker describe-training-job --training-job-name {resource.id} --region {resource.region}` has its settings)"
    )
