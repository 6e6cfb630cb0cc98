"""Plain data shared by every layer: resources, decisions, outcomes."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

HOURS_PER_MONTH = 730.0


class Verdict(enum.StrEnum):
    ACT = "act"
    WARN = "warn"
    KEEP = "keep"
    EXEMPT = "exempt"
    ERROR = "error"


class Mode(enum.StrEnum):
    DRY_RUN = "dry-run"
    ENFORCE = "enforce"


@dataclass
class Resource:
    """One thing the reaper may act on, as discovery found it."""

    kind: str
    id: str
    arn: str
    region: str
    state: str
    tags: dict[str, str] = field(default_factory=dict)
    instance_type: str | None = None
    instance_count: int = 1
    hourly_usd: float | None = None
    created_at: datetime | None = None
    changed_at: datetime | None = None  # last state change, where the API says
    attrs: dict[str, Any] = field(default_factory=dict)  # kind-specific facts

    @property
    def account(self) -> str:
        parts = self.arn.split(":")
        return parts[4] if len(parts) > 4 else ""


@dataclass(frozen=True)
class Decision:
    """What to do with one resource and why. `evidence` holds the figures behind the reason."""

    verdict: Verdict
    reason: str
    action: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    notify: bool = False  # post even though the verdict is not warn/act/error (notify-only)
    skip_grace: bool = False  # harmless actions (attach agent) act without a warning first
    quiet: bool = False  # the owner was told already (a warning still within its grace period)
    notify_key: str | None = None  # notify-only findings: posted once per key (default: once a day)
    newly_warned: bool = False  # this sweep gives the warning: write reaper:warned-at
    clear_warning: bool = False  # activity since the warning: remove reaper:warned-at

    def with_(self, **changes: Any) -> Decision:
        data = {**self.__dict__, **changes}
        return Decision(**data)


@dataclass
class Outcome:
    """The record of one resource in one sweep: printed, logged and posted."""

    resource: Resource
    decision: Decision
    mode: Mode
    executed: bool = False
    error: str | None = None
    owner: str | None = None
    project: str | None = None
    stage: str | None = None
    undo: str | None = None
    opt_out: str | None = None
    detail: str | None = None  # what the action did, e.g. "backup backup-0123 created"
    posted: bool = False

    @property
    def verdict(self) -> Verdict:
        return self.decision.verdict

    @property
    def monthly_usd(self) -> float | None:
        hourly = self.resource.hourly_usd
        return None if hourly is None else round(hourly * HOURS_PER_MONTH, 2)

    def should_notify(self) -> bool:
        if self.decision.quiet:
            return False
        return self.decision.verdict in (Verdict.ACT, Verdict.WARN, Verdict.ERROR) or self.decision.notify

    def to_json(self) -> dict[str, Any]:
        r = self.resource
        return {
            "kind": r.kind,
            "id": r.id,
            "arn": r.arn,
            "region": r.region,
            "account": r.account,
            "state": r.state,
            "verdict": self.decision.verdict.value,
            "action": self.decision.action,
            "reason": self.decision.reason,
            "executed": self.executed,
            "mode": self.mode.value,
            "hourly_usd": r.hourly_usd,
            "monthly_usd": self.monthly_usd,
            "instance_type": r.instance_type,
            "instance_count": r.instance_count,
            "owner": self.owner,
            "project": self.project,
            "stage": self.stage,
            "error": self.error,
            "detail": self.detail,
            "undo": self.undo,
            "opt_out": self.opt_out,
            "evidence": _jsonable(self.decision.evidence),
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    return value
