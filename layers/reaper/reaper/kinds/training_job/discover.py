"""Finding the running jobs: training, processing and hyperparameter tuning jobs `InProgress`.

Training jobs: SageMaker Search (100 a page) returns each running job whole — instance type and
count, start time, spot flag and tags — so there is no describe or tag call per job. (Listing
tags for every training job the account ever ran, as the tagging API would, grows without end.)

Processing, tuning, transform and AutoML jobs have no batch read: their list calls give no instance
type, so each running one is described (running ones are few). Their tags come from the tagging API
by ARN, 100 a call. A tuning job's cost is the sum of its training jobs, listed 100 a page. An AutoML
job (ListAutoMLJobs, DescribeAutoMLJobV2) chooses its own instances: its cost is not estimated, its
runtime ceiling holds, and whether it progresses is read from the jobs it launched (their
`AutoMLJobArn`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import Any

from reaper.aws.clients import Clients
from reaper.aws.pricing import Pricer
from reaper.aws.sagemaker_shapes import TrainingJob
from reaper.aws.tagging import ArnIndex
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.kinds.training_job.cost import cluster, one_kind, tuning_cluster
from reaper.kinds.training_job.model import KIND, RUNNING, Cluster, JobFacts, Span, WarmPool
from reaper.kinds.training_job.shapes import (
    AutoMLJob,
    HyperParameterTrainingJobDefinition,
    HyperParameterTuningJob,
    HyperParameterTuningJobConfig,
    HyperParameterTuningJobObjective,
    ProcessingJob,
    TransformJob,
    TransformResources,
    checkpoint_uri,
    describe_automl_job,
    describe_processing_job,
    describe_training_job,
    describe_transform_job,
    describe_tuning_job,
    searched_training_jobs,
)
from reaper.kinds.training_job.starved import channels

SEARCH_RUNNING = {"Filters": [{"Name": "TrainingJobStatus", "Operator": "Equals", "Value": RUNNING}]}
PAGE = 100


def discover(clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
    return training_jobs(clients) + other_jobs(clients) + batch_jobs(clients) + warm_pools(clients)


def training_jobs(clients: Clients) -> list[Resource]:
    out: list[Resource] = []
    paginator = clients("sagemaker").get_paginator("search")
    pages = paginator.paginate(Resource="TrainingJob", SearchExpression=SEARCH_RUNNING, PaginationConfig={"PageSize": PAGE})
    for page in pages:
        for job in searched_training_jobs(page):
            if job.get("TrainingJobStatus") != RUNNING or not job.get("TrainingJobName"):
                continue  # the search index lags a little: trust only what it says is running
            out.append(_training(job, clients.region, clients.pricer))
    return out


def _training(job: TrainingJob, region: str, pricer: Pricer) -> Resource:
    c = cluster(region, job.get("ResourceConfig"), pricer)
    start = job.get("TrainingStartTime")
    return Resource(
        kind=KIND,
        id=job["TrainingJobName"],
        arn=job.get("TrainingJobArn", ""),
        region=region,
        state=job["TrainingJobStatus"],
        tags={t["Key"]: t["Value"] for t in job.get("Tags", []) or []},
        instance_type=c.instance_type,
        instance_count=c.count,
        price=c.price,
        created_at=job.get("CreationTime"),
        changed_at=job.get("LastModifiedTime"),
        facts=JobFacts(
            job_type="training",
            started_at=start,
            spans=(Span(start, None, c.hourly_usd),),
            cluster=c,
            spot=bool(job.get("EnableManagedSpotTraining")),
            billable_s=job.get("BillableTimeInSeconds"),
            secondary_status=job.get("SecondaryStatus"),
            max_runtime_s=(job.get("StoppingCondition") or {}).get("MaxRuntimeInSeconds"),
            checkpoint_s3=checkpoint_uri(job),
            tuning_job_arn=job.get("TuningJobArn"),
            automl_job_arn=job.get("AutoMLJobArn"),
            inputs=channels(job),
        ),
    )


def other_jobs(clients: Clients) -> list[Resource]:
    """Running processing and tuning jobs, described one by one, their tags read together."""
    sm = clients("sagemaker")
    processing = [describe_processing_job(sm, n) for n in _running(sm, "list_processing_jobs", "ProcessingJob")]
    tuning = [describe_tuning_job(sm, n) for n in _running(sm, "list_hyper_parameter_tuning_jobs", "HyperParameterTuningJob")]
    tags = tags_for(clients, [d["ProcessingJobArn"] for d in processing] + [d["HyperParameterTuningJobArn"] for d in tuning])
    return [_processing(d, tags.get(d["ProcessingJobArn"], {}), clients.region, clients.pricer) for d in processing] + [
        _tuning(sm, d, tags.get(d["HyperParameterTuningJobArn"], {}), clients.region, clients.pricer) for d in tuning
    ]


def _running(sm: Any, operation: str, prefix: str) -> list[str]:
    names: list[str] = []
    for page in sm.get_paginator(operation).paginate(StatusEquals=RUNNING, PaginationConfig={"PageSize": PAGE}):
        for s in page.get(f"{prefix}Summaries", []):
            if s.get(f"{prefix}Status") == RUNNING:
                names.append(s[f"{prefix}Name"])
    return names


def _processing(d: ProcessingJob, tags: dict[str, str], region: str, pricer: Pricer) -> Resource:
    resources = d.get("ProcessingResources")
    c = cluster(region, one_kind(resources.get("ClusterConfig") if resources else None), pricer)
    start = d.get("ProcessingStartTime")
    return Resource(
        kind=KIND,
        id=d["ProcessingJobName"],
        arn=d["ProcessingJobArn"],
        region=region,
        state=d.get("ProcessingJobStatus", "Unknown"),
        tags=tags,
        instance_type=c.instance_type,
        instance_count=c.count,
        price=c.price,
        created_at=d.get("CreationTime"),
        changed_at=d.get("LastModifiedTime"),
        facts=JobFacts(
            job_type="processing",
            started_at=start,
            spans=(Span(start, None, c.hourly_usd),),
            cluster=c,
            max_runtime_s=(d.get("StoppingCondition") or {}).get("MaxRuntimeInSeconds"),
            automl_job_arn=d.get("AutoMLJobArn"),
        ),
    )


def _tuning(sm: Any, d: HyperParameterTuningJob, tags: dict[str, str], region: str, pricer: Pricer) -> Resource:
    name = d["HyperParameterTuningJobName"]
    definitions = {x.get("DefinitionName"): x for x in d.get("TrainingJobDefinitions") or []}
    default = d.get("TrainingJobDefinition") or next(iter(definitions.values()), HyperParameterTrainingJobDefinition())
    clusters = {key: tuning_cluster(region, x, pricer) for key, x in definitions.items()}
    main = tuning_cluster(region, default, pricer)
    spans: list[Span] = []
    names: list[str] = []
    running = 0
    children = sm.get_paginator("list_training_jobs_for_hyper_parameter_tuning_job")
    for page in children.paginate(HyperParameterTuningJobName=name, PaginationConfig={"PageSize": PAGE}):
        for s in page.get("TrainingJobSummaries", []):
            c = clusters.get(s.get("TrainingJobDefinitionName"), main)
            spans.append(Span(s.get("TrainingStartTime"), s.get("TrainingEndTime"), c.hourly_usd))
            running += s.get("TrainingJobStatus") == RUNNING
            names.append(s["TrainingJobName"])
    spot = bool(default.get("EnableManagedSpotTraining")) or any(x.get("EnableManagedSpotTraining") for x in definitions.values())
    created = d.get("CreationTime")
    config = d.get("HyperParameterTuningJobConfig") or HyperParameterTuningJobConfig()
    objective = config.get("HyperParameterTuningJobObjective") or HyperParameterTuningJobObjective()
    return Resource(
        kind=KIND,
        id=name,
        arn=d["HyperParameterTuningJobArn"],
        region=region,
        state=d.get("HyperParameterTuningJobStatus", "Unknown"),
        tags=tags,
        instance_type=main.instance_type,
        instance_count=main.count * max(running, 1),
        price=None if main.price is None else main.price.times(running),
        created_at=created,
        changed_at=d.get("LastModifiedTime"),
        facts=JobFacts(
            job_type="tuning",
            started_at=created,  # the tuning job's runtime counts from its creation
            spans=tuple(spans),
            cluster=main,
            spot=spot,
            training_jobs=len(spans),
            training_jobs_running=running,
            early_stopping=config.get("TrainingJobEarlyStoppingType", "Off"),  # Off unless set (the API's default)
            objective=(objective["MetricName"], objective["Type"]) if objective.get("MetricName") and objective.get("Type") else None,
            children=tuple(names),
            best_child=(d.get("BestTrainingJob") or {}).get("TrainingJobName"),
        ),
    )


def batch_jobs(clients: Clients) -> list[Resource]:
    """Running transform and AutoML jobs, described one by one, their tags read together."""
    sm = clients("sagemaker")
    transform = [describe_transform_job(sm, n) for n in _running(sm, "list_transform_jobs", "TransformJob")]
    automl = [describe_automl_job(sm, n) for n in _running(sm, "list_auto_ml_jobs", "AutoMLJob")]
    tags = tags_for(clients, [d["TransformJobArn"] for d in transform] + [d["AutoMLJobArn"] for d in automl])
    return [_transform(d, tags.get(d["TransformJobArn"], {}), clients.region) for d in transform] + [
        _automl(d, tags.get(d["AutoMLJobArn"], {}), clients.region) for d in automl
    ]


def _transform(d: TransformJob, tags: dict[str, str], region: str) -> Resource:
    # A transform job bills its TransformResources at the batch transform price, which the price
    # table does not hold: its cost is not estimated (the runtime ceiling holds).
    resources = d.get("TransformResources") or TransformResources()
    count = int(resources.get("InstanceCount") or 1)
    c = Cluster(resources.get("InstanceType"), count, None, unpriced=(f"{resources.get('InstanceType') or '?'} (batch transform)",))
    start = d.get("TransformStartTime") or d.get("CreationTime")
    return Resource(
        kind=KIND,
        id=d["TransformJobName"],
        arn=d["TransformJobArn"],
        region=region,
        state=d.get("TransformJobStatus", "Unknown"),
        tags=tags,
        instance_type=c.instance_type,
        instance_count=count,
        hourly_usd=None,
        created_at=d.get("CreationTime"),
        changed_at=None,  # DescribeTransformJob has no LastModifiedTime (API_DescribeTransformJob.html)
        facts=JobFacts(
            job_type="transform",
            started_at=start,
            spans=(Span(start, None, None),),
            cluster=c,
            automl_job_arn=d.get("AutoMLJobArn") or None,
        ),
    )


def _automl(d: AutoMLJob, tags: dict[str, str], region: str) -> Resource:
    created = d.get("CreationTime")
    c = Cluster(None, 0, None, unpriced=("the instances AutoML chooses",))
    return Resource(
        kind=KIND,
        id=d["AutoMLJobName"],
        arn=d["AutoMLJobArn"],
        region=region,
        state=d.get("AutoMLJobStatus", "Unknown"),
        tags=tags,
        instance_type=None,
        instance_count=0,
        hourly_usd=None,
        created_at=created,
        changed_at=d.get("LastModifiedTime"),
        facts=JobFacts(job_type="automl", started_at=created, spans=(Span(created, None, None),), cluster=c),
    )


def warm_pools(clients: Clients) -> list[Resource]:
    """Ended training jobs whose managed warm pool is Available (still billed), described one by one."""
    sm = clients("sagemaker")
    names: list[str] = []
    for page in sm.get_paginator("list_training_jobs").paginate(WarmPoolStatusEquals="Available", PaginationConfig={"PageSize": PAGE}):
        names += [s["TrainingJobName"] for s in page.get("TrainingJobSummaries", []) if s.get("TrainingJobStatus") != RUNNING]
    described = [describe_training_job(sm, n) for n in names]
    tags = tags_for(clients, [d["TrainingJobArn"] for d in described])
    out: list[Resource] = []
    for d in described:
        pool = d.get("WarmPoolStatus")
        if pool is None or pool.get("Status") != "Available":
            continue  # reused or terminated since the listing
        r = _training(d, clients.region, clients.pricer)
        facts = r.facts_as(JobFacts)
        warm = WarmPool(
            "Available",
            int(pool.get("ResourceRetainedBillableTimeInSeconds") or 0),
            (d.get("ResourceConfig") or {}).get("KeepAlivePeriodInSeconds"),
            d.get("TrainingEndTime"),
        )
        spans = (Span(facts.started_at, d.get("TrainingEndTime"), r.hourly_usd),)
        out.append(replace(r, tags=tags.get(r.arn, {}), facts=replace(facts, warm_pool=warm, spans=spans)))
    return out


def tags_for(clients: Clients, arns: Iterable[str]) -> ArnIndex:
    """Tags of the given resources, 100 ARNs a call (GetResources takes no page size with an ARN list);
    looked up whatever the ARN's case."""
    arns = list(arns)
    out = ArnIndex()
    tagging = clients("resourcegroupstaggingapi")
    for i in range(0, len(arns), PAGE):
        response = tagging.get_resources(ResourceARNList=arns[i : i + PAGE])
        out.add_mappings(response.get("ResourceTagMappingList", []))
    return out
