"""Cost Explorer's coverage reads, which moto 5.2.5 lacks: GetSavingsPlansCoverage, GetReservationCoverage.

Written from the API reference:
- GetSavingsPlansCoverage: TimePeriod (End exclusive), Granularity, GroupBy, Filter, MaxResults,
  NextToken; answers SavingsPlansCoverages [{Attributes, Coverage {SpendCoveredBySavingsPlans,
  OnDemandCost, TotalCost, CoveragePercentage}, TimePeriod}] and NextToken.
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_GetSavingsPlansCoverage.html
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_SavingsPlansCoverageData.html
- GetReservationCoverage: the same request with NextPageToken; answers CoveragesByTime [{TimePeriod,
  Groups, Total {CoverageHours {OnDemandHours, ReservedHours, TotalRunningHours,
  CoverageHoursPercentage}}}], Total and NextPageToken.
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_GetReservationCoverage.html
- Refusals: DataUnavailableException ("The requested data is unavailable") for an account with no
  coverage data; ValidationException for a period whose Start is not before End;
  AccessDeniedException when the kit is told the caller may not read Cost Explorer (IAM, which moto
  does not enforce by default).

A test seeds what Cost Explorer would have computed with `set_coverage`; each month of the asked
period gets an equal part. PAGE_SIZE makes every answer paginate (MaxResults wins when smaller).
Patched on moto's ce response and backend classes, so it works in-process and in server mode.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from moto.ce import models, responses
from moto.core.exceptions import JsonRESTError

PAGE_SIZE = 1  # one item a page: every read in the kit goes through pagination
_coverage: dict[str, dict[str, Any]] = {}  # account -> what set_coverage seeded
_denied: set[str] = set()
calls: list[str] = []  # every coverage request answered or refused, in order (what Cost Explorer would bill)


class DataUnavailableException(JsonRESTError):
    def __init__(self) -> None:
        super().__init__("DataUnavailableException", "The requested data is unavailable.")


class AccessDeniedException(JsonRESTError):
    def __init__(self, account: str, action: str) -> None:
        super().__init__("AccessDeniedException", f"User: arn:aws:iam::{account}:user/kit is not authorized to perform: ce:{action}")


def set_coverage(account_id: str, spend: dict[str, tuple[float, float]], ec2_hours: tuple[float, float] | None = None) -> None:
    """spend: service -> (OnDemandCost, TotalCost) over the period; ec2_hours: (OnDemandHours, TotalRunningHours)."""
    _coverage[account_id] = {"spend": dict(spend), "ec2_hours": ec2_hours}


def deny(account_id: str) -> None:
    _denied.add(account_id)


def reset() -> None:
    _coverage.clear()
    _denied.clear()
    calls.clear()


def _months(period: dict[str, str]) -> list[dict[str, str]]:
    start, end = date.fromisoformat(period["Start"]), date.fromisoformat(period["End"])
    if start >= end:
        raise JsonRESTError("ValidationException", "Start date must be before end date")
    months, cursor = [], start
    while cursor < end:
        following = date(cursor.year + cursor.month // 12, cursor.month % 12 + 1, 1)
        months.append({"Start": cursor.isoformat(), "End": min(following, end).isoformat()})
        cursor = following
    return months


def _page(items: list[dict[str, Any]], token: str | None, max_results: int | None) -> tuple[list[dict[str, Any]], str | None]:
    size = min(PAGE_SIZE, max_results or PAGE_SIZE)
    first = int(token or 0)
    later = first + size if first + size < len(items) else None
    return items[first : first + size], None if later is None else str(later)


def _seeded(account: str, action: str) -> dict[str, Any]:
    calls.append(action)
    if account in _denied:
        raise AccessDeniedException(account, action)
    if account not in _coverage:
        raise DataUnavailableException()
    return _coverage[account]


def _wanted(params: dict[str, Any]) -> set[str] | None:
    dims = (params.get("Filter") or {}).get("Dimensions") or {}
    return set(dims.get("Values", [])) if dims.get("Key") == "SERVICE" else None


def savings_plans_coverage(self: Any) -> str:
    params = json.loads(self.body)
    seeded = _seeded(self.current_account, "GetSavingsPlansCoverage")
    months, wanted = _months(params["TimePeriod"]), _wanted(params)
    items = []
    for month in months:
        for service, (on_demand, total) in sorted(seeded["spend"].items()):
            if wanted is None or service in wanted:
                od, tot = on_demand / len(months), total / len(months)
                coverage = {"SpendCoveredBySavingsPlans": f"{tot - od:.2f}", "OnDemandCost": f"{od:.2f}", "TotalCost": f"{tot:.2f}"}
                coverage["CoveragePercentage"] = f"{100 * (tot - od) / tot:.2f}" if tot else "0"
                items.append({"Attributes": {"SERVICE": service}, "Coverage": coverage, "TimePeriod": month})
    page, token = _page(items, params.get("NextToken"), params.get("MaxResults"))
    return json.dumps({"SavingsPlansCoverages": page, **({"NextToken": token} if token else {})})


def reservation_coverage(self: Any) -> str:
    params = json.loads(self.body)
    seeded = _seeded(self.current_account, "GetReservationCoverage")
    months = _months(params["TimePeriod"])
    on_demand, running = seeded["ec2_hours"] or (0.0, 0.0)
    items = []
    for month in months:
        od, run = on_demand / len(months), running / len(months)
        hours = {"OnDemandHours": f"{od:.2f}", "ReservedHours": f"{run - od:.2f}", "TotalRunningHours": f"{run:.2f}"}
        hours["CoverageHoursPercentage"] = f"{100 * (run - od) / run:.2f}" if run else "0"
        items.append({"TimePeriod": month, "Groups": [], "Total": {"CoverageHours": hours}})
    page, token = _page(items, params.get("NextPageToken"), params.get("MaxResults"))
    total = {"CoverageHours": {"OnDemandHours": f"{on_demand:.2f}", "TotalRunningHours": f"{running:.2f}"}}
    return json.dumps({"CoveragesByTime": page, "Total": total, **({"NextPageToken": token} if token else {})})


def apply() -> None:
    if getattr(responses.CostExplorerResponse, "_reaper_coverage", False):
        return
    responses.CostExplorerResponse.get_savings_plans_coverage = savings_plans_coverage  # type: ignore[attr-defined]
    responses.CostExplorerResponse.get_reservation_coverage = reservation_coverage  # type: ignore[attr-defined]
    responses.CostExplorerResponse._reaper_coverage = True  # type: ignore[attr-defined]
    models.CostExplorerBackend.reaper_coverage = _coverage  # type: ignore[attr-defined]  # visible beside the backend
