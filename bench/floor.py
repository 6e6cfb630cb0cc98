"""The floor of API calls for what a sweep read: each list page full, each metric batch full.

While a sweep runs, `counting()` records per operation how many items AWS returned (list and search
pages) or how many queries were sent (GetMetricData). The floor of a paginated operation is then
ceil(items / AWS's largest page); of GetMetricData ceil(queries / 500). An operation not in PAGE has
no batch form in AWS (DescribeEndpointConfig, DescribeApp, DescribeProcessingJob, and lists scoped to
one parent such as ListTrainingJobsForHyperParameterTuningJob): its floor is
the calls recorded, so the ratio measures paging and batching, and the per-resource reads are shown
by operation for what they are.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from botocore.client import BaseClient

from reaper.sweep.iam import iam_action

# operation -> (the list field of the response, AWS's largest page), from each API reference's MaxResults
PAGE: dict[str, tuple[str, int]] = {
    # https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_Search.html
    "sagemaker:Search": ("Results", 100),
    # https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ListInferenceComponents.html
    "sagemaker:ListInferenceComponents": ("InferenceComponents", 100),
    # https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ListModels.html
    "sagemaker:ListModels": ("Models", 100),
    "sagemaker:ListNotebookInstances": ("NotebookInstances", 100),
    "sagemaker:ListProcessingJobs": ("ProcessingJobSummaries", 100),
    "sagemaker:ListTrainingJobs": ("TrainingJobSummaries", 100),
    "sagemaker:ListHyperParameterTuningJobs": ("HyperParameterTuningJobSummaries", 100),
    "sagemaker:ListApps": ("Apps", 100),
    "sagemaker:ListSpaces": ("Spaces", 100),
    "sagemaker:ListDomains": ("Domains", 100),
    # https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ListMlflowTrackingServers.html (MaxResults ≤ 100)
    "sagemaker:ListMlflowTrackingServers": ("TrackingServerSummaries", 100),
    # https://docs.aws.amazon.com/resourcegroupstagging/latest/APIReference/API_GetResources.html (ResourcesPerPage ≤ 100)
    "tag:GetResources": ("ResourceTagMappingList", 100),
    # https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeInstances.html (MaxResults ≤ 1000)
    "ec2:DescribeInstances": ("Reservations", 1000),
    "ec2:DescribeInstanceTypes": ("InstanceTypes", 100),
    # https://docs.aws.amazon.com/fsx/latest/APIReference/API_DescribeFileSystems.html (MaxResults ≤ 2147483647)
    "fsx:DescribeFileSystems": ("FileSystems", 2_147_483_647),
    # https://docs.aws.amazon.com/fsx/latest/APIReference/API_DescribeDataRepositoryAssociations.html (MaxResults ≤ 25)
    "fsx:DescribeDataRepositoryAssociations": ("Associations", 25),
    "fsx:DescribeBackups": ("Backups", 2_147_483_647),
    "fsx:DescribeDataRepositoryTasks": ("DataRepositoryTasks", 2_147_483_647),
    # https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeVolumes.html (MaxResults 5-500)
    "ec2:DescribeVolumes": ("Volumes", 500),
    # https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeSnapshots.html (MaxResults 5-1,000)
    "ec2:DescribeSnapshots": ("Snapshots", 1000),
    # https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_ListMetrics.html (500 a page)
    "cloudwatch:ListMetrics": ("Metrics", 500),
    # https://docs.aws.amazon.com/awscloudtrail/latest/APIReference/API_LookupEvents.html (MaxResults 1-50)
    "cloudtrail:LookupEvents": ("Events", 50),
}
# FilterLogEvents: "Each page returned can contain up to 1 MB of log events or up to 10,000 log events"
# https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilterLogEvents.html
# operation -> (its id list parameter, the most ids one call takes), from botocore's model: a read by
# ids (the FSx backups and export tasks the reaper started) needs ceil(ids / most) calls, however
# few items a list page would hold
# https://docs.aws.amazon.com/fsx/latest/APIReference/API_DescribeBackups.html (BackupIds: 50 items)
# https://docs.aws.amazon.com/fsx/latest/APIReference/API_DescribeDataRepositoryTasks.html (TaskIds: 50 items)
BY_IDS: dict[str, tuple[str, int]] = {
    "fsx:DescribeBackups": ("BackupIds", 50),
    "fsx:DescribeDataRepositoryTasks": ("TaskIds", 50),
    # the volumes of stopped GPU boxes, read by id (kinds/storage/discover.py: 500 a call, DescribeVolumes' page)
    "ec2:DescribeVolumes": ("VolumeIds", 500),
}
LOG_PAGE_EVENTS, LOG_PAGE_BYTES = 10_000, 1_048_576
METRIC_BATCH = 500  # GetMetricData: at most 500 MetricDataQuery structures per call
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html
SEARCH_BATCH = 100  # "as many as 100 search expressions on one graph" (one GetMetricData request)
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/search-expression-syntax.html


class ItemCounter:
    def __init__(self) -> None:
        self.items: Counter[str] = Counter()  # operation -> items returned (or metric queries sent)
        self.queries: Counter[str] = Counter()
        self.searches: Counter[str] = Counter()  # GetMetricData: SEARCH expressions sent
        self.bytes: Counter[str] = Counter()  # FilterLogEvents: the events' size, as JSON
        self.ids: Counter[str] = Counter()  # reads by ids (BY_IDS): the ids asked for
        self.id_calls: Counter[str] = Counter()  # ... and in how many calls

    def floor(self, calls: dict[str, int]) -> dict[str, int]:
        out: dict[str, int] = {}
        for op, n in calls.items():
            if op == "cloudwatch:GetMetricData":
                batches = max(math.ceil(self.queries[op] / METRIC_BATCH), math.ceil(self.searches[op] / SEARCH_BATCH))
                out[op] = min(n, batches)
            elif op == "logs:FilterLogEvents":
                pages = max(math.ceil(self.items[op] / LOG_PAGE_EVENTS), math.ceil(self.bytes[op] / LOG_PAGE_BYTES))
                out[op] = min(n, max(1, pages))
            elif op in PAGE:
                by_ids = math.ceil(self.ids[op] / BY_IDS[op][1]) if op in BY_IDS else 0
                listed = n - self.id_calls[op]  # a list that came back empty still costs its one call
                pages = max(1, math.ceil(self.items[op] / PAGE[op][1])) if listed else 0
                out[op] = min(n, by_ids + pages)
            else:
                out[op] = n  # no batch form in AWS: one call per resource that needs it
        return out


@contextmanager
def counting() -> Iterator[ItemCounter]:
    counter = ItemCounter()
    original = BaseClient._make_api_call

    def wrapped(self: BaseClient, operation_name: str, api_params: Any) -> Any:
        op = iam_action(self.meta.service_model.service_name, operation_name)
        if op == "cloudwatch:GetMetricData":
            counter.queries[op] += len(api_params.get("MetricDataQueries", []))
            counter.searches[op] += sum(str(q.get("Expression", "")).count("SEARCH(") for q in api_params.get("MetricDataQueries", []))
        response = original(self, operation_name, api_params)
        if op in BY_IDS and api_params.get(BY_IDS[op][0]):
            counter.ids[op] += len(api_params[BY_IDS[op][0]])
            counter.id_calls[op] += 1
        elif op in PAGE and isinstance(response, dict):
            counter.items[op] += len(response.get(PAGE[op][0]) or [])
        if op == "logs:FilterLogEvents" and isinstance(response, dict):
            events = response.get("events") or []
            counter.items[op] += len(events)
            counter.bytes[op] += sum(len(json.dumps(e, default=str)) for e in events)
        return response

    BaseClient._make_api_call = wrapped  # type: ignore[method-assign]
    try:
        yield counter
    finally:
        BaseClient._make_api_call = original  # type: ignore[method-assign]
