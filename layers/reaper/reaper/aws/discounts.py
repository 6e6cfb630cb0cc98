"""What a stop saves after the account's commitments, from Cost Explorer's coverage reads.

List-price savings (reaper/report/summary.py) assume every reclaimed hour would have been paid at
On-Demand rates. Usage that a Savings Plan or a Reserved Instance covers is paid by the commitment
whether it runs or not, so stopping it saves nothing until the commitment is spare. Cost Explorer
says what share of each service's spend ran at On-Demand rates over the last 30 days:

- GetSavingsPlansCoverage, grouped by SERVICE: OnDemandCost / TotalCost of Amazon SageMaker and of
  Amazon EC2 (SageMaker Savings Plans and Compute Savings Plans);
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_GetSavingsPlansCoverage.html
- GetReservationCoverage for EC2: OnDemandHours / TotalRunningHours (SageMaker has no RIs);
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_GetReservationCoverage.html

A reclaimed resource's saving after commitments is its list saving times that On-Demand share
(EC2: both shares), an estimate that says its source and period. Where AWS itself knows the figure,
it wins: Cost Optimization Hub's Stop/Delete recommendation for that resource, when the account is
enrolled and its savings are estimated after discounts (estimatedMonthlySavings / 730 an hour:
https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_CostOptimizationHub_ListRecommendations.html).
Kinds no commitment covers (FSx, Bedrock Provisioned Throughput) keep their list saving. Opt-in: Cost Explorer charges $0.01 per
API request (https://aws.amazon.com/aws-cost-management/aws-cost-explorer/pricing/), so a report
makes one read (each API paginated) and keeps it for the UTC day (docs/configuration.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict, TypeVar, cast

from botocore.exceptions import ClientError

HUB_PERMISSIONS = frozenset(
    {"cost-optimization-hub:ListEnrollmentStatuses", "cost-optimization-hub:GetPreferences", "cost-optimization-hub:ListRecommendations"}
)
CE_PERMISSIONS = frozenset({"ce:GetSavingsPlansCoverage", "ce:GetReservationCoverage"})
PERMISSIONS = CE_PERMISSIONS | HUB_PERMISSIONS  # `reaper report --discounts`; the digest reads Cost Explorer only
HOURS_A_MONTH = 730
SAGEMAKER = "Amazon SageMaker"
EC2 = "Amazon Elastic Compute Cloud - Compute"
KIND_SERVICE = {
    **dict.fromkeys(("notebook", "endpoint", "training-job", "studio-app"), SAGEMAKER),
    **dict.fromkeys(("ec2", "capacity"), EC2),
}  # the kinds no commitment covers (fsx, bedrock-pt) keep their list saving
CE_REGION = "us-east-1"  # Cost Explorer's endpoint: https://docs.aws.amazon.com/general/latest/gr/billing.html
PERIOD = timedelta(days=30)
MAX_PAGES = 50  # a runaway NextToken ends the read, said as unavailable


@dataclass(frozen=True)
class Discounts:
    """The share of each service's spend at On-Demand rates, where it comes from, or why there is none."""

    on_demand_share: dict[str, float] = field(default_factory=dict)
    source: str = ""
    as_of: str = ""
    unavailable: str | None = None
    hub_hourly: dict[str, float] = field(default_factory=dict)  # resource id or ARN -> USD an hour after discounts
    hub_note: str = ""

    def after(self, kind: str, list_usd: float | None, ids: tuple[str, ...] = (), hours: float | None = None) -> float | None:
        """The list saving after commitments, or None when it cannot be said."""
        known = next((self.hub_hourly[i] for i in ids if i in self.hub_hourly), None)
        if known is not None and hours is not None:
            return known * hours
        if list_usd is None or self.unavailable is not None:
            return None
        service = KIND_SERVICE.get(kind)
        return list_usd if service is None else list_usd * self.on_demand_share.get(service, 1.0)

    def line(self) -> str:
        hub = f"; {self.hub_note}" if self.hub_note else ""
        if self.unavailable is not None:
            return f"after commitments: not known ({self.unavailable}){hub}"
        shares = ", ".join(f"{s}: {v:.0%} at On-Demand rates" for s, v in sorted(self.on_demand_share.items()))
        return f"after commitments: {self.source} ({shares or 'no SageMaker or EC2 spend'}){hub}"


class SavingsPlansCoverageData(TypedDict, total=False):
    """API_SavingsPlansCoverageData.html: amounts as strings."""

    OnDemandCost: str
    TotalCost: str


class SavingsPlansCoverage(TypedDict, total=False):
    """https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_SavingsPlansCoverage.html"""

    Attributes: dict[str, str]
    Coverage: SavingsPlansCoverageData


class SavingsPlansCoveragePage(TypedDict, total=False):
    SavingsPlansCoverages: list[SavingsPlansCoverage]
    NextToken: str


class CoverageHours(TypedDict, total=False):
    """https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_CoverageHours.html"""

    OnDemandHours: str
    TotalRunningHours: str


class Coverage(TypedDict, total=False):
    CoverageHours: CoverageHours


class CoverageByTime(TypedDict, total=False):
    """https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_CoverageByTime.html"""

    Total: Coverage


class ReservationCoveragePage(TypedDict, total=False):
    CoveragesByTime: list[CoverageByTime]
    NextPageToken: str


class Recommendation(TypedDict, total=False):
    """https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_CostOptimizationHub_Recommendation.html"""

    resourceId: str
    resourceArn: str
    estimatedMonthlySavings: float


class RecommendationsPage(TypedDict, total=False):
    items: list[Recommendation]
    nextToken: str


Page = TypeVar("Page", SavingsPlansCoveragePage, ReservationCoveragePage, RecommendationsPage)


def _pages(call: Any, token_name: str, shape: type[Page], **request: object) -> Iterator[Page]:
    """Each page of `call`, its token sent back under the name it came with."""
    token: object = None
    for _ in range(MAX_PAGES):
        page = cast(Page, call(**request, **({token_name: token} if token else {})))
        yield page
        token = cast(dict[str, object], page).get(token_name)
        if not token:
            return
    raise ClientError({"Error": {"Code": "TooManyPages", "Message": f"more than {MAX_PAGES} pages"}}, "coverage")


def savings_plans_share(ce: Any, start: date, end: date) -> dict[str, float]:
    """OnDemandCost / TotalCost per service (SageMaker, EC2) over the period."""
    spend: dict[str, list[float]] = {}
    request = {
        "TimePeriod": {"Start": start.isoformat(), "End": end.isoformat()},
        "Granularity": "MONTHLY",
        "GroupBy": [{"Type": "DIMENSION", "Key": "SERVICE"}],
        "Filter": {"Dimensions": {"Key": "SERVICE", "Values": [SAGEMAKER, EC2]}},
    }
    for page in _pages(ce.get_savings_plans_coverage, "NextToken", SavingsPlansCoveragePage, **request):
        for item in page.get("SavingsPlansCoverages", []):
            service = item.get("Attributes", {}).get("SERVICE") or item.get("Attributes", {}).get("service")
            coverage = item.get("Coverage", {})
            totals = spend.setdefault(str(service), [0.0, 0.0])
            totals[0] += float(coverage.get("OnDemandCost") or 0)
            totals[1] += float(coverage.get("TotalCost") or 0)
    return {s: od / total for s, (od, total) in spend.items() if total > 0 and s in (SAGEMAKER, EC2)}


def reservations_share(ce: Any, start: date, end: date) -> float | None:
    """OnDemandHours / TotalRunningHours of EC2 over the period, or None without EC2 hours."""
    hours = [0.0, 0.0]
    request = {
        "TimePeriod": {"Start": start.isoformat(), "End": end.isoformat()},
        "Granularity": "MONTHLY",
        "Filter": {"Dimensions": {"Key": "SERVICE", "Values": [EC2]}},
    }
    for page in _pages(ce.get_reservation_coverage, "NextPageToken", ReservationCoveragePage, **request):
        for by_time in page.get("CoveragesByTime", []):
            covered = by_time.get("Total", {}).get("CoverageHours", {})
            hours[0] += float(covered.get("OnDemandHours") or 0)
            hours[1] += float(covered.get("TotalRunningHours") or 0)
    return hours[0] / hours[1] if hours[1] > 0 else None


def hub_savings(hub: Any) -> tuple[dict[str, float], str]:
    """Cost Optimization Hub's Stop/Delete savings after discounts, an hour, by resource id and ARN; and what was read."""
    try:
        statuses = hub.list_enrollment_statuses().get("items", [])
        if not any(s.get("status") == "Active" for s in statuses):
            return {}, "Cost Optimization Hub: not enrolled, not read"
        mode = hub.get_preferences().get("savingsEstimationMode")
        if mode != "AfterDiscounts":
            return {}, f"Cost Optimization Hub: estimates savings {mode}, not used"
        hourly: dict[str, float] = {}
        request = {"filter": {"actionTypes": ["Stop", "Delete"]}}
        for page in _pages(hub.list_recommendations, "nextToken", RecommendationsPage, **request):
            for rec in page.get("items", []):
                usd = float(rec.get("estimatedMonthlySavings") or 0) / HOURS_A_MONTH
                hourly.update({key: usd for key in (rec.get("resourceId"), rec.get("resourceArn")) if key})
    except ClientError as exc:
        error = exc.response.get("Error", {})
        return {}, f"Cost Optimization Hub: not read ({error.get('Code')}: {error.get('Message', '')})"
    return hourly, "Cost Optimization Hub: Stop/Delete recommendations after discounts, for the resources it names"


def read(ce: Any, hub: Any | None, today: date) -> Discounts:
    """The last 30 days' coverage (Cost Explorer's End is exclusive: up to yesterday), and the Hub's figures
    (hub None: not asked, as in the digest)."""
    start = today - PERIOD
    source = f"Cost Explorer Savings Plans and Reserved Instance coverage, {start} to {today - timedelta(days=1)}"
    hourly, note = hub_savings(hub) if hub is not None else ({}, "")
    try:
        shares = savings_plans_share(ce, start, today)
        ri = reservations_share(ce, start, today)
    except ClientError as exc:
        error = exc.response.get("Error", {})
        said = f"{error.get('Code')}: {error.get('Message', '')}".strip()
        return Discounts(source=source, as_of=today.isoformat(), unavailable=said, hub_hourly=hourly, hub_note=note)
    if ri is not None:
        shares[EC2] = shares.get(EC2, 1.0) * ri
    return Discounts({k: round(v, 4) for k, v in shares.items()}, source, today.isoformat(), hub_hourly=hourly, hub_note=note)


def _kept(path: Path) -> Discounts | None:
    """Today's read, kept by an earlier report; None when there is none or it cannot be read (read again)."""
    try:
        return Discounts(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def cached(ce: Any, hub: Any, now: datetime, directory: Path, account: str) -> Discounts:
    """One read per account and UTC day: a report run twice the same day pays Cost Explorer once."""
    path = directory / f"discounts-{account}-{now.date().isoformat()}.json"
    kept = _kept(path)
    if kept is not None:
        return kept
    found = read(ce, hub, now.date())
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(found)))
    except OSError:
        pass  # no cache: the next report reads again
    return found
