"""Unit costs for the week, beside last week's (`reaper report --units`, a line in the digest; docs/unit-costs.md).

- Cost per training run, by `ml:project`: each training job that ended in the week costs
  BillableTimeInSeconds x InstanceCount x the instance type's list price; managed spot's saving is
  (TrainingTimeInSeconds - BillableTimeInSeconds) at the same price (AWS: "You can calculate the
  savings from using managed spot training using the formula (1 - BillableTimeInSeconds /
  TrainingTimeInSeconds) * 100", API_DescribeTrainingJob). One paginated Search over TrainingJob
  (100 a page, tags included) reads both weeks.
- Cost per 1,000 inferences, per endpoint: its hourly list price (each variant's instance type x its
  current instance count) x its hours in service in the week, over the week's `Invocations` (Sum,
  AWS/SageMaker, per variant). Endpoints from one paginated Search, their configs one
  DescribeEndpointConfig each (no batch read exists), the metrics in GetMetricData batches.
- Cost per 1,000 tokens, per Bedrock model: `InputTokenCount` and `OutputTokenCount` (Sum,
  AWS/Bedrock, by ModelId; the models from ListMetrics) x the model's price per 1,000 tokens.
  https://docs.aws.amazon.com/bedrock/latest/userguide/monitoring.html
- A Provisioned Throughput's cost per 1,000 tokens: its model-unit hours in the week (model units x
  hours in service) x the price per model-unit hour, over its tokens (the same metrics, ModelId = its
  ARN). The Provisioned Throughputs from one paginated ListProvisionedModelThroughputs.

Money is AWS's list price (reaper.aws.pricing), with its source; what has no price is counted as
unpriced and never as $0: a unit cost is the priced cost over the priced units, and says how many
units it leaves out. Bedrock token prices come from the Pricer (AmazonBedrock in the Price List API,
`<model id>/input` and `<model id>/output`, USD per 1,000 tokens); the shipped copy has no Bedrock rows,
so without the API a model is unpriced and its tokens are still counted. AWS's Price List holds no
entry the reaper can read for a Provisioned Throughput's model-unit hour: it is unpriced unless the admin
sets `BedrockModelUnitHourlyUsd`, an explicit override every figure it makes names as such.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast

from reaper.aws import metrics, pricing
from reaper.aws.sagemaker_shapes import Endpoint, Tag, TrainingJob
from reaper.core.price import ADMIN_OVERRIDE, Price
from reaper.core.timeutil import as_utc

WEEK = timedelta(days=7)
PAGE = 100
NO_PROJECT = "(no project)"
BEDROCK_TOKENS = pricing.BEDROCK_TOKENS  # "<model id>/input|output" -> USD per 1,000 tokens
BEDROCK_PROVISIONED = "bedrock-provisioned"  # "<model id>/<commitment or none>" -> USD per model-unit hour
PERMISSIONS = (
    "sagemaker:Search",
    "sagemaker:DescribeEndpointConfig",
    "cloudwatch:GetMetricData",
    "cloudwatch:ListMetrics",
    "bedrock:ListProvisionedModelThroughputs",
)
TOKEN_METRICS = ("InputTokenCount", "OutputTokenCount")
OVERRIDE_SOURCE = f"{ADMIN_OVERRIDE} (BedrockModelUnitHourlyUsd)"

# (section, region, key) -> (usd, source) or None: the one place unit costs read prices
PriceBook = Callable[[str, str, str | None], tuple[float, str] | None]


def list_price(section: str, region: str, key: str | None) -> tuple[float, str] | None:
    """A price and where it comes from, from reaper.aws.pricing's table (None: unpriced)."""
    found = pricing.row(section, region, key)
    usd = None if found is None else found.get("usd")
    if found is None or usd is None:
        return None
    return float(usd), f"{found.get('source') or 'price table'} ({found.get('as_of') or 'undated'})"


def price_book(pricer: pricing.Pricer, unit_hour_override: float = 0.0) -> PriceBook:
    """The runtime's prices (the Price List API, cached, or the shipped copy: docs/prices.md) as a PriceBook.

    `unit_hour_override`: the admin's BedrockModelUnitHourlyUsd (0: none), the only price a Provisioned
    Throughput's model-unit hour has (docs/unit-costs.md); its figures say it is the admin's."""

    def book(section: str, region: str, key: str | None) -> tuple[float, str] | None:
        found: Price | None
        if section == BEDROCK_TOKENS and key:
            model, _, direction = key.rpartition("/")
            found = pricer.bedrock_tokens(region, model, direction)
        elif section == BEDROCK_PROVISIONED:
            found = admin_unit_hour(unit_hour_override)
        elif section in (pricing.TRAINING, pricing.HOSTING):
            found = pricer.hourly(section, region, key)
        else:
            return list_price(section, region, key)
        return None if found is None else (found.usd, found.label)

    return book


def admin_unit_hour(usd: float) -> Price | None:
    """The admin's price per Bedrock model-unit hour, named as theirs; None (unpriced) when not set."""
    return Price(usd, OVERRIDE_SOURCE) if usd > 0 else None


@dataclass
class Tally:
    """One group's week: priced cost over priced units, and what had no price."""

    cost_usd: float = 0.0
    units: float = 0.0  # priced units (runs, thousands of inferences or tokens)
    unpriced: float = 0.0  # units whose cost is not known
    saved_usd: float = 0.0  # managed spot's saving (training)
    hours: float = 0.0  # model-unit hours (Provisioned Throughput)
    sources: set[str] = field(default_factory=set)

    def add(self, units: float, cost: float | None, source: str | None = None) -> None:
        if cost is None:
            self.unpriced += units
            return
        self.units += units
        self.cost_usd += cost
        if source:
            self.sources.add(source)

    @property
    def per_unit(self) -> float | None:
        return None if self.units <= 0 else self.cost_usd / self.units


@dataclass(frozen=True)
class UnitCost:
    metric: str  # training-run | 1k-inferences | 1k-tokens
    group: str  # the project, endpoint or model
    this_week: Tally
    last_week: Tally

    @property
    def change_pct(self) -> float | None:
        now, before = self.this_week.per_unit, self.last_week.per_unit
        return None if now is None or not before else round(100.0 * (now - before) / before, 1)

    def as_json(self) -> dict[str, Any]:
        def week(t: Tally) -> dict[str, Any]:
            per = t.per_unit
            return {
                "cost_usd": round(t.cost_usd, 4),
                "units": round(t.units, 4),
                "unpriced_units": round(t.unpriced, 4),
                "per_unit_usd": None if per is None else round(per, 4),
                "spot_saved_usd": round(t.saved_usd, 4),
                "model_unit_hours": round(t.hours, 4),
                "price_sources": sorted(t.sources),
            }

        return {
            "metric": self.metric,
            "group": self.group,
            "this_week": week(self.this_week),
            "last_week": week(self.last_week),
            "change_pct": self.change_pct,
        }


@dataclass(frozen=True)
class Weeks:
    start: datetime  # last week's start
    middle: datetime  # this week's start
    end: datetime

    @classmethod
    def ending(cls, now: datetime) -> Weeks:
        end = as_utc(now).replace(minute=0, second=0, microsecond=0)
        return cls(end - 2 * WEEK, end - WEEK, end)

    def which(self, at: datetime) -> int | None:
        """1 this week, 0 last week, None outside both."""
        at = as_utc(at)
        if self.middle <= at < self.end:
            return 1
        if self.start <= at < self.middle:
            return 0
        return None

    def hours(self, since: datetime | None, week: int) -> float:
        lo, hi = (self.middle, self.end) if week else (self.start, self.middle)
        lo = max(lo, as_utc(since)) if since else lo
        return max(0.0, (hi - lo).total_seconds() / 3600.0)


def _project(tags: Iterable[Tag]) -> str:
    for t in tags or []:
        if t.get("Key", "").strip().lower() == "ml:project" and t.get("Value", "").strip():
            return t["Value"].strip()
    return NO_PROJECT


Found = TypeVar("Found", TrainingJob, Endpoint)


def _search(sm: Any, resource: str, shape: type[Found], filters: list[dict[str, str]] | None = None) -> Iterator[Found]:
    """Search's records of `resource` (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_SearchRecord.html)."""
    expression = {"SearchExpression": {"Filters": filters}} if filters else {}
    for page in sm.get_paginator("search").paginate(Resource=resource, PaginationConfig={"PageSize": PAGE}, **expression):
        for item in page.get("Results", []):
            if item.get(resource):
                yield cast(Found, item[resource])


def training_runs(sm: Any, region: str, weeks: Weeks, prices: PriceBook = list_price) -> list[UnitCost]:
    """Cost per training run by ml:project, for the jobs that ended in either week."""
    since = weeks.start.strftime("%Y-%m-%dT%H:%M:%SZ")
    tallies: dict[str, tuple[Tally, Tally]] = {}
    for job in _search(sm, "TrainingJob", TrainingJob, [{"Name": "TrainingEndTime", "Operator": "GreaterThanOrEqualTo", "Value": since}]):
        ended = job.get("TrainingEndTime")
        week = None if ended is None else weeks.which(ended)
        if week is None:
            continue
        tally = tallies.setdefault(_project(job.get("Tags") or []), (Tally(), Tally()))[week]
        config = job.get("ResourceConfig") or {}
        count = int(config.get("InstanceCount") or 1)
        price = prices(pricing.TRAINING, region, config.get("InstanceType"))
        billable = job.get("BillableTimeInSeconds")
        if price is None or billable is None:
            tally.add(1, None)
            continue
        usd, source = price
        tally.add(1, billable / 3600.0 * count * usd, source)
        trained = job.get("TrainingTimeInSeconds")
        if job.get("EnableManagedSpotTraining") and trained is not None and trained > billable:
            tally.saved_usd += (trained - billable) / 3600.0 * count * usd
    return [UnitCost("training-run", p, t[1], t[0]) for p, t in sorted(tallies.items())]


def _endpoint_hourly(sm: Any, region: str, endpoint: Endpoint, prices: PriceBook) -> tuple[float, str] | None:
    """Each variant's instance price x its current count; None when any variant has no price (or none has instances)."""
    config = sm.describe_endpoint_config(EndpointConfigName=endpoint["EndpointConfigName"])
    types = {v["VariantName"]: v.get("InstanceType") for v in config.get("ProductionVariants", [])}
    total, sources = 0.0, []
    for variant in endpoint.get("ProductionVariants") or []:
        price = prices(pricing.HOSTING, region, types.get(variant["VariantName"]))
        if price is None:
            return None
        total += price[0] * int(variant.get("CurrentInstanceCount") or 0)
        sources.append(price[1])
    return (total, sources[0]) if sources else None


def inferences(sm: Any, cloudwatch: Any, region: str, weeks: Weeks, prices: PriceBook = list_price) -> list[UnitCost]:
    """Cost per 1,000 inferences per endpoint in service: its priced hours over the week's Invocations."""
    endpoints = [e for e in _search(sm, "Endpoint", Endpoint) if e.get("EndpointStatus") == "InService"]
    queries = [
        metrics.MetricQuery(
            e["EndpointName"],
            "AWS/SageMaker",
            "Invocations",
            (("EndpointName", e["EndpointName"]), ("VariantName", v["VariantName"])),
            stat="Sum",
            period=3600,
        )
        for e in endpoints
        for v in e.get("ProductionVariants") or []
    ]
    series = metrics.fetch(cloudwatch, queries, weeks.start, weeks.end) if queries else {}
    out = []
    for e in endpoints:
        name = e["EndpointName"]
        calls = [0.0, 0.0]
        for at, value in series.get(name, []):
            week = weeks.which(at)
            if week is not None:
                calls[week] += value
        hourly = _endpoint_hourly(sm, region, e, prices)
        pair = (Tally(), Tally())
        for week in (0, 1):
            cost = None if hourly is None else hourly[0] * weeks.hours(e.get("CreationTime"), week)
            pair[week].add(calls[week] / 1000.0, cost, None if hourly is None else hourly[1])
        out.append(UnitCost("1k-inferences", name, pair[1], pair[0]))
    return out


def _bedrock_models(cloudwatch: Any) -> list[str]:
    models: set[str] = set()
    for page in cloudwatch.get_paginator("list_metrics").paginate(Namespace="AWS/Bedrock", MetricName="InputTokenCount"):
        for m in page.get("Metrics", []):
            models.update(d["Value"] for d in m.get("Dimensions", []) if d["Name"] == "ModelId")
    return sorted(m for m in models if ":provisioned-model/" not in m)  # Provisioned Throughput: priced by the hour


def tokens(cloudwatch: Any, region: str, weeks: Weeks, prices: PriceBook = list_price) -> list[UnitCost]:
    """Cost per 1,000 tokens per Bedrock model (on-demand token metrics x the model's token prices)."""
    models = _bedrock_models(cloudwatch)
    queries = [
        metrics.MetricQuery(f"{model}|{metric}", "AWS/Bedrock", metric, (("ModelId", model),), stat="Sum", period=3600)
        for model in models
        for metric in ("InputTokenCount", "OutputTokenCount")
    ]
    series = metrics.fetch(cloudwatch, queries, weeks.start, weeks.end) if queries else {}
    out = []
    for model in models:
        pair = (Tally(), Tally())
        for direction, metric in (("input", "InputTokenCount"), ("output", "OutputTokenCount")):
            price = prices(BEDROCK_TOKENS, region, f"{model}/{direction}")
            counted = [0.0, 0.0]
            for at, value in series.get(f"{model}|{metric}", []):
                week = weeks.which(at)
                if week is not None:
                    counted[week] += value
            for week in (0, 1):
                thousands = counted[week] / 1000.0
                pair[week].add(thousands, None if price is None else thousands * price[0], None if price is None else price[1])
        out.append(UnitCost("1k-tokens", model, pair[1], pair[0]))
    return out


def _token_sums(cloudwatch: Any, ids: list[str], weeks: Weeks) -> dict[str, list[float]]:
    """{model id: [last week's tokens, this week's]}, input and output together."""
    queries = [
        metrics.MetricQuery(i, "AWS/Bedrock", metric, (("ModelId", i),), stat="Sum", period=3600) for i in ids for metric in TOKEN_METRICS
    ]
    series = metrics.fetch(cloudwatch, queries, weeks.start, weeks.end) if queries else {}
    sums = {i: [0.0, 0.0] for i in ids}
    for i in ids:
        for at, value in series.get(i, []):
            week = weeks.which(at)
            if week is not None:
                sums[i][week] += value
    return sums


def provisioned(bedrock: Any, cloudwatch: Any, region: str, weeks: Weeks, prices: PriceBook = list_price) -> list[UnitCost]:
    """Cost per 1,000 tokens per Provisioned Throughput: its model-unit hours x their price, over its tokens."""
    pts = [
        s
        for page in bedrock.get_paginator("list_provisioned_model_throughputs").paginate(PaginationConfig={"PageSize": PAGE})
        for s in page.get("provisionedModelSummaries", [])
    ]
    sums = _token_sums(cloudwatch, [p["provisionedModelArn"] for p in pts], weeks)
    out = []
    for p in pts:
        model = str(p.get("foundationModelArn") or p.get("modelArn") or "").rsplit("/", 1)[-1]
        price = prices(BEDROCK_PROVISIONED, region, f"{model}/{p.get('commitmentDuration') or 'none'}")
        pair = (Tally(), Tally())
        for week in (0, 1):
            hours = weeks.hours(p.get("creationTime"), week) * int(p.get("modelUnits") or 0)
            pair[week].hours = hours
            cost = None if price is None else hours * price[0]
            pair[week].add(sums[p["provisionedModelArn"]][week] / 1000.0, cost, None if price is None else price[1])
        out.append(UnitCost("1k-tokens", str(p.get("provisionedModelName") or p["provisionedModelArn"]), pair[1], pair[0]))
    return out


def read(sm: Any, cloudwatch: Any, region: str, now: datetime, prices: PriceBook = list_price, bedrock: Any = None) -> list[UnitCost]:
    weeks = Weeks.ending(now)
    found = [
        *training_runs(sm, region, weeks, prices),
        *inferences(sm, cloudwatch, region, weeks, prices),
        *tokens(cloudwatch, region, weeks, prices),
    ]
    return found + (provisioned(bedrock, cloudwatch, region, weeks, prices) if bedrock is not None else [])


LABEL = {"training-run": "per training run", "1k-inferences": "per 1,000 inferences", "1k-tokens": "per 1,000 tokens"}


def money(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def per_unit(t: Tally) -> str:
    if t.per_unit is None and t.unpriced == 0:
        return f"${t.cost_usd:,.2f} for no units" if t.cost_usd else "nothing"
    return money(t.per_unit)


def line(u: UnitCost) -> str:
    """One unit cost in words (plain text: the caller escapes it for Slack)."""
    change = "" if u.change_pct is None else f" ({u.change_pct:+.1f}% on last week)"
    left = f", {u.this_week.unpriced:g} unpriced left out" if u.this_week.unpriced else ""
    saved = f", spot saved ${u.this_week.saved_usd:,.2f}" if u.this_week.saved_usd else ""
    return f"{u.group} {per_unit(u.this_week)} {LABEL[u.metric]}{change}{left}{saved}"


def digest_line(units: list[UnitCost], most: int = 3) -> str | None:
    """The digest's one line: the costliest groups of each metric this week."""
    if not units:
        return None
    ranked = sorted(units, key=lambda u: -u.this_week.cost_usd)
    return "; ".join(line(u) for u in ranked[:most])
