"""The training-job stop and its state check against a fake SageMaker: the race where a job ends
on its own between the state check and the stop is a refusal that says so; every other failure
passes through as the AWS error it is, and a missing job reads as gone whichever way SageMaker says it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper.core.errors import ActionRefused
from reaper.core.model import Decision, Resource, Verdict
from reaper.core.settings import Settings
from reaper.kinds.base import ActContext
from reaper.kinds.training_job.actions import current_state, stop, undo_hint
from reaper.kinds.training_job.model import Cluster, JobFacts, JobType

NOW = datetime(2026, 12, 2, 14, 7, tzinfo=UTC)
DECISION = Decision(Verdict.ACT, "ran 25 h", action="stop")
NAME_FIELD = {"training": "TrainingJobName", "processing": "ProcessingJobName", "tuning": "HyperParameterTuningJobName"}
STATUS_FIELD = {"training": "TrainingJobStatus", "processing": "ProcessingJobStatus", "tuning": "HyperParameterTuningJobStatus"}
OPERATION = {"training": "training_job", "processing": "processing_job", "tuning": "hyper_parameter_tuning_job"}


def error(code: str, message: str = "", operation: str = "Op") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, operation)


class FakeSageMaker:
    """Answers describe_* with `status` (or raises `describe_error`); stop_* raises `stop_error`."""

    def __init__(self, status: str = "InProgress", stop_error: ClientError | None = None, describe_error: ClientError | None = None):
        self.status = status
        self.stop_error = stop_error
        self.describe_error = describe_error
        self.calls: list[str] = []

    def __getattr__(self, operation: str) -> Any:
        def call(**kwargs: Any) -> dict[str, Any]:
            self.calls.append(operation)
            if operation.startswith("stop_") and self.stop_error is not None:
                raise self.stop_error
            if operation.startswith("describe_"):
                if self.describe_error is not None:
                    raise self.describe_error
                job_type = next(t for t, op in OPERATION.items() if operation == f"describe_{op}")
                return {STATUS_FIELD[job_type]: self.status}
            return {}

        return call


class FakeClients:
    region = "us-east-1"

    def __init__(self, sm: FakeSageMaker) -> None:
        self.sm = sm

    def __call__(self, service: str) -> Any:
        assert service in ("sagemaker", "s3"), service
        return self.sm if service == "sagemaker" else EmptyBucket()


class EmptyBucket:
    """S3 with nothing under any prefix: the listing a stop makes when the sweep read no checkpoint age."""

    def list_objects_v2(self, **kwargs: Any) -> dict[str, Any]:
        return {"KeyCount": 0, "IsTruncated": False}


def job(job_type: JobType = "training", checkpoint: str | None = None) -> Resource:
    return Resource(
        kind="training-job", id="j", arn=f"arn:aws:sagemaker:us-east-1:123456789012:{job_type}-job/j", region="us-east-1",
        state="InProgress",
        facts=JobFacts(job_type=job_type, started_at=NOW, spans=(), cluster=Cluster("ml.p3.2xlarge", 1, 3.825), checkpoint_s3=checkpoint),
    )  # fmt: skip


def ctx(sm: FakeSageMaker) -> ActContext:
    return ActContext(clients=FakeClients(sm), settings=Settings(), now=NOW, log=None, event_id="ev-1")  # type: ignore[arg-type]


@pytest.mark.parametrize("job_type", ["training", "processing", "tuning"])
@pytest.mark.parametrize("ended", ["Completed", "Failed", "Stopped", "Stopping"])
def test_a_job_that_ended_just_before_the_stop_is_refused_with_its_state(job_type: JobType, ended: str):
    # Given a job that ended on its own after the state check: SageMaker refuses the stop
    sm = FakeSageMaker(status=ended, stop_error=error("ValidationException", "The job is not in progress"))
    # When it is stopped
    with pytest.raises(ActionRefused) as refused:
        stop(ctx(sm), job(job_type), DECISION)
    # Then the refusal names the state it ended in, and says nothing was stopped
    assert refused.value.operation == "stop"
    assert refused.value.reason == f"the job ended on its own ({ended}) just before the stop: nothing stopped"
    assert sm.calls == [f"stop_{OPERATION[job_type]}", f"describe_{OPERATION[job_type]}"]


def test_a_validation_error_on_a_job_still_running_is_the_aws_error_not_a_refusal():
    # Given SageMaker rejects the stop, yet the job is still running: something else is wrong
    sm = FakeSageMaker(status="InProgress", stop_error=error("ValidationException", "Role is not authorized"))
    with pytest.raises(ClientError) as raised:
        stop(ctx(sm), job(), DECISION)
    # Then the original error goes up (the pipeline reports it as a failed stop), not a made-up one
    assert not isinstance(raised.value, ActionRefused)
    assert raised.value.response["Error"]["Message"] == "Role is not authorized"


def test_a_validation_error_on_a_job_that_is_gone_is_the_aws_error():
    sm = FakeSageMaker(
        stop_error=error("ValidationException", "Could not find job"),
        describe_error=error("ValidationException", "Could not find training job 'j'"),
    )
    with pytest.raises(ClientError) as raised:
        stop(ctx(sm), job(), DECISION)
    assert raised.value.response["Error"]["Message"] == "Could not find job"


@pytest.mark.parametrize("code", ["ThrottlingException", "AccessDeniedException", "InternalFailure"])
def test_other_stop_errors_pass_through_without_a_second_read(code: str):
    sm = FakeSageMaker(stop_error=error(code))
    with pytest.raises(ClientError) as raised:
        stop(ctx(sm), job(), DECISION)
    assert raised.value.response["Error"]["Code"] == code
    assert sm.calls == ["stop_training_job"]


def test_a_stopped_training_job_says_where_its_checkpoints_are():
    detail = stop(ctx(FakeSageMaker()), job(checkpoint="s3://ckpt/j"), DECISION)
    assert detail == (
        "stopping: the training script got SIGTERM and has 120 s to save; checkpoints in s3://ckpt/j are kept; "
        "it has saved no checkpoint yet under s3://ckpt/j"
    )
    bare = stop(ctx(FakeSageMaker()), job(), DECISION) or ""
    assert "the model artifacts it writes on SIGTERM" in bare and "no checkpoint location (CheckpointConfig)" in bare
    # the stop message says how old the newest checkpoint was when the sweep read it
    read = DECISION.with_(evidence={"checkpoint": {"text": "its newest checkpoint is 2 h 00 m old (3 object(s) under s3://ckpt/j)"}})
    aged = stop(ctx(FakeSageMaker()), job(checkpoint="s3://ckpt/j"), read) or ""
    assert aged.endswith("when read, its newest checkpoint is 2 h 00 m old (3 object(s) under s3://ckpt/j)")


@pytest.mark.parametrize("job_type", ["training", "processing", "tuning"])
@pytest.mark.parametrize(
    "missing",
    [
        error("ResourceNotFound", "gone"),
        error("ValidationException", "Could not find training job 'j'"),
        error("ResourceNotFoundException"),
    ],
)
def test_a_missing_job_reads_as_gone(job_type: JobType, missing: ClientError):
    assert current_state(FakeClients(FakeSageMaker(describe_error=missing)), job(job_type)) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("job_type", ["training", "processing", "tuning"])
def test_the_state_is_read_with_the_job_types_own_call(job_type: JobType):
    sm = FakeSageMaker(status="Stopping")
    assert current_state(FakeClients(sm), job(job_type)) == "Stopping"  # type: ignore[arg-type]
    assert sm.calls == [f"describe_{OPERATION[job_type]}"]


@pytest.mark.parametrize("code", ["ThrottlingException", "AccessDeniedException", "ValidationException"])
def test_a_failed_state_read_is_not_taken_for_gone(code: str):
    # A ValidationException that does not say "not found" is an error, not a missing job
    with pytest.raises(ClientError):
        current_state(FakeClients(FakeSageMaker(describe_error=error(code, "Request is invalid"))), job())  # type: ignore[arg-type]


def test_undo_hints_per_job_type():
    assert "warm-started from it" in (undo_hint(job("tuning"), "stop") or "")
    assert "run it again with the same inputs" in (undo_hint(job("processing"), "stop") or "")
    hint = undo_hint(job("training", checkpoint="s3://ckpt/j"), "stop") or ""
    assert "from the checkpoints in s3://ckpt/j" in hint and "--training-job-name j --region us-east-1" in hint
    assert undo_hint(job(), None) is None


def test_a_resource_without_job_facts_is_a_type_error_not_a_guess():
    bare = Resource(kind="training-job", id="j", arn="arn", region="us-east-1", state="InProgress")
    with pytest.raises(TypeError, match="facts are NoneType, not JobFacts"):
        stop(ctx(FakeSageMaker()), bare, DECISION)
