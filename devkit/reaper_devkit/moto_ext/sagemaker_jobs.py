"""SageMaker jobs as the training-job guard meets them on AWS, which moto 5.2.5 does not model.

What changes (all in moto's backend and response classes, so in-process and server mode alike):
- Training, processing and tuning jobs start `InProgress` (moto makes them `Completed` at once),
  with their start time set and no end time. `backdate()` moves a job's start into the past.
- StopTrainingJob and StopHyperParameterTuningJob exist; stopping (these and StopProcessingJob)
  moves an `InProgress` job to `Stopping`; the first read after the stop still says `Stopping`,
  the next says `Stopped` (AWS takes up to two minutes). Stopping a job that is not `InProgress`
  fails with ValidationException, as on AWS. Stopping a tuning job stops its running training jobs.
- ListTrainingJobsForHyperParameterTuningJob exists; `add_tuning_training_job()` seeds the
  training jobs a tuning job "launched" (moto cannot launch them).
- Processing jobs keep their ProcessingResources and report ProcessingStartTime.
- DescribeHyperParameterTuningJob: `BestTrainingJob` (and `OverallBestTrainingJob`) only once a
  child has completed with the best objective ("A TrainingJobSummary object that describes the
  training job that completed with the best current HyperParameterTuningJobObjective."
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeHyperParameterTuningJob.html);
  moto answers a placeholder job `FakeTrainingJobName` always. `set_best_training_job()` names it.
- DescribeTrainingJob of a job that does not exist answers `ValidationException: Requested resource
  not found.` as AWS does (moto says "Could not find training job ..."), although the API reference
  lists ResourceNotFound: https://github.com/aws/aws-sdk/issues/165, https://github.com/boto/boto3/issues/2808
  (API: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeTrainingJob.html).
- Transform jobs and AutoML jobs start `InProgress` too (moto: transform `Completed` at once; AutoML
  with an EndTime while running). StopTransformJob exists and StopAutoMLJob no longer ends the job at
  once: both move it to `Stopping`, then `Stopped`, and refuse a job that is not `InProgress` with
  ValidationException like the other stop calls
  (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_StopTransformJob.html, "When Amazon
  SageMaker receives a StopTransformJob request, the status of the job changes to Stopping. After
  Amazon SageMaker stops the job, the status is set to Stopped";
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_StopAutoMLJob.html). `link_automl()`
  marks a training job as launched by an AutoML job: Search and DescribeTrainingJob then carry its
  `AutoMLJobArn`, as AWS's do (moto cannot launch candidates).
- Managed warm pools: a job's `WarmPoolStatus` (seeded with `retain_warm_pool()`: moto keeps no
  instances) is in DescribeTrainingJob, and ListTrainingJobs filters on `WarmPoolStatusEquals` and
  reports it in each summary. UpdateTrainingJob exists for `ResourceConfig.KeepAlivePeriodInSeconds`:
  0 terminates the warm pool ("To manually terminate a warm pool, set the KeepAlivePeriodInSeconds
  value to 0", https://docs.aws.amazon.com/sagemaker/latest/dg/train-warm-pools-how-to-use.html), and
  a job whose warm pool is not `Available` is refused with ValidationException ("When the training
  job is complete and the warm pool status is Available, then you can update the
  KeepAlivePeriodInSeconds value", same page; valid range 0-3600,
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ResourceConfigForUpdate.html).
- Search over TrainingJob returns the real shape (`TrainingJobArn`, no nulls, InputDataConfig as
  created) and pages with MaxResults (default 10, at most 100) and NextToken, sorted by SortBy
  (default LastModifiedTime) in SortOrder (default Descending), as AWS does; moto ignores both
  (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_Search.html).
- Search filters on TrainingEndTime / CreationTime / LastModifiedTime take the range operators
  (GreaterThan, GreaterThanOrEqualTo, LessThan, LessThanOrEqualTo) as AWS's Filter does
  (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_Filter.html); moto compares for
  equality only. `bill()` gives an ended job its TrainingTimeInSeconds and BillableTimeInSeconds
  ("You can calculate the savings from using managed spot training using the formula
  (1 - BillableTimeInSeconds / TrainingTimeInSeconds) * 100",
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeTrainingJob.html), carried
  by Search and DescribeTrainingJob.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from moto.core.responses import ActionResult, EmptyResult
from moto.core.utils import utcnow
from moto.sagemaker import models, responses
from moto.sagemaker.exceptions import ResourceNotFound, ValidationError

RUNNING = "InProgress"
_seen_stopping: set[str] = set()  # ARNs whose `Stopping` state has been read once


def _utc_naive(value: datetime) -> datetime:
    """moto keeps naive UTC datetimes."""
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


# -- state transitions ------------------------------------------------------------------------
_STATUS_ATTR = {
    models.FakeTrainingJob: "training_job_status",
    models.FakeProcessingJob: "processing_job_status",
    models.HyperParameterTuningJob: "hyper_parameter_tuning_job_status",
    models.FakeTransformJob: "transform_job_status",
    models.AutoMLJob: "auto_ml_job_status",
}
_ENDED = ("Stopped", "Completed", "Failed")


def _status(job: Any) -> str:
    return str(getattr(job, _STATUS_ATTR[type(job)]))


def _set_status(job: Any, status: str) -> None:
    setattr(job, _STATUS_ATTR[type(job)], status)
    now = utcnow()
    job.last_modified_time = now
    if isinstance(job, models.FakeTrainingJob):
        job.secondary_status = status if status != RUNNING else "Training"
        if status in ("Stopped", "Completed", "Failed"):
            job.training_end_time = now
    elif isinstance(job, models.FakeProcessingJob):
        if status in _ENDED:
            job.processing_end_time = now
    elif isinstance(job, models.FakeTransformJob):
        job.transform_end_time = now if status in _ENDED else None
    elif isinstance(job, models.AutoMLJob):
        job.end_time = now if status in _ENDED else None
        job.auto_ml_job_secondary_status = status if status != RUNNING else "Training"
    elif status in _ENDED:
        job.hyper_parameter_tuning_end_time = now


def _read(job: Any) -> Any:
    """A read of a stopping job: `Stopping` the first time, `Stopped` after."""
    if _status(job) == "Stopping":
        if job.arn in _seen_stopping:
            _seen_stopping.discard(job.arn)
            _set_status(job, "Stopped")
        else:
            _seen_stopping.add(job.arn)
    return job


def _stop(job: Any, what: str) -> None:
    status = _status(job)
    if status != RUNNING:
        raise ValidationError(message=f"The request was rejected because the {what} is in status {status}.")
    _seen_stopping.discard(job.arn)
    _set_status(job, "Stopping")


# -- job creation: InProgress ---------------------------------------------------------------
def _patch_creation() -> None:
    training_init = models.FakeTrainingJob.__init__

    def training(self: Any, *args: Any, **kwargs: Any) -> None:
        training_init(self, *args, **kwargs)
        self.training_job_status = RUNNING
        self.secondary_status = "Training"
        self.training_end_time = None
        self.final_metric_data_list = None
        self.tuning_job_arn = None

    processing_init = models.FakeProcessingJob.__init__

    def processing(self: Any, *args: Any, **kwargs: Any) -> None:
        processing_init(self, *args, **kwargs)
        self.processing_job_status = RUNNING
        self.processing_start_time = self.creation_time
        self.processing_end_time = None
        self.processing_resources = None

    tuning_init = models.HyperParameterTuningJob.__init__

    def tuning(self: Any, *args: Any, **kwargs: Any) -> None:
        tuning_init(self, *args, **kwargs)
        self.hyper_parameter_tuning_job_status = RUNNING
        self.hyper_parameter_tuning_end_time = None
        self.tags = self.tags or []
        self.training_job_status_counters = {"Completed": 0, "InProgress": 0, "RetryableError": 0, "NonRetryableError": 0, "Stopped": 0}
        self.objective_status_counters = {"Succeeded": 0, "Pending": 0, "Failed": 0}

    transform_init = models.FakeTransformJob.__init__

    def transform(self: Any, *args: Any, **kwargs: Any) -> None:
        transform_init(self, *args, **kwargs)
        _set_status(self, RUNNING)
        self.tags = self.tags or []

    automl_init = models.AutoMLJob.__init__

    def automl(self: Any, *args: Any, **kwargs: Any) -> None:
        automl_init(self, *args, **kwargs)
        _set_status(self, RUNNING)

    models.FakeTransformJob.__init__ = transform  # type: ignore[method-assign]
    models.AutoMLJob.__init__ = automl  # type: ignore[method-assign]
    models.FakeTrainingJob.__init__ = training  # type: ignore[method-assign]
    models.FakeProcessingJob.__init__ = processing  # type: ignore[method-assign]
    models.HyperParameterTuningJob.__init__ = tuning  # type: ignore[method-assign]

    create_processing = responses.SageMakerResponse.create_processing_job

    def create_processing_job(self: Any) -> ActionResult:
        result = create_processing(self)
        job = self.sagemaker_backend.processing_jobs[self._get_param("ProcessingJobName")]
        job.processing_resources = self._get_param("ProcessingResources")
        return result

    responses.SageMakerResponse.create_processing_job = create_processing_job  # type: ignore[method-assign]


# -- reads see Stopping, then Stopped ---------------------------------------------------------
def _patch_reads() -> None:
    backend = models.SageMakerModelBackend
    describe_training = backend.describe_training_job
    describe_processing = backend.describe_processing_job
    list_training = backend.list_training_jobs
    describe_tuning = backend.describe_hyper_parameter_tuning_job

    def describe_training_job(self: Any, training_job_name: str) -> dict[str, Any]:
        if training_job_name not in self.training_jobs:
            raise ValidationError(message="Requested resource not found.")
        _read(self.training_jobs[training_job_name])
        out = {**describe_training(self, training_job_name), **_billing.get(self.training_jobs[training_job_name].arn, {})}
        if "AutoMlJobArn" in out:
            out = {**out, "AutoMLJobArn": out["AutoMlJobArn"]}
            del out["AutoMlJobArn"]
        return out

    def describe_processing_job(self: Any, processing_job_name: str) -> dict[str, Any]:
        if processing_job_name in self.processing_jobs:
            _read(self.processing_jobs[processing_job_name])
        return describe_processing(self, processing_job_name)

    def describe_hyper_parameter_tuning_job(self: Any, hyper_parameter_tuning_job_name: str) -> dict[str, Any]:
        job = self.hyper_parameter_tuning_jobs.get(hyper_parameter_tuning_job_name)
        if job is not None:
            _read(job)
            job.training_job_status_counters = _counters(self, job.arn)
        out = describe_tuning(self, hyper_parameter_tuning_job_name)
        for key in ("BestTrainingJob", "OverallBestTrainingJob"):
            if (out.get(key) or {}).get("TrainingJobName") in ("FakeTrainingJobName", None):
                out.pop(key, None)  # none completed yet: AWS leaves the field out
        return {k: v for k, v in out.items() if v is not None}

    def list_training_jobs(self: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        for job in list(self.training_jobs.values()):
            _read(job)
        return list_training(self, *args, **kwargs)

    describe_transform = backend.describe_transform_job
    list_transform = backend.list_transform_jobs
    describe_automl = backend.describe_auto_ml_job_v2
    list_automl = backend.list_auto_ml_jobs

    def describe_transform_job(self: Any, transform_job_name: str) -> dict[str, Any]:
        if transform_job_name in self.transform_jobs:
            _read(self.transform_jobs[transform_job_name])
        return describe_transform(self, transform_job_name)

    def list_transform_jobs(self: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        for job in list(self.transform_jobs.values()):
            _read(job)
        out = list_transform(self, *args, **kwargs)
        out["TransformJobSummaries"] = [{k: v for k, v in x.items() if v is not None} for x in out["TransformJobSummaries"]]
        return out

    def describe_auto_ml_job_v2(self: Any, auto_ml_job_name: str) -> dict[str, Any]:
        if auto_ml_job_name in self.auto_ml_jobs:
            _read(self.auto_ml_jobs[auto_ml_job_name])
        return {k: v for k, v in describe_automl(self, auto_ml_job_name).items() if v is not None}

    def list_auto_ml_jobs(self: Any, *args: Any, **kwargs: Any) -> Any:
        for job in list(self.auto_ml_jobs.values()):
            _read(job)
        return list_automl(self, *args, **kwargs)

    backend.describe_transform_job = describe_transform_job  # type: ignore[method-assign]
    backend.list_transform_jobs = list_transform_jobs  # type: ignore[method-assign]
    backend.describe_auto_ml_job_v2 = describe_auto_ml_job_v2  # type: ignore[method-assign]
    backend.list_auto_ml_jobs = list_auto_ml_jobs  # type: ignore[method-assign]
    backend.describe_training_job = describe_training_job  # type: ignore[method-assign]
    backend.describe_processing_job = describe_processing_job  # type: ignore[method-assign]
    backend.describe_hyper_parameter_tuning_job = describe_hyper_parameter_tuning_job  # type: ignore[method-assign]
    backend.list_training_jobs = list_training_jobs  # type: ignore[method-assign]


def _counters(backend: Any, tuning_arn: str) -> dict[str, int]:
    counts = {"Completed": 0, "InProgress": 0, "RetryableError": 0, "NonRetryableError": 0, "Stopped": 0}
    for job in backend.training_jobs.values():
        if getattr(job, "tuning_job_arn", None) == tuning_arn:
            status = job.training_job_status
            key = "NonRetryableError" if status == "Failed" else ("Stopped" if status == "Stopping" else status)
            counts[key] = counts.get(key, 0) + 1
    return counts


# -- stop calls -------------------------------------------------------------------------------
def _patch_stops() -> None:
    backend = models.SageMakerModelBackend

    def stop_training_job(self: Any, training_job_name: str) -> None:
        job = self.training_jobs.get(training_job_name)
        if job is None:
            raise ResourceNotFound(message=f"Could not find training job '{training_job_name}'.")
        _stop(job, "training job")

    def stop_processing_job(self: Any, processing_job_name: str) -> None:
        job = self.processing_jobs.get(processing_job_name)
        if job is None:
            raise ValidationError(message=f"Could not find processing job '{processing_job_name}'.")
        _stop(job, "processing job")

    def stop_hyper_parameter_tuning_job(self: Any, hyper_parameter_tuning_job_name: str) -> None:
        job = self.hyper_parameter_tuning_jobs.get(hyper_parameter_tuning_job_name)
        if job is None:
            raise ResourceNotFound(message=f"Could not find hyper parameter tuning job '{hyper_parameter_tuning_job_name}'.")
        _stop(job, "hyper parameter tuning job")
        for child in self.training_jobs.values():
            if getattr(child, "tuning_job_arn", None) == job.arn and child.training_job_status == RUNNING:
                _stop(child, "training job")

    def stop_transform_job(self: Any, transform_job_name: str) -> None:
        job = self.transform_jobs.get(transform_job_name)
        if job is None:
            raise ValidationError(message=f"Could not find transform job '{transform_job_name}'.")
        _stop(job, "transform job")

    def stop_auto_ml_job(self: Any, auto_ml_job_name: str) -> None:
        job = self.auto_ml_jobs.get(auto_ml_job_name)
        if job is None:
            raise ResourceNotFound(f"Could not find AutoML job with name {auto_ml_job_name}.")
        _stop(job, "AutoML job")

    backend.stop_transform_job = stop_transform_job  # type: ignore[attr-defined]
    backend.stop_auto_ml_job = stop_auto_ml_job  # type: ignore[method-assign]
    backend.stop_training_job = stop_training_job  # type: ignore[attr-defined]
    backend.stop_processing_job = stop_processing_job  # type: ignore[method-assign]
    backend.stop_hyper_parameter_tuning_job = stop_hyper_parameter_tuning_job  # type: ignore[attr-defined]

    def r_stop_training_job(self: Any) -> EmptyResult:
        self.sagemaker_backend.stop_training_job(self._get_param("TrainingJobName"))
        return EmptyResult()

    def r_stop_tuning_job(self: Any) -> EmptyResult:
        self.sagemaker_backend.stop_hyper_parameter_tuning_job(self._get_param("HyperParameterTuningJobName"))
        return EmptyResult()

    def r_stop_transform_job(self: Any) -> EmptyResult:
        self.sagemaker_backend.stop_transform_job(self._get_param("TransformJobName"))
        return EmptyResult()

    responses.SageMakerResponse.stop_transform_job = r_stop_transform_job  # type: ignore[attr-defined]
    responses.SageMakerResponse.stop_training_job = r_stop_training_job  # type: ignore[attr-defined]
    responses.SageMakerResponse.stop_hyper_parameter_tuning_job = r_stop_tuning_job  # type: ignore[attr-defined]


# -- ListTrainingJobsForHyperParameterTuningJob -------------------------------------------------
def _patch_tuning_children() -> None:
    def list_training_jobs_for_hyper_parameter_tuning_job(self: Any) -> ActionResult:
        backend = self.sagemaker_backend
        name = self._get_param("HyperParameterTuningJobName")
        tuning = backend.hyper_parameter_tuning_jobs.get(name)
        if tuning is None:
            raise ResourceNotFound(message=f"Could not find hyper parameter tuning job '{name}'.")
        status = self._get_param("StatusEquals")
        children = [_read(j) for j in backend.training_jobs.values() if getattr(j, "tuning_job_arn", None) == tuning.arn]
        children = [j for j in children if status is None or j.training_job_status == status]
        summaries = [
            {
                k: v
                for k, v in {
                    "TrainingJobName": j.training_job_name,
                    "TrainingJobArn": j.arn,
                    "TuningJobName": name,
                    "CreationTime": j.creation_time,
                    "TrainingStartTime": j.training_start_time,
                    "TrainingEndTime": j.training_end_time,
                    "TrainingJobStatus": j.training_job_status,
                    "TunedHyperParameters": j.hyper_parameters or {},
                }.items()
                if v is not None
            }
            for j in children
        ]
        return ActionResult(_page(summaries, self._get_param("MaxResults"), self._get_param("NextToken"), "TrainingJobSummaries"))

    responses.SageMakerResponse.list_training_jobs_for_hyper_parameter_tuning_job = list_training_jobs_for_hyper_parameter_tuning_job  # type: ignore[attr-defined]


def _page(items: list[dict[str, Any]], max_results: Any, token: Any, key: str) -> dict[str, Any]:
    size = min(int(max_results or 10), 100)
    start = int(token or 0)
    page = items[start : start + size]
    out: dict[str, Any] = {key: page}
    if start + size < len(items):
        out["NextToken"] = str(start + size)
    return out


# -- managed warm pools -------------------------------------------------------------------------
def _patch_warm_pools() -> None:
    original_list = responses.SageMakerResponse.list_training_jobs

    def list_training_jobs(self: Any) -> ActionResult:
        wanted = self._get_param("WarmPoolStatusEquals")
        if wanted is None:
            return original_list(self)  # type: ignore[no-any-return]
        jobs = [_read(j) for j in self.sagemaker_backend.training_jobs.values()]
        summaries = [
            {
                k: v
                for k, v in {
                    "TrainingJobName": j.training_job_name,
                    "TrainingJobArn": j.arn,
                    "CreationTime": j.creation_time,
                    "TrainingEndTime": j.training_end_time,
                    "LastModifiedTime": j.last_modified_time,
                    "TrainingJobStatus": j.training_job_status,
                    "WarmPoolStatus": getattr(j, "warm_pool_status", None),
                }.items()
                if v is not None
            }
            for j in jobs
            if (getattr(j, "warm_pool_status", None) or {}).get("Status") == wanted
        ]
        return ActionResult(_page(summaries, self._get_param("MaxResults"), self._get_param("NextToken"), "TrainingJobSummaries"))

    def update_training_job(self: Any) -> ActionResult:
        name = self._get_param("TrainingJobName")
        job = self.sagemaker_backend.training_jobs.get(name)
        if job is None:
            raise ValidationError(message="Requested resource not found.")
        keep_alive = (self._get_param("ResourceConfig") or {}).get("KeepAlivePeriodInSeconds")
        if keep_alive is not None:
            pool = getattr(job, "warm_pool_status", None) or {}
            if pool.get("Status") != "Available":
                raise ValidationError(message=f"Warm pool of training job {name} is not Available (status {pool.get('Status') or 'none'}).")
            if not 0 <= int(keep_alive) <= 3600:
                raise ValidationError(message="KeepAlivePeriodInSeconds must be between 0 and 3600.")
            job.resource_config = {**(job.resource_config or {}), "KeepAlivePeriodInSeconds": int(keep_alive)}
            if int(keep_alive) == 0:
                job.warm_pool_status = {**pool, "Status": "Terminated"}
        return ActionResult({"TrainingJobArn": job.arn})

    responses.SageMakerResponse.list_training_jobs = list_training_jobs  # type: ignore[method-assign]
    responses.SageMakerResponse.update_training_job = update_training_job  # type: ignore[attr-defined]


# -- Search over TrainingJob: real shape, real pages ---------------------------------------------
def _patch_search() -> None:
    original = responses.SageMakerResponse.search

    def search(self: Any) -> ActionResult:
        if self._get_param("Resource") != "TrainingJob":
            return original(self)  # type: ignore[no-any-return]
        backend = self.sagemaker_backend
        for job in list(backend.training_jobs.values()):
            _read(job)
        expression, ranges = _split_ranges(self._get_param("SearchExpression"))
        found = backend.search(resource="TrainingJob", search_expression=expression)
        shaped = []
        for result in found["Results"]:
            job = {k: v for k, v in result["TrainingJob"].items() if v is not None}
            job["TrainingJobArn"] = job.pop("Arn")
            job.update(_billing.get(job["TrainingJobArn"], {}))
            if not all(_in_range(job.get(f["Name"]), f) for f in ranges):
                continue
            if "AutoMlJobArn" in job:
                job["AutoMLJobArn"] = job.pop("AutoMlJobArn")
            shaped.append({"TrainingJob": job})
        sort_by = self._get_param("SortBy") or "LastModifiedTime"
        descending = (self._get_param("SortOrder") or "Descending") == "Descending"
        shaped.sort(key=lambda r: _sort_key(r["TrainingJob"].get(sort_by)), reverse=descending)
        return ActionResult(_page(shaped, self._get_param("MaxResults"), self._get_param("NextToken"), "Results"))

    responses.SageMakerResponse.search = search  # type: ignore[method-assign]


RANGE_OPERATORS = {"GreaterThan", "GreaterThanOrEqualTo", "LessThan", "LessThanOrEqualTo"}
_billing: dict[str, dict[str, int]] = {}  # training job ARN -> its TrainingTimeInSeconds, BillableTimeInSeconds


def _split_ranges(expression: Any) -> tuple[Any, list[dict[str, Any]]]:
    """(the expression without its range filters, for moto; those filters, applied here)."""
    if not expression or not expression.get("Filters"):
        return expression, []
    ranges = [f for f in expression["Filters"] if f.get("Operator") in RANGE_OPERATORS]
    rest = [f for f in expression["Filters"] if f.get("Operator") not in RANGE_OPERATORS]
    return {**expression, "Filters": rest}, ranges


def _as_time(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _in_range(value: Any, f: dict[str, Any]) -> bool:
    have, bound = _as_time(value), _as_time(f.get("Value"))
    if have is None or bound is None:
        return False
    return {
        "GreaterThan": have > bound,
        "GreaterThanOrEqualTo": have >= bound,
        "LessThan": have < bound,
        "LessThanOrEqualTo": have <= bound,
    }[f["Operator"]]


def _sort_key(value: Any) -> tuple[int, str]:
    """Dates in moto's responses are datetimes or ISO strings; missing values sort first."""
    if value is None:
        return (0, "")
    if isinstance(value, datetime):
        return (1, _utc_naive(value).isoformat())
    return (1, str(value))


# -- seeding helpers (tests, demo, bench) ------------------------------------------------------
def _backend_for(arn: str) -> Any:
    parts = arn.split(":")
    return models.sagemaker_backends[parts[4]][parts[3]]


def _job_for(arn: str) -> Any:
    backend = _backend_for(arn)
    kind, name = arn.split(":")[5].split("/", 1)
    table = {
        "training-job": backend.training_jobs,
        "processing-job": backend.processing_jobs,
        "hyper-parameter-tuning-job": backend.hyper_parameter_tuning_jobs,
        "transform-job": backend.transform_jobs,
        "automl-job": backend.auto_ml_jobs,
    }[kind]
    return table[name]


def set_best_training_job(tuning_arn: str, name: str) -> None:
    """Make the tuning job's BestTrainingJob (and OverallBestTrainingJob) the child `name`."""
    tuning = _job_for(tuning_arn)
    child = _backend_for(tuning_arn).training_jobs[name]
    best = {
        **tuning.best_training_job,
        "TrainingJobName": name,
        "TrainingJobArn": child.arn,
        "TuningJobName": tuning.hyper_parameter_tuning_job_name,
    }
    tuning.best_training_job = best
    tuning.OverallBestTrainingJob = dict(best)


def backdate(arn: str, started_at: datetime) -> None:
    """Make a job (any of the five) look as if it started at `started_at`."""
    job = _job_for(arn)
    when = _utc_naive(started_at)
    job.creation_time = when
    if isinstance(job, models.FakeTrainingJob):
        job.training_start_time = when
    elif isinstance(job, models.FakeProcessingJob):
        job.processing_start_time = when
    elif isinstance(job, models.FakeTransformJob):
        job.transform_start_time = when


def link_automl(child_arn: str, automl_arn: str) -> None:
    """Mark a training job as a candidate the AutoML job launched (its AutoMLJobArn)."""
    _job_for(child_arn).auto_ml_job_arn = automl_arn


def finish(arn: str, status: str = "Completed", ended_at: datetime | None = None) -> None:
    """End a job on its own (it completed, failed or was stopped by someone else)."""
    job = _job_for(arn)
    _set_status(job, status)
    if ended_at is not None and isinstance(job, models.FakeTrainingJob):
        job.training_end_time = _utc_naive(ended_at)


def bill(arn: str, ended_at: datetime, training_s: int, billable_s: int, status: str = "Completed") -> None:
    """The training job ended at `ended_at`, trained `training_s` seconds and was billed `billable_s` (spot: fewer)."""
    finish(arn, status, ended_at)
    _billing[arn] = {"TrainingTimeInSeconds": training_s, "BillableTimeInSeconds": billable_s}


def retain_warm_pool(arn: str, ended_at: datetime, retained_s: int, keep_alive_s: int = 3600) -> None:
    """The training job completed at `ended_at` and kept its instances in a warm pool, billed `retained_s` so far."""
    finish(arn, "Completed", ended_at)
    job = _job_for(arn)
    job.resource_config = {**(job.resource_config or {}), "KeepAlivePeriodInSeconds": keep_alive_s}
    job.warm_pool_status = {"Status": "Available", "ResourceRetainedBillableTimeInSeconds": retained_s}


def add_tuning_training_job(
    tuning_arn: str, name: str, started_at: datetime, ended_at: datetime | None = None, status: str | None = None
) -> str:
    """A training job launched by the tuning job, with its definition's resources; returns its ARN."""
    backend = _backend_for(tuning_arn)
    tuning = _job_for(tuning_arn)
    definition = tuning.training_job_definition or (tuning.training_job_definitions or [{}])[0]
    job = backend.create_training_job(
        training_job_name=name,
        hyper_parameters=definition.get("StaticHyperParameters") or {},
        algorithm_specification=dict(definition.get("AlgorithmSpecification") or {"TrainingImage": "img", "TrainingInputMode": "File"}),
        role_arn=definition.get("RoleArn", ""),
        input_data_config=definition.get("InputDataConfig") or [],
        output_data_config=definition.get("OutputDataConfig") or {"S3OutputPath": "s3://bucket/out"},
        resource_config=definition.get("ResourceConfig") or {},
        vpc_config={},
        stopping_condition=definition.get("StoppingCondition") or {},
        tags=list(tuning.tags or []),
        enable_network_isolation=False,
        enable_inter_container_traffic_encryption=False,
        enable_managed_spot_training=bool(definition.get("EnableManagedSpotTraining")),
        checkpoint_config={},
        debug_hook_config={},
        debug_rule_configurations=[],
        tensor_board_output_config={},
        experiment_config={},
    )
    job.tuning_job_arn = tuning.arn
    backdate(job.arn, started_at)
    if ended_at is not None or status not in (None, RUNNING):
        finish(job.arn, status or "Completed", ended_at)
    return str(job.arn)


def apply() -> None:
    if getattr(models.SageMakerModelBackend, "_reaper_jobs", False):
        return
    _patch_creation()
    _patch_reads()
    _patch_stops()
    _patch_tuning_children()
    _patch_search()
    _patch_warm_pools()
    models.SageMakerModelBackend._reaper_jobs = True  # type: ignore[attr-defined]
