"""The bill beside the reaper's own claims (docs/bill.md): the four buckets of ML spend, and for each
kind the reaper acted on, the drop in what AWS billed after its first stop set against what the
action log says it saved on the same days.

The drop is the bill's own: the average daily cost of the kind's usage types before the first stop,
times the whole days after it, less what those days were billed. The claim is the log's: the hours
each resource stayed off on those days times its list price (reaper.report.summary.daily_savings).
Within TOLERANCE the two agree; a larger difference is named, with what can cause it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from reaper.record.logentry import LogEntry
from reaper.report import summary
from reaper.report.bill import PROJECT_TAG, Bill, BillLine

TOLERANCE = 0.02
BUCKETS = ("training", "inference", "development", "storage and data")
OTHER = "other"  # usage types no bucket names (so the buckets and this line add up to the bill)
GPU_FAMILIES = ("p", "g", "inf", "trn", "dl")  # EC2 accelerated families (docs/kinds/ec2.md)
TRAINING_STAGES = ("train", "training")
INFERENCE_STAGES = ("inference", "serving", "serve")

# usage-type fragments (the bill's `line_item_usage_type`: <region code>-<usage>:<type>), first match wins
STORAGE = ("EBS:", "VolumeUsage", "TimedStorage", "DataTransfer-", "Lustre", "FSx", "Storage")
TRAINING = ("-Train:", "-Processing:", "-Tuning:", "Train:", "Processing:")
INFERENCE = ("-Host:", "-AsyncInf", "-Inference", "-ServerlessInf", "ProvisionedThroughput", "Host:")
DEVELOPMENT = ("-Notebk:", "-Studio", "Notebk:", "Studio", "JupyterLab", "CodeEditor", "KernelGateway", "MLflow")
# which usage types a kind's stops take off the bill (instance hours, not their storage)
KIND_USAGE = {
    "notebook": ("Notebk:",),
    "endpoint": ("Host:",),
    "training-job": ("Train:", "Processing:"),
    "studio-app": ("Studio", "JupyterLab", "CodeEditor", "KernelGateway"),
    "ec2": ("BoxUsage",),
    "fsx": ("Lustre", "FSx"),
    "mlflow": ("MLflow",),
}


def _gpu_box(usage_type: str) -> bool:
    _, _, itype = usage_type.partition("BoxUsage:")
    letters = re.match(r"[a-z]+", itype)  # the family's letters: p3 -> p, g6e -> g, inf2 -> inf, trn1 -> trn
    return letters is not None and letters.group(0) in GPU_FAMILIES


def bucket(line: BillLine) -> str:
    """The bucket of one billed line, from its usage type and (for a GPU box) its ml:stage."""
    usage = line.usage_type
    if any(f in usage for f in STORAGE):
        return "storage and data"
    if any(f in usage for f in TRAINING):
        return "training"
    if any(f in usage for f in INFERENCE):
        return "inference"
    if any(f in usage for f in DEVELOPMENT):
        return "development"
    if _gpu_box(usage):
        stage = (line.stage or "").lower()
        if stage in TRAINING_STAGES:
            return "training"
        return "inference" if stage in INFERENCE_STAGES else "development"  # a GPU box is a dev box (docs/kinds/ec2.md)
    return OTHER


@dataclass
class Buckets:
    usd: dict[str, float] = field(default_factory=dict)
    untagged: dict[str, float] = field(default_factory=dict)  # per bucket: spend with no value of the bill's tag
    total: float = 0.0
    projects: dict[str | None, float] = field(default_factory=dict)  # --by project: spend per ml:project (None: untagged)


def buckets(bill: Bill) -> Buckets:
    out = Buckets({b: 0.0 for b in (*BUCKETS, OTHER)}, {b: 0.0 for b in (*BUCKETS, OTHER)})
    for line in bill.lines:
        b = bucket(line)
        out.usd[b] += line.usd
        out.total += line.usd
        if bill.tag_value(line) is None:
            out.untagged[b] += line.usd
        if bill.tag == PROJECT_TAG:
            out.projects[line.project] = out.projects.get(line.project, 0.0) + line.usd
    return out


def to_tag(entries: Iterable[LogEntry], tag: str | None = None) -> list[str]:
    """Resources the log saw without the bill's tag (ml:stage; ml:project with --by project): what to tag so their
    spend leaves the untagged line (entries with an ARN: a sweep's tallies and notices name no resource)."""
    project = tag == PROJECT_TAG
    return sorted({f"{e.kind}/{e.id}" for e in entries if e.arn and not ((e.project if project else e.stage) or "").strip()})


@dataclass
class Reconciled:
    kind: str
    account: str
    first_stop: date
    before_days: int
    after_days: int
    billed_before_daily: float
    billed_after: float
    drop_usd: float
    drop_hours: float
    claimed_usd: float
    claimed_hours: float
    estimated_days: int
    unpriced: int

    @property
    def difference(self) -> float:
        return self.claimed_usd - self.drop_usd

    @property
    def share(self) -> float:
        scale = max(abs(self.claimed_usd), abs(self.drop_usd))
        return abs(self.difference) / scale if scale else 0.0

    @property
    def agrees(self) -> bool:
        return self.after_days > 0 and self.before_days > 0 and self.share <= TOLERANCE

    def named(self) -> list[str]:
        """What can make the claim and the bill differ, for a difference beyond TOLERANCE."""
        if self.agrees:
            return []
        if not self.before_days:
            return ["no billed day before the first stop in the period: ask for a longer --since"]
        if not self.after_days:
            return ["no whole billed day after the first stop yet"]
        said = []
        if self.difference > 0:
            said.append(
                "the bill kept charging after the stops: a resource ran again without the log seeing it "
                "(started outside the reaper), or other resources of the same usage grew"
            )
        else:
            said.append("the bill dropped more than the log claims: resources of the same usage stopped without the reaper")
        if self.unpriced:
            said.append(f"{self.unpriced} stop(s) without a list price count nothing in the claim")
        if self.estimated_days:
            said.append(f"{self.estimated_days} of the days after are Estimated by AWS and may still change")
        said.append("the claim is at list price; the bill is after any discount (Savings Plans, RIs, credits)")
        return said

    def to_json(self) -> dict[str, Any]:
        return {
            "section": "reconcile",
            "kind": self.kind,
            **({"account": self.account} if self.account else {}),
            "first_stop": self.first_stop.isoformat(),
            "days_before": self.before_days,
            "days_after": self.after_days,
            "billed_daily_before_usd": round(self.billed_before_daily, 2),
            "billed_after_usd": round(self.billed_after, 2),
            "billed_drop_usd": round(self.drop_usd, 2),
            "billed_drop_hours": round(self.drop_hours, 1),
            "claimed_usd": round(self.claimed_usd, 2),
            "claimed_hours": round(self.claimed_hours, 1),
            "difference_usd": round(self.difference, 2),
            "difference_share": round(self.share, 4),
            "agrees": self.agrees,
            "differences": self.named(),
        }


def kind_lines(bill: Bill, kind: str, account: str, types: frozenset[str] = frozenset()) -> list[BillLine]:
    """The kind's billed instance usage (its storage volumes left out); with `types`, only the usage types
    of the instance types the reaper stopped (`USE1-Notebk:ml.t3.medium`, `BoxUsage:g5.xlarge`), so other
    resources of the kind on other types do not move the drop."""
    fragments = KIND_USAGE.get(kind, ())
    return [
        x
        for x in bill.lines
        if any(f in x.usage_type for f in fragments)
        and "VolumeUsage" not in x.usage_type
        and (not account or x.account == account)
        and (not types or any(x.usage_type.endswith((f":{t}", f"-{t}")) for t in types))
    ]


def reconcile(bill: Bill, entries: list[LogEntry], now: datetime) -> list[Reconciled]:
    """One row per kind (per account across the organisation) the reaper stopped something of in the period."""
    items = [r for r in summary.reclaimed(entries, now) if r.hours_off is not None or r.saved_usd is not None]
    keys = sorted({(str(r.entry.kind), (r.entry.account or "") if bill.org else "") for r in items})
    return [_one(bill, kind, account, [r for r in items if _is(r, kind, account, bill.org)], now) for kind, account in keys]


def _is(r: summary.Reclaimed, kind: str, account: str, org: bool) -> bool:
    return str(r.entry.kind) == kind and (not org or (r.entry.account or "") == account)


def _one(bill: Bill, kind: str, account: str, items: list[summary.Reclaimed], now: datetime) -> Reconciled:
    first = min(_day(r) for r in items)
    types = frozenset(r.entry.instance_type for r in items if r.entry.instance_type)
    lines = kind_lines(bill, kind, account, types if all(r.entry.instance_type for r in items) else frozenset())
    days = [bill.start + timedelta(days=n) for n in range((bill.end - bill.start).days)]
    before = [d for d in days if d < first]
    after = [d for d in days if d > first]
    usd = _per_day(lines, lambda x: x.usd)
    hours = _per_day(lines, lambda x: x.quantity)
    daily_usd = sum(usd.get(d, 0.0) for d in before) / len(before) if before else 0.0
    daily_hours = sum(hours.get(d, 0.0) for d in before) / len(before) if before else 0.0
    billed_after = sum(usd.get(d, 0.0) for d in after)
    since = datetime.combine(bill.start, datetime.min.time(), tzinfo=now.tzinfo)
    saved = summary.daily_savings(items, since, now)
    off = summary.daily_hours_off(items, since, now)
    estimated = {x.day for x in lines if x.estimated}
    return Reconciled(
        kind,
        account,
        first,
        len(before),
        len(after),
        daily_usd,
        billed_after,
        daily_usd * len(after) - billed_after,
        daily_hours * len(after) - sum(hours.get(d, 0.0) for d in after),
        sum(saved.get(d, {}).get(kind, 0.0) for d in after),
        sum(off.get(d, {}).get(kind, 0.0) for d in after),
        len(estimated & set(after)),
        sum(1 for r in items if r.saved_usd is None),
    )


def _day(r: summary.Reclaimed) -> date:
    day = summary.logged_day(r.entry)
    assert day is not None  # reclaimed() keeps only entries with a time
    return day


def _per_day(lines: list[BillLine], value: Any) -> dict[date, float]:
    out: dict[date, float] = {}
    for x in lines:
        out[x.day] = out.get(x.day, 0.0) + float(value(x))
    return out
