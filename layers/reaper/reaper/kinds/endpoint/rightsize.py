"""Right-size advice for endpoints, from a week of their use (docs/kinds/endpoint.md#right-size-advice). Pure.

Advice only, never an action: `reaper plan` and the daily digest show it; no sweep acts on it.

- Sparse traffic (requests in at most a quarter of the week's hours, the endpoint in service all week):
  serverless inference, for "Workloads that have idle periods between traffic spikes and can tolerate cold
  starts"; asynchronous inference instead for a GPU instance (serverless inference has no GPUs) or long model
  latency ("Requests with large payload sizes up to 1GB, long processing times, and near real-time latency
  requirements"). https://docs.aws.amazon.com/sagemaker/latest/dg/how-it-works-deployment.html
- Under-used instances (every hour of the week under a quarter of its vCPUs and GPUs busy and under half
  of its memory and GPU memory used): the next smaller size of the same family that AWS's price list prices.
  CloudWatch's /aws/sagemaker/Endpoints CPUUtilization and GPUUtilization are the sum over cores or GPUs
  (0-100 % each), GPUMemoryUtilization too; MemoryUtilization is 0-100 %; with several instances, the average
  over them (one instance's figure). vCPUs are read from the size's name (large 2, xlarge 4, Nxlarge 4N).
  https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html#cloudwatch-metrics-endpoint-instance

Money is the Pricer's (docs/prices.md): the instances' list price per hour x 730 a month. Serverless inference
is priced per GB-second of compute and per GB of data processed; the price list the reaper reads has no such
rows, so its cost is "unpriced": the advice then gives the instances' cost as the most it can save, never a
serverless figure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypedDict

from reaper.core.model import HOURS_PER_MONTH
from reaper.core.price import Price
from reaper.kinds.endpoint.model import is_accelerated

WEEK_HOURS = 168
SPARSE_SHARE = 0.25  # requests in at most this share of the week's hours: sparse
ASYNC_LATENCY_MS = 10_000.0  # average model latency from which asynchronous inference is advised over serverless
BUSY_SHARE = 25.0  # % of each vCPU or GPU: under it in every hour, the instance is under-used
MEMORY_SHARE = 50.0  # % of memory (and of one GPU's memory): under it in every hour, a smaller size still holds the model
SIZES = ("48xlarge", "32xlarge", "24xlarge", "16xlarge", "12xlarge", "8xlarge", "4xlarge", "2xlarge", "xlarge", "large", "medium")
SERVERLESS = "serverless"
ASYNC = "async"
SMALLER = "smaller"
PriceOf = Callable[[str, int], Price | None]  # the hourly list price of N instances of a type, or None
_TYPE = re.compile(r"^(ml\.[a-z0-9-]+)\.([0-9]*x?large|medium)$")


@dataclass(frozen=True)
class Usage:
    """A week of one endpoint, over its variants (reaper.kinds.endpoint.usage reads it in one batch)."""

    invocations: float  # Invocations, summed
    active_hours: int  # hours with at least one request
    latency_ms: float | None  # the mean of its hourly ModelLatency averages, in ms
    cpu_peak: float | None  # the busiest hour's average CPUUtilization (sum over vCPUs, %)
    memory_peak: float | None  # MemoryUtilization, %
    gpu_peak: float | None  # GPUUtilization (sum over GPUs, %)
    gpu_memory_peak: float | None  # GPUMemoryUtilization (sum over GPUs, %)


class AdviceJson(TypedDict):
    """One advice as `reaper plan --json` gives it (docs/kinds/endpoint.md#right-size-advice)."""

    change: str
    to: str
    instance_type: str
    count: int
    why: str
    monthly_before_usd: float
    monthly_after_usd: float | None
    monthly_saving_usd: float
    saving_is_upper_bound: bool
    per_1k_inferences_before_usd: float | None
    per_1k_inferences_after_usd: float | None
    price_source: str
    price_as_of: str | None
    text: str


@dataclass(frozen=True)
class Advice:
    endpoint: str
    region: str
    change: str  # SERVERLESS, ASYNC or SMALLER
    to: str  # "serverless inference", "asynchronous inference", or the smaller instance type
    instance_type: str
    count: int
    why: str
    monthly_before: Price
    monthly_after: Price | None  # None: unpriced (serverless)
    per_1k_before: float | None  # None: no requests
    per_1k_after: float | None

    @property
    def monthly_saving(self) -> float:
        """The monthly dollar difference; with the new cost unpriced, the most it can save (the instances' cost)."""
        after = 0.0 if self.monthly_after is None else self.monthly_after.usd
        return round(self.monthly_before.usd - after, 2)

    def text(self) -> str:
        what = f"{self.count} x {self.instance_type}"
        if self.monthly_after is None:
            money = (
                f"up to {usd(self.monthly_saving)}/month less (its {what} cost {usd(self.monthly_before.usd)}/month; "
                "serverless compute per GB-second and data per GB: unpriced)"
            )
        else:
            money = f"{usd(self.monthly_saving)}/month less ({usd(self.monthly_before.usd)} -> {usd(self.monthly_after.usd)})"
        per_k = f"; per 1,000 inferences {usd(self.per_1k_before)} -> {usd(self.per_1k_after)}"
        where = f"endpoint {self.endpoint} ({self.region})"
        return f"{where}: {self.to} instead of {what}: {money}{per_k}; {self.why} [{self.monthly_before.label}]"

    def to_json(self) -> AdviceJson:
        return {
            "change": self.change,
            "to": self.to,
            "instance_type": self.instance_type,
            "count": self.count,
            "why": self.why,
            "monthly_before_usd": self.monthly_before.usd,
            "monthly_after_usd": None if self.monthly_after is None else self.monthly_after.usd,
            "monthly_saving_usd": self.monthly_saving,
            "saving_is_upper_bound": self.monthly_after is None,
            "per_1k_inferences_before_usd": self.per_1k_before,
            "per_1k_inferences_after_usd": self.per_1k_after,
            "price_source": self.monthly_before.source,
            "price_as_of": self.monthly_before.as_of,
            "text": self.text(),
        }


def usd(value: float | None) -> str:
    if value is None:
        return "unpriced"
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


def vcpus(instance_type: str) -> int | None:
    """vCPUs from the size's name (large 2, xlarge 4, Nxlarge 4N, medium 2), as EC2 names its sizes."""
    m = _TYPE.match(instance_type)
    if m is None:
        return None
    size = m.group(2)
    if size in ("medium", "large"):
        return 2
    return 4 * int(size[: -len("xlarge")] or 1)


def smaller_sizes(instance_type: str) -> list[str]:
    """The same family's smaller sizes, largest first."""
    m = _TYPE.match(instance_type)
    if m is None or m.group(2) not in SIZES:
        return []
    return [f"{m.group(1)}.{s}" for s in SIZES[SIZES.index(m.group(2)) + 1 :]]


def advise(
    endpoint: str,
    region: str,
    instance_type: str,
    count: int,
    usage: Usage,
    price: PriceOf,
) -> Advice | None:
    """The advice for one endpoint (one instance type, `count` instances, in service all week), or None.

    `price(type, count)`: the hourly list price of `count` instances (the Pricer); an unpriced instance gets no advice."""
    hourly = price(instance_type, count)
    if hourly is None or count <= 0 or usage.invocations <= 0:  # idle endpoints are the sweep's business
        return None
    before = hourly.times(HOURS_PER_MONTH)
    monthly_calls = usage.invocations * HOURS_PER_MONTH / WEEK_HOURS
    base = Advice(endpoint, region, "", "", instance_type, count, "", before, None, _per_k(before.usd, monthly_calls), None)
    if usage.active_hours <= SPARSE_SHARE * WEEK_HOURS:
        return _sparse(usage, base, before, monthly_calls, is_accelerated(instance_type))
    smaller = _smaller_type(instance_type, usage, price, count)
    if smaller is None:
        return None
    to, after_hourly, why = smaller
    after = after_hourly.times(HOURS_PER_MONTH)
    if after.usd >= before.usd:
        return None
    return replace(base, change=SMALLER, to=to, why=why, monthly_after=after, per_1k_after=_per_k(after.usd, monthly_calls))


def _sparse(usage: Usage, base: Advice, before: Price, monthly_calls: float, gpu: bool) -> Advice:
    share = f"requests in {usage.active_hours} of the week's {WEEK_HOURS} hours ({usage.invocations:,.0f} in all)"
    long_latency = usage.latency_ms is not None and usage.latency_ms >= ASYNC_LATENCY_MS
    if not gpu and not long_latency:
        why = f"sparse traffic: {share}; serverless inference scales to zero between spurts (cold starts; up to 6 GB memory, no GPU)"
        return replace(base, change=SERVERLESS, to="serverless inference", why=why)
    latency = (usage.latency_ms or 0.0) / 1000
    reason = "a GPU instance (serverless inference has none)" if gpu else f"model latency {latency:,.1f} s on average"
    # scaled to zero between bursts, its instances run about the hours that have requests
    after = before.times(usage.active_hours / WEEK_HOURS)
    why = f"sparse traffic: {share}, {reason}; asynchronous inference scales its instances to zero between bursts (busy hours billed)"
    after_k = _per_k(after.usd, monthly_calls)
    return replace(base, change=ASYNC, to="asynchronous inference", why=why, monthly_after=after, per_1k_after=after_k)


def _smaller_type(instance_type: str, usage: Usage, price: PriceOf, count: int) -> tuple[str, Price, str] | None:
    """The next smaller priced size when every hour stayed under a quarter of its vCPUs (and GPUs) and half its memory."""
    cores = vcpus(instance_type)
    if cores is None or usage.cpu_peak is None or usage.memory_peak is None:  # unknown is never under-used
        return None
    per_core = usage.cpu_peak / cores
    if per_core >= BUSY_SHARE or usage.memory_peak >= MEMORY_SHARE:
        return None
    why = f"its busiest hour used {per_core:.0f}% of its {cores} vCPUs and {usage.memory_peak:.0f}% of its memory"
    if is_accelerated(instance_type):
        # the sums over GPUs, read as if one GPU: under a quarter of one GPU, and half of one GPU's memory
        if usage.gpu_peak is None or usage.gpu_memory_peak is None:
            return None
        if usage.gpu_peak >= BUSY_SHARE or usage.gpu_memory_peak >= MEMORY_SHARE:
            return None
        why += f", GPU {usage.gpu_peak:.0f}% busy and {usage.gpu_memory_peak:.0f}% of GPU memory"
    for candidate in smaller_sizes(instance_type)[:2]:  # the next two sizes down: one may be unpriced (not offered)
        found = price(candidate, count)
        if found is not None:
            return candidate, found, why
    return None


def _per_k(monthly_usd: float, monthly_calls: float) -> float | None:
    return None if monthly_calls <= 0 else round(monthly_usd / (monthly_calls / 1000.0), 4)
