"""What AWS billed, read from Cost Explorer (GetCostAndUsage) for `reaper report --bill` (docs/bill.md).

One request per report, plus its pages: DAILY, UnblendedCost and UsageQuantity, grouped by USAGE_TYPE
and the `ml:stage` cost-allocation tag (`ml:project` with `--by project`), or, across the organisation,
by LINKED_ACCOUNT and USAGE_TYPE (GroupBy takes two). Cost Explorer charges $0.01 per paginated request, so the answer is kept for the
day in the action-log table and a second report that day reads it from there.
Refusals (no data yet, an expired bill, too many calls) are said, never guessed around.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Protocol, TypedDict, cast

from botocore.exceptions import ClientError

from reaper.core.timeutil import as_utc

STAGE_TAG = "ml:stage"
PROJECT_TAG = "ml:project"  # `reaper report --bill --by project`: the request's tag grouping instead of ml:stage
METRICS = ("UnblendedCost", "UsageQuantity")
PERMISSIONS = ("ce:GetCostAndUsage",)  # the CLI user's, never a function's (tests/unit/test_iam.py)
DIGEST_PERIOD = timedelta(days=30)  # the digest's line reads what `reaper report --bill` reads by default
MAX_PAGES = 50  # a report reads at most this many pages ($0.50); more is said, not read
CACHE_LIMIT = 350_000  # bytes: a DynamoDB item holds 400 KB
REFUSED = {
    "DataUnavailableException": "Cost Explorer has no data for this period yet (a new account, or a period that starts today)",
    "BillExpirationException": "Cost Explorer says the bill for this period has expired: ask for a shorter --since",
    "LimitExceededException": "Cost Explorer refused: too many requests in a short time; try again in a minute",
}


class BillCache(Protocol):
    def cached_bill(self, day: str, request_key: str) -> bytes | None: ...

    def put_bill(self, day: str, request_key: str, answer: bytes, now: datetime) -> None: ...


@dataclass(frozen=True)
class BillLine:
    """One group of one day: what was billed for one usage type (and stage, or linked account)."""

    day: date
    usage_type: str
    usd: float
    quantity: float
    estimated: bool
    stage: str | None = None  # None: no ml:stage value on the bill (untagged, the tag not activated, or not asked)
    account: str = ""
    project: str | None = None  # the ml:project value, when the bill was grouped by it (--by project)


@dataclass
class Bill:
    start: date
    end: date  # exclusive, as Cost Explorer's TimePeriod
    org: bool
    lines: list[BillLine] = field(default_factory=list)
    tag: str | None = STAGE_TAG  # the cost-allocation tag the request grouped by (None across the organisation)
    requests: int = 0  # paid requests this report made (0: read from the day's cache)
    refused: str | None = None  # why there is no bill: said in the report
    truncated: bool = False

    def tag_value(self, line: BillLine) -> str | None:
        """The line's value of the tag this bill was grouped by (None: untagged, or the tag not activated)."""
        return line.project if self.tag == PROJECT_TAG else line.stage

    @property
    def tag_seen(self) -> bool:
        """Any value of the grouped tag on the bill: an activated tag that something carries."""
        return any(self.tag_value(line) for line in self.lines)

    @property
    def estimated_days(self) -> list[date]:
        return sorted({line.day for line in self.lines if line.estimated})

    def total(self) -> float:
        return sum(line.usd for line in self.lines)


class DateInterval(TypedDict):
    """https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_DateInterval.html (End exclusive)."""

    Start: str
    End: str


class GroupDefinition(TypedDict):
    """https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_GroupDefinition.html"""

    Type: str
    Key: str


class GetCostAndUsageRequest(TypedDict):
    """The members sent of https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_GetCostAndUsage.html"""

    TimePeriod: DateInterval
    Granularity: str
    Metrics: list[str]
    GroupBy: list[GroupDefinition]


class MetricValue(TypedDict, total=False):
    """https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_MetricValue.html (Amount: a string)."""

    Amount: str
    Unit: str


class Group(TypedDict, total=False):
    """https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_Group.html"""

    Keys: list[str]
    Metrics: dict[str, MetricValue]


class ResultByTime(TypedDict, total=False):
    """https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_ResultByTime.html"""

    TimePeriod: DateInterval
    Groups: list[Group]
    Estimated: bool


class GetCostAndUsageResponse(TypedDict, total=False):
    ResultsByTime: list[ResultByTime]
    NextPageToken: str


def request(start: date, end: date, org: bool, tag: str = STAGE_TAG) -> GetCostAndUsageRequest:
    group_by: list[GroupDefinition] = [{"Type": "DIMENSION", "Key": "LINKED_ACCOUNT"}] if org else []
    group_by.append({"Type": "DIMENSION", "Key": "USAGE_TYPE"})
    if not org:
        group_by.append({"Type": "TAG", "Key": tag})
    return {
        "TimePeriod": {"Start": start.isoformat(), "End": end.isoformat()},
        "Granularity": "DAILY",
        "Metrics": list(METRICS),
        "GroupBy": group_by,
    }


def period(since: datetime, now: datetime) -> tuple[date, date]:
    """Whole UTC days from `since`'s day to yesterday: today is never whole (and often not yet there)."""
    end = as_utc(now).date()
    return min(as_utc(since).date(), end - timedelta(days=1)), end


def read(ce: Any, cache: BillCache | None, since: datetime, now: datetime, org: bool, tag: str = STAGE_TAG) -> Bill:
    """`tag`: the cost-allocation tag of the request's second grouping (ml:stage, or ml:project); not across the
    organisation, whose two groupings are the linked account and the usage type."""
    start, end = period(since, now)
    bill = Bill(start, end, org, tag=None if org else tag)
    ask = request(start, end, org, tag)
    key = hashlib.sha256(json.dumps(ask, sort_keys=True).encode()).hexdigest()
    day = as_utc(now).date().isoformat()
    kept = cache.cached_bill(day, key) if cache is not None else None
    if kept is not None:
        bill.lines = _parse(json.loads(zlib.decompress(kept)), org, tag)
        return bill
    try:
        results = _pages(ce, ask, bill)
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code not in REFUSED:
            raise
        bill.refused = REFUSED[code]
        return bill
    bill.lines = _parse(results, org, tag)
    packed = zlib.compress(json.dumps(results).encode())
    if cache is not None and not bill.truncated and len(packed) <= CACHE_LIMIT:
        cache.put_bill(day, key, packed, now)
    return bill


def _pages(ce: Any, ask: GetCostAndUsageRequest, bill: Bill) -> list[ResultByTime]:
    results: list[ResultByTime] = []
    token: str | None = None
    while True:
        page = cast(GetCostAndUsageResponse, ce.get_cost_and_usage(**ask, **({"NextPageToken": token} if token else {})))
        bill.requests += 1
        results.extend(page.get("ResultsByTime", []))
        token = page.get("NextPageToken")
        if not token:
            return results
        if bill.requests >= MAX_PAGES:
            bill.truncated = True
            return results


def _parse(results: list[ResultByTime], org: bool, tag: str = STAGE_TAG) -> list[BillLine]:
    lines = []
    for result in results:
        day = date.fromisoformat(result["TimePeriod"]["Start"])
        estimated = bool(result.get("Estimated"))
        for group in result.get("Groups", []):
            keys = list(group.get("Keys", []))
            metrics = group.get("Metrics", {})
            usd = float(metrics.get("UnblendedCost", {}).get("Amount", 0) or 0)
            quantity = float(metrics.get("UsageQuantity", {}).get("Amount", 0) or 0)
            if org:
                lines.append(BillLine(day, keys[1], usd, quantity, estimated, None, keys[0]))
                continue
            value = _tag_value(keys[1] if len(keys) > 1 else "")
            stage, project = (None, value) if tag == PROJECT_TAG else (value, None)
            lines.append(BillLine(day, keys[0], usd, quantity, estimated, stage, "", project))
    return lines


def _tag_value(key: str) -> str | None:
    """`ml:stage$dev` -> "dev"; `ml:stage$` (untagged, or the tag not activated) -> None."""
    _, _, value = key.partition("$")
    return value.strip() or None
