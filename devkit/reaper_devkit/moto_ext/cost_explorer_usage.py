"""Cost Explorer's GetCostAndUsage as the bill report meets it: moto 5.2.5 answers it from a stub
(moto/ce/models.py: a queue of canned results, no grouping, no pages, no refusals).

Written from the API reference:
- Request: TimePeriod {Start, End} (End exclusive), Granularity, Metrics (required), GroupBy (at most
  two; DIMENSION or TAG), NextPageToken.
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_GetCostAndUsage.html
- Answer: ResultsByTime [{TimePeriod, Total, Groups [{Keys, Metrics {name: {Amount, Unit}}}], Estimated}],
  GroupDefinitions, NextPageToken. A tag group's key is `key$value`; spend without the tag, or under a
  tag the admin has not activated as a cost-allocation tag, is keyed `key$` (empty value).
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_ResultByTime.html
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_Group.html
  https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/activating-tags.html
- Refusals (the API reference's Errors): DataUnavailableException (the period has no data yet: here a
  period that starts on or after the last day with data), BillExpirationException, LimitExceededException,
  InvalidNextTokenException; ValidationException for a period whose Start is not before End.

A test seeds what AWS billed with `set_bill` (lines per day, usage type, tags and linked account), which
tags are activated, from which day the figures are still Estimated and until which day there is data;
`refuse_next` makes the next request fail with one of the refusals. Each answer carries at most
PAGE_GROUPS groups, so a day's groups can be split across pages. Patched on moto's response class, so it
works in-process and in server mode.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from moto.ce import responses
from moto.core.exceptions import JsonRESTError

PAGE_GROUPS = 20  # groups per answer (AWS does not document its own): every bill in the kit is read through pagination
REFUSALS = {
    "DataUnavailableException": "Data is not available. Please try to adjust the time period.",
    "BillExpirationException": "The requested report expired. Update the date interval and try again.",
    "LimitExceededException": "You made too many calls in a short period of time. Try again later.",
}
DIMENSIONS = ("USAGE_TYPE", "LINKED_ACCOUNT", "SERVICE")


@dataclass(frozen=True)
class Line:
    """What AWS billed for one usage type on one day (UnblendedCost in USD, UsageQuantity in its unit)."""

    day: date
    usage_type: str
    usd: float
    quantity: float
    tags: dict[str, str] = field(default_factory=dict)
    account: str = ""  # the linked account; empty: the caller's own
    service: str = "Amazon SageMaker"


@dataclass
class _Bill:
    lines: list[Line]
    activated: frozenset[str]
    final_before: date  # days from this one on are Estimated
    data_until: date  # days from this one on have no data yet


_bills: dict[str, _Bill] = {}  # account -> its seeded bill
_refusals: dict[str, list[str]] = {}
calls: list[dict[str, Any]] = []  # every GetCostAndUsage request, answered or refused (what Cost Explorer would charge)


def set_bill(account_id: str, lines: list[Line], *, activated: tuple[str, ...] = (), final_before: date, data_until: date) -> None:
    _bills[account_id] = _Bill(list(lines), frozenset(activated), final_before, data_until)


def refuse_next(account_id: str, code: str) -> None:
    assert code in REFUSALS, code
    _refusals.setdefault(account_id, []).append(code)


def reset() -> None:
    _bills.clear()
    _refusals.clear()
    calls.clear()


def _keys(line: Line, group_by: list[dict[str, str]], bill: _Bill, own: str) -> tuple[str, ...]:
    keys = []
    for g in group_by:
        if g["Type"] == "TAG":
            value = line.tags.get(g["Key"], "") if g["Key"] in bill.activated else ""
            keys.append(f"{g['Key']}${value}")
        elif g["Key"] == "USAGE_TYPE":
            keys.append(line.usage_type)
        elif g["Key"] == "LINKED_ACCOUNT":
            keys.append(line.account or own)
        else:
            keys.append(line.service)
    return tuple(keys)


def _check(params: dict[str, Any]) -> tuple[date, date, list[dict[str, str]]]:
    start, end = date.fromisoformat(params["TimePeriod"]["Start"]), date.fromisoformat(params["TimePeriod"]["End"])
    if start >= end:
        raise JsonRESTError("ValidationException", "Start date must be before end date")
    if params.get("Granularity") != "DAILY" or not params.get("Metrics"):
        raise JsonRESTError("ValidationException", "the kit answers DAILY granularity with Metrics only")
    group_by = list(params.get("GroupBy") or [])
    if len(group_by) > 2 or any(g["Type"] == "DIMENSION" and g["Key"] not in DIMENSIONS for g in group_by):
        raise JsonRESTError("ValidationException", "Group Definition is invalid")
    return start, end, group_by


def _days(params: dict[str, Any], bill: _Bill, own: str) -> list[dict[str, Any]]:
    start, end, group_by = _check(params)
    if start >= bill.data_until:
        raise JsonRESTError("DataUnavailableException", REFUSALS["DataUnavailableException"])
    out, day = [], start
    while day < min(end, bill.data_until):
        sums: dict[tuple[str, ...], list[float]] = {}
        for line in (x for x in bill.lines if x.day == day):
            total = sums.setdefault(_keys(line, group_by, bill, own), [0.0, 0.0])
            total[0] += line.usd
            total[1] += line.quantity
        groups = [
            {
                "Keys": list(k),
                "Metrics": {
                    m: {"Amount": f"{v[0] if m.endswith('Cost') else v[1]:.6f}", "Unit": "USD" if m.endswith("Cost") else "N/A"}
                    for m in params["Metrics"]
                },
            }
            for k, v in sorted(sums.items())
        ]
        period = {"Start": day.isoformat(), "End": (day + timedelta(days=1)).isoformat()}
        out.append({"TimePeriod": period, "Total": {}, "Groups": groups, "Estimated": day >= bill.final_before})
        day += timedelta(days=1)
    return out


def _page(days: list[dict[str, Any]], token: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """Cut the days into answers of at most PAGE_GROUPS groups; a day split across answers appears in each."""
    flat = [(i, g) for i, d in enumerate(days) for g in d["Groups"]] or []
    try:
        first = int(token or 0)
    except ValueError:
        raise JsonRESTError("InvalidNextTokenException", "The pagination token is invalid.") from None
    if not flat:
        return ([{**d, "Groups": []} for d in days] if not token else []), None
    chunk = flat[first : first + PAGE_GROUPS]
    page: dict[int, dict[str, Any]] = {}
    for i, g in chunk:
        page.setdefault(i, {**days[i], "Groups": []})["Groups"].append(g)
    later = first + PAGE_GROUPS
    return list(page.values()), (str(later) if later < len(flat) else None)


def get_cost_and_usage(self: Any) -> str:
    params = json.loads(self.body)
    own = self.current_account
    calls.append(params)
    pending = _refusals.get(own)
    if pending:
        code = pending.pop(0)
        raise JsonRESTError(code, REFUSALS[code])
    bill = _bills.get(own)
    if bill is None:
        raise JsonRESTError("DataUnavailableException", REFUSALS["DataUnavailableException"])
    page, token = _page(_days(params, bill, own), params.get("NextPageToken"))
    answer: dict[str, Any] = {"ResultsByTime": page, "GroupDefinitions": params.get("GroupBy") or []}
    if token:
        answer["NextPageToken"] = token
    return json.dumps(answer)


def apply() -> None:
    if getattr(responses.CostExplorerResponse, "_reaper_usage", False):
        return
    responses.CostExplorerResponse.get_cost_and_usage = get_cost_and_usage  # type: ignore[method-assign]
    responses.CostExplorerResponse._reaper_usage = True  # type: ignore[attr-defined]
