"""Plain data shared by every layer: resources, decisions, outcomes."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from reaper.core.price import Price

F = TypeVar("F")

HOURS_PER_MONTH = 730.0


class Verdict(enum.StrEnum):
    ACT = "act"
    WARN = "warn"
    KEEP = "keep"
    EXEMPT = "exempt"
    ERROR = "error"


# What each verdict tells an admin (docs/reference/verdicts.md is generated from it, docs/tags.md)
VERDICT_MEANINGS: dict[Verdict, str] = {
    Verdict.ACT: "the action was taken (enforce), or would be (dry-run: `would …`); recorded with how to undo it",
    Verdict.WARN: "reapable: its owner is warned, and a later sweep acts only if it is still reapable after the grace period",
    Verdict.KEEP: "in use, within its limits, or unknown (evidence missing: never idle; the reason code is in `reaper coverage`)",
    Verdict.EXEMPT: "left alone: tagged exempt, snoozed, a production stage (notify only) or a tag that cannot be read",
    Verdict.ERROR: "the decision or the action failed, or the action was refused; always reported, and the command exits 1",
}


class KindAction(enum.StrEnum):
    """What a rule can decide to do: each kind's `ActionName` (kinds/<kind>/__init__.py) subclasses this, so a
    Decision carries a member, never free text. Its value is the string the action log and Slack show."""


class SweepAction(KindAction):
    """The pipeline's own: an error outcome standing for a whole kind in a region (reaper.sweep.pipeline.sweep_error)."""

    SWEEP = "sweep"


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
    hourly_usd: float | None = None  # price.usd, kept as a field for every consumer of the figure
    created_at: datetime | None = None
    changed_at: datetime | None = None  # last state change, where the API says
    facts: Any = None  # the kind's typed facts (a frozen dataclass in kinds/<kind>/model.py)
    # ARNs whose protective tags (exempt, snooze, production stage) protect this resource too, read
    # again just before a change like its own: a Studio app's space, whose tags AWS never copies to it
    guarded_by: tuple[str, ...] = ()
    # the list price behind hourly_usd: where it came from and when (docs/prices.md); None: unpriced
    price: Price | None = None

    def __post_init__(self) -> None:
        if self.price is not None:
            self.hourly_usd = self.price.usd

    def set_price(self, price: Price | None) -> None:
        """The resource's hourly list price, with its source (None: AWS does not price it)."""
        self.price = price
        self.hourly_usd = None if price is None else price.usd

    def facts_as(self, cls: type[F]) -> F:
        """This resource's facts, checked to be of the kind's type."""
        if not isinstance(self.facts, cls):
            raise TypeError(f"{self.kind} {self.id}: facts are {type(self.facts).__name__}, not {cls.__name__}")
        return self.facts

    @property
    def account(self) -> str:
        parts = self.arn.split(":")
        return parts[4] if len(parts) > 4 else ""


# Evidence key of a person's explicit consent to a loss a kind's guard otherwise refuses (the only one today: the
# data on an EC2 instance store, "Stop anyway" in Slack: docs/slack.md). Set only by reaper.slack.stop from a click
# the interactions function authorised (owner or admin) and recorded; read by the kind's guard.
CONSENT = "consent"


@dataclass(frozen=True)
class Decision:
    """What to do with one resource and why. `evidence` holds the figures behind the reason."""

    verdict: Verdict
    reason: str
    action: KindAction | None = None  # a kind's ActionName member (its value is what the log and Slack show)
    evidence: dict[str, Any] = field(default_factory=dict)
    notify: bool = False  # post even though the verdict is not warn/act/error (notify-only)
    skip_grace: bool = False  # harmless actions (attach agent) act without a warning first
    quiet: bool = False  # the owner was told already (a warning still within its grace period)
    notify_key: str | None = None  # notify-only findings: posted once per key (default: once a day)
    newly_warned: bool = False  # this sweep gives the warning: write reaper:warned-at
    clear_warning: bool = False  # activity since the warning: remove reaper:warned-at
    unknown: str | None = None  # kept because the evidence is missing: a code of reaper.core.coverage.REASONS

    def with_(self, **changes: Any) -> Decision:
        data = {**self.__dict__, **changes}
        return Decision(**data)


@dataclass(frozen=True)
class ProjectSpend:
    """One ml:project's AWS Budget as Budgets last calculated it (its figures lag by hours)."""

    project: str
    budget_name: str
    limit_usd: float
    actual_usd: float
    # the admin's: its amount is the stack parameter's, or one an admin confirmed in Slack. Only such a
    # budget makes a kind act at 100 % (BudgetEnforce); any other only notifies.
    enforceable: bool = False

    @property
    def percent(self) -> float:
        return 100.0 * self.actual_usd / self.limit_usd if self.limit_usd > 0 else 0.0


class ResultCode(enum.StrEnum):
    """What became of a decision when the pipeline tried to carry it out."""

    DONE = "done"  # the action ran
    WARNED = "warned"  # the warning was recorded (reaper:warned-at written)
    GONE = "gone"  # the resource went away before the action
    STATE_CHANGED = "state-changed"  # no longer in a state the action may start from
    PROTECTED = "protected"  # a protective tag appeared after discovery
    DUPLICATE = "duplicate"  # another delivery or sweep has it already
    NOT_REACHED = "not-reached"  # the sweep ran out of time before this resource
    REFUSED = "refused"  # refused at the last moment (no action log, a check failed): error
    FAILED = "failed"  # the AWS call failed: error


# what each code makes of the verdict the rule gave (None: the rule's verdict stands)
_RESULT_VERDICT: dict[ResultCode, Verdict | None] = {
    ResultCode.DONE: None,
    ResultCode.WARNED: None,
    ResultCode.GONE: Verdict.KEEP,
    ResultCode.STATE_CHANGED: Verdict.KEEP,
    ResultCode.PROTECTED: Verdict.EXEMPT,
    ResultCode.DUPLICATE: Verdict.KEEP,
    ResultCode.NOT_REACHED: Verdict.KEEP,
    ResultCode.REFUSED: Verdict.ERROR,
    ResultCode.FAILED: Verdict.ERROR,
}


@dataclass(frozen=True)
class Result:
    """What the action did, apart from what the rule decided. `message` says why it did not act."""

    code: ResultCode
    executed: bool = False
    detail: str | None = None  # what the action did, e.g. "backup backup-0123 created"
    message: str | None = None

    # Named constructors: what became of a decision reads as a word, not a hand-built record.
    @classmethod
    def done(cls, detail: str | None = None, *, executed: bool = True) -> Result:
        return cls(ResultCode.DONE, executed=executed, detail=detail)

    @classmethod
    def warned(cls, detail: str | None = None) -> Result:
        return cls(ResultCode.WARNED, detail=detail)

    @classmethod
    def gone(cls, message: str) -> Result:
        return cls(ResultCode.GONE, message=message)

    @classmethod
    def state_changed(cls, message: str) -> Result:
        return cls(ResultCode.STATE_CHANGED, message=message)

    @classmethod
    def protected(cls, message: str) -> Result:
        return cls(ResultCode.PROTECTED, message=message)

    @classmethod
    def duplicate(cls, message: str) -> Result:
        return cls(ResultCode.DUPLICATE, message=message)

    @classmethod
    def not_reached(cls, message: str) -> Result:
        return cls(ResultCode.NOT_REACHED, message=message)

    @classmethod
    def refused(cls, message: str) -> Result:
        return cls(ResultCode.REFUSED, message=message)

    @classmethod
    def failed(cls, message: str, *, executed: bool = False, detail: str | None = None) -> Result:
        """The call failed, or what followed it did (`executed` and `detail` keep what the action did)."""
        return cls(ResultCode.FAILED, executed=executed, detail=detail, message=message)

    @property
    def verdict(self) -> Verdict | None:
        return _RESULT_VERDICT[self.code]

    @property
    def is_error(self) -> bool:
        return self.verdict is Verdict.ERROR

    @property
    def silent(self) -> bool:
        """Nothing to tell the owner: someone else acted, or the resource changed under us."""
        return self.code in (ResultCode.GONE, ResultCode.STATE_CHANGED, ResultCode.PROTECTED, ResultCode.DUPLICATE, ResultCode.NOT_REACHED)


@dataclass
class Outcome:
    """One resource in one sweep: what the rule decided and what the action did; printed, logged, posted."""

    resource: Resource
    decision: Decision  # the rule's, as decided: never overwritten
    mode: Mode
    result: Result | None = None  # None: nothing was tried (keep, exempt, dry-run)
    owner: str | None = None
    project: str | None = None
    stage: str | None = None
    undo: str | None = None
    opt_out: str | None = None
    posted: bool = False
    # the action log holds this change's lease, claim and write-ahead record (reaper.sweep.pipeline);
    # the courier settles them with the outcome's record
    written_ahead: bool = False
    # the write-ahead copy's message key: the final message reuses it, so Slack gets one of the two
    message_key: str | None = None

    @property
    def verdict(self) -> Verdict:
        override = self.result.verdict if self.result else None
        return override or self.decision.verdict

    @property
    def reason(self) -> str:
        if self.result is not None and self.result.message:
            return self.result.message
        return self.decision.reason

    @property
    def executed(self) -> bool:
        return self.result is not None and self.result.executed

    @property
    def error(self) -> str | None:
        return self.result.message if self.result is not None and self.result.is_error else None

    @property
    def detail(self) -> str | None:
        return self.result.detail if self.result is not None else None

    @property
    def monthly_usd(self) -> float | None:
        hourly = self.resource.hourly_usd
        return None if hourly is None else round(hourly * HOURS_PER_MONTH, 2)

    def should_notify(self) -> bool:
        if self.result is not None and self.result.silent:
            return False
        if self.result is not None and self.result.is_error:
            return True
        if self.decision.quiet:
            return False
        return self.verdict in (Verdict.ACT, Verdict.WARN, Verdict.ERROR) or self.decision.notify

    def to_json(self) -> dict[str, Any]:
        r = self.resource
        d = self.decision
        return {
            "kind": r.kind,
            "id": r.id,
            "arn": r.arn,
            "region": r.region,
            "account": r.account,
            "state": r.state,
            "verdict": self.verdict.value,
            "action": d.action,
            "reason": self.reason,
            "executed": self.executed,
            "mode": self.mode.value,
            "hourly_usd": r.hourly_usd,
            "monthly_usd": self.monthly_usd,
            # where hourly_usd comes from (docs/prices.md): None with it when unpriced
            "price_source": r.price.source if r.price is not None and r.hourly_usd is not None else None,
            "price_as_of": r.price.as_of if r.price is not None and r.hourly_usd is not None else None,
            "instance_type": r.instance_type,
            "instance_count": r.instance_count,
            "owner": self.owner,
            "project": self.project,
            "stage": self.stage,
            "error": self.error,
            "detail": self.detail,
            "undo": self.undo,
            "opt_out": self.opt_out,
            "decision": {"verdict": d.verdict.value, "action": d.action, "reason": d.reason},
            "result": None if self.result is None else {"code": self.result.code.value, "executed": self.result.executed},
            "evidence": _jsonable(d.evidence),
            "unknown": d.unknown,
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
