"""The TypedDicts that stand for AWS's shapes (issue 35) name only members those shapes have, as botocore's
service models (the API references' source) list them: a misspelt member would read as "absent" forever, which
mypy cannot see. And the packages whose responses are all typed stay free of `dict[str, Any]`.
docs/aws-assumptions.md, "Typed AWS shapes".
"""

from __future__ import annotations

from pathlib import Path

import botocore.session
import pytest

from reaper.aws import anomalies, budgets, cloudtrail, discounts, faults, jupyter, log_pages, metrics, price_list, tagging
from reaper.kinds.bedrock_pt import discover as bedrock_discover
from reaper.kinds.fsx import shapes as fsx
from reaper.org import click
from reaper.report import bill, savings_metric
from tests.helpers.shapes import required_members

MODELS = botocore.session.get_session()
PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "reaper" / "reaper"

# (our TypedDict, botocore service, its shape there)
NAMED = [
    (tagging.Tag, "resourcegroupstaggingapi", "Tag"),
    (tagging.ResourceTagMapping, "resourcegroupstaggingapi", "ResourceTagMapping"),
    (tagging.GetResourcesOutput, "resourcegroupstaggingapi", "GetResourcesOutput"),
    (anomalies.AnomalyMonitor, "ce", "AnomalyMonitor"),
    (anomalies.MonitorSpecification, "ce", "Expression"),
    (anomalies.TagSpec, "ce", "TagValues"),
    (anomalies.AnomalySubscription, "ce", "AnomalySubscription"),
    (budgets.Spend, "budgets", "Spend"),
    (budgets.CalculatedSpend, "budgets", "CalculatedSpend"),
    (budgets.TagValues, "budgets", "TagValues"),
    (budgets.Expression, "budgets", "Expression"),
    (budgets.Budget, "budgets", "Budget"),
    (budgets.DescribeBudgetsResponse, "budgets", "DescribeBudgetsResponse"),
    (log_pages.FilterLogEventsRequest, "logs", "FilterLogEventsRequest"),
    (log_pages.FilteredLogEvent, "logs", "FilteredLogEvent"),
    (log_pages.FilterLogEventsResponse, "logs", "FilterLogEventsResponse"),
    (metrics.Dimension, "cloudwatch", "Dimension"),
    (metrics.Metric, "cloudwatch", "Metric"),
    (metrics.MetricStat, "cloudwatch", "MetricStat"),
    (metrics.MetricDataQuery, "cloudwatch", "MetricDataQuery"),
    (metrics.GetMetricDataRequest, "cloudwatch", "GetMetricDataInput"),
    (metrics.MetricDataResult, "cloudwatch", "MetricDataResult"),
    (metrics.GetMetricDataResponse, "cloudwatch", "GetMetricDataOutput"),
    (savings_metric.MetricDatum, "cloudwatch", "MetricDatum"),
    (price_list.Filter, "pricing", "Filter"),
    (price_list.GetProductsRequest, "pricing", "GetProductsRequest"),
    (discounts.SavingsPlansCoverageData, "ce", "SavingsPlansCoverageData"),
    (discounts.SavingsPlansCoverage, "ce", "SavingsPlansCoverage"),
    (discounts.SavingsPlansCoveragePage, "ce", "GetSavingsPlansCoverageResponse"),
    (discounts.CoverageHours, "ce", "CoverageHours"),
    (discounts.Coverage, "ce", "Coverage"),
    (discounts.CoverageByTime, "ce", "CoverageByTime"),
    (discounts.ReservationCoveragePage, "ce", "GetReservationCoverageResponse"),
    (discounts.Recommendation, "cost-optimization-hub", "Recommendation"),
    (discounts.RecommendationsPage, "cost-optimization-hub", "ListRecommendationsResponse"),
    (faults.RetryPolicy, "scheduler", "RetryPolicy"),
    (faults.Target, "scheduler", "Target"),
    (jupyter.PresignedUrlAnswer, "sagemaker", "CreatePresignedDomainUrlResponse"),
    (jupyter.PresignedUrlAnswer, "sagemaker", "CreatePresignedNotebookInstanceUrlOutput"),
    (bill.DateInterval, "ce", "DateInterval"),
    (bill.GroupDefinition, "ce", "GroupDefinition"),
    (bill.GetCostAndUsageRequest, "ce", "GetCostAndUsageRequest"),
    (bill.MetricValue, "ce", "MetricValue"),
    (bill.Group, "ce", "Group"),
    (bill.ResultByTime, "ce", "ResultByTime"),
    (bill.GetCostAndUsageResponse, "ce", "GetCostAndUsageResponse"),
    (click.Credentials, "sts", "Credentials"),
    (cloudtrail.Event, "cloudtrail", "Event"),
    (cloudtrail.LookupEventsResponse, "cloudtrail", "LookupEventsResponse"),
    (fsx.Tag, "fsx", "Tag"),
    (fsx.DataRepositoryConfiguration, "fsx", "DataRepositoryConfiguration"),
    (fsx.LustreFileSystemConfiguration, "fsx", "LustreFileSystemConfiguration"),
    (fsx.FileSystem, "fsx", "FileSystem"),
    (fsx.EventsPolicy, "fsx", "AutoExportPolicy"),
    (fsx.EventsPolicy, "fsx", "AutoImportPolicy"),
    (fsx.S3DataRepositoryConfiguration, "fsx", "S3DataRepositoryConfiguration"),
    (fsx.DataRepositoryAssociation, "fsx", "DataRepositoryAssociation"),
    (fsx.DescribeDataRepositoryAssociationsResponse, "fsx", "DescribeDataRepositoryAssociationsResponse"),
    (fsx.FailureDetails, "fsx", "BackupFailureDetails"),
    (fsx.FailureDetails, "fsx", "DataRepositoryTaskFailureDetails"),
    (fsx.Backup, "fsx", "Backup"),
    (fsx.TaskStatus, "fsx", "DataRepositoryTaskStatus"),
    (fsx.CompletionReport, "fsx", "CompletionReport"),
    (fsx.DataRepositoryTask, "fsx", "DataRepositoryTask"),
    (bedrock_discover.ProvisionedModelSummary, "bedrock", "ProvisionedModelSummary"),
]


@pytest.mark.parametrize(("typed", "service", "shape"), NAMED, ids=[f"{s}.{n}" for _, s, n in NAMED])
def test_each_typed_shape_names_only_members_aws_has(typed: type, service: str, shape: str) -> None:
    members = set(MODELS.get_service_model(service).shape_for(shape).members)
    ours = set(typed.__required_keys__) | set(typed.__optional_keys__)  # type: ignore[attr-defined]
    assert ours <= members, f"not members of {service} {shape}: {sorted(ours - members)}"


# what the code builds and sends (every member it names, it sets): total there is no promise about an answer
SENT = {metrics.Metric, metrics.MetricStat, savings_metric.MetricDatum, bill.GroupDefinition, bill.GetCostAndUsageRequest}
READ = [n for n in NAMED if n[0] not in SENT]


@pytest.mark.parametrize(("typed", "service", "shape"), READ, ids=[f"{s}.{n}" for _, s, n in READ])
def test_a_member_read_from_an_answer_is_required_only_where_aws_requires_it(typed: type, service: str, shape: str) -> None:
    """A member AWS may leave out must be optional here, so mypy makes the code say what its absence means."""
    required = set(MODELS.get_service_model(service).shape_for(shape).required_members)
    ours = required_members(typed)
    assert ours <= required, f"required here but optional in {service} {shape}: {sorted(ours - required)}"


@pytest.mark.parametrize("package", ["aws", "slack", "sweep"])
def test_packages_whose_responses_are_typed_hold_no_untyped_dict(package: str) -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in sorted((PACKAGE / package).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if "dict[str, Any]" in line
    ]
    assert found == []
