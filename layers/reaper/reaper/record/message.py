"""The message that crosses the queue: one pydantic model per type, validated where it is made and where it is read.

    verdict        one resource's decision and what became of it (the courier, from Outcome.to_json())
    notice         a check on a new or changed resource, a restore's progress, a sweep out of time
    owner-summary  one owner's verdicts of one sweep (bot mode; reaper.record.owner_summary)
    budget-change  a budget created, set or not written (reaper.sweep.budget_changes)
    anomaly        a Cost Anomaly Detection alert on an ML tag, for its owner (reaper.aws.anomalies)
    daily-digest   the admin channel's day (built and posted by the notifier itself, never queued)

The producer builds a model (a wrong field fails there, in the test of that producer); the outbox
writes `model_dump_json()`; the notifier reads with `parse_body` (TypeAdapter(Message).validate_json):
a body that is not one of these is a poison message, refused with the reason and never posted.

Field names are the keys the dict payloads had, and unknown keys are ignored, not refused: bodies
already in the queue, and the action log's unposted copies, written by the code before this module
still validate (tests/unit/test_message_seam.py replays bodies captured from that code). Types are
strict: a number is a JSON number, never a string or a boolean. `as_record()` gives the action log
the same keys the payload had (only the fields the producer set), so the log's shape is unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, ValidationError

from reaper.core.model import Mode, Verdict

# the most a SendMessage body can be (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html:
# "The maximum size is 1 MiB or 1,048,576 bytes"): anything longer never came from the queue
MAX_BODY_BYTES = 1_048_576
ERRORS_SHOWN = 3  # a refusal names its first few problems, never the values (they can be anything)

Evidence = dict[str, JsonValue]  # a kind's own facts (minutes idle, metric points, estimates): free-form JSON


class BadMessage(ValueError):
    """A body that is not a message: not JSON, too big, an unknown type, a missing or mistyped field."""


class _Body(BaseModel):
    model_config = ConfigDict(frozen=True, strict=True, extra="ignore")

    # stamped before queueing (reaper.record.outbox.QueueOutbox): the notifier posts one key once
    message_key: str | None = None

    def as_record(self) -> dict[str, JsonValue]:
        """The action log's entry: the keys the producer set (and the type), as JSON values."""
        data: dict[str, JsonValue] = self.model_dump(mode="json", exclude_unset=True)
        kind = self.model_dump(mode="json", include={"type"})
        return {**kind, **data}

    @property
    def subject(self) -> str:
        """What the message is about, in a problem's words."""
        return "a message"


class DecisionPart(BaseModel):
    model_config = ConfigDict(frozen=True, strict=True, extra="ignore")
    verdict: Verdict
    action: str | None = None
    reason: str = ""


class ResultPart(BaseModel):
    model_config = ConfigDict(frozen=True, strict=True, extra="ignore")
    code: str
    executed: bool = False


class ResourceLine(_Body):
    """A resource and its verdict: what an owner's summary lists (reaper.record.owner_summary.ITEM_KEYS)."""

    kind: str
    id: str
    arn: str = ""
    region: str | None = None
    account: str | None = None
    verdict: Verdict
    action: str | None = None
    past: str | None = None  # the action's past tense ("stopped"), from the kind's declaration
    reason: str = ""
    executed: bool = False
    mode: Mode | None = None
    hourly_usd: float | None = None
    monthly_usd: float | None = None
    price_source: str | None = None  # where hourly_usd comes from (docs/prices.md)
    price_as_of: str | None = None
    project: str | None = None
    error: str | None = None
    evidence: Evidence = Field(default_factory=dict)
    unconfirmed: bool = False  # written ahead of a change whose end was never recorded (reaper.sweep.pipeline._begin)

    @property
    def subject(self) -> str:
        return f"{self.kind} {self.id}"


class VerdictMessage(ResourceLine):
    """One resource's message: Outcome.to_json() and the kind's past tense."""

    type: Literal["verdict"] = "verdict"
    state: str | None = None
    owner: str | None = None
    stage: str | None = None
    instance_type: str | None = None
    instance_count: int | None = None
    detail: str | None = None
    undo: str | None = None
    opt_out: str | None = None
    decision: DecisionPart | None = None
    result: ResultPart | None = None
    unknown: str | None = None  # a reason code of reaper.core.coverage.REASONS


class NoticeMessage(_Body):
    """A check, a restore's progress, a sweep out of time. Every producer sets the same fields; `details`
    is the free-form part (key: value lines) for a notice that has more to say than its text."""

    type: Literal["notice"] = "notice"
    kind: str
    id: str
    arn: str | None = None
    region: str | None = None
    account: str | None = None
    owner: str | None = None  # None: the admin channel (bot mode)
    title: str
    text: str = ""
    details: Evidence = Field(default_factory=dict)

    @property
    def subject(self) -> str:
        return f"{self.kind} {self.id}"


class OwnerSummaryMessage(_Body):
    type: Literal["owner-summary"] = "owner-summary"
    event_id: str | None = None
    owner: str | None = None
    project: str | None = None
    total: int
    counts: dict[str, int] = Field(default_factory=dict)
    hourly_usd: float | None = None
    unpriced: int = 0  # items without a list price: not in hourly_usd (docs/prices.md)
    items: list[ResourceLine] = Field(default_factory=list)

    @property
    def subject(self) -> str:
        return f"the summary for {self.owner or 'no owner'}"


class BudgetChangeMessage(_Body):
    type: Literal["budget-change"] = "budget-change"
    kind: str = "budget"
    id: str  # the budget's name
    arn: str
    account: str | None = None
    project: str
    what: str  # created | set | would-create | would-set | failed (reaper.aws.budgets.BudgetChange)
    usd: float
    previous_usd: float | None = None
    origin: str
    confirmable: bool = False
    reason: str = ""

    @property
    def subject(self) -> str:
        return f"budget {self.id}"


class AnomalyCause(BaseModel):
    """One of the root causes AWS gives for an anomaly (RootCause: service, region, usage type, linked account)."""

    model_config = ConfigDict(frozen=True, strict=True, extra="ignore")
    service: str | None = None
    region: str | None = None
    usage_type: str | None = None
    linked_account: str | None = None
    linked_account_name: str | None = None


class AnomalyMessage(_Body):
    """A Cost Anomaly Detection alert on an `ml:project` / `ml:owner` monitor: to its owner, else the admin channel."""

    type: Literal["anomaly"] = "anomaly"
    kind: str = "anomaly"
    id: str  # AWS's AnomalyId: posted once per id
    account: str | None = None
    monitor_arn: str
    tag_key: str | None = None  # the tag the monitor watches (None: not one of the ML tags)
    value: str | None = None  # the tag value AWS names (dimensionalValue)
    project: str | None = None
    owner: str | None = None  # None: the admin channel
    impact_usd: float
    actual_usd: float | None = None
    expected_usd: float | None = None
    start: str | None = None
    end: str | None = None
    causes: list[AnomalyCause] = Field(default_factory=list)
    link: str | None = None

    @property
    def subject(self) -> str:
        return f"anomaly {self.id}"


class CoverageHeadline(BaseModel):
    """reaper.core.coverage.headline: what the day's sweeps could not judge."""

    model_config = ConfigDict(frozen=True, strict=True, extra="ignore")
    unknown: int
    unknown_hourly_usd: float
    unknown_unpriced: int = 0  # of `unknown`, those without a list price: not in unknown_hourly_usd
    top_code: str
    top_label: str
    top_resources: int
    top_hourly_usd: float
    fix: str


class StoppableRow(BaseModel):
    """The organisation's digest: a resource still waiting, with the key of its record in the central log
    (its Stop now button names it; reaper.org.interactions reads it back)."""

    model_config = ConfigDict(frozen=True, strict=True, extra="ignore")
    arn: str
    kind: str
    id: str
    account: str
    region: str | None = None
    owner: str | None = None
    verdict: str
    reason: str | None = None
    hourly_usd: float | None = None
    logged: str


class DailyDigestMessage(_Body):
    type: Literal["daily-digest"] = "daily-digest"
    id: str
    date: str
    verdicts: dict[str, int] = Field(default_factory=dict)
    kinds: dict[str, int] = Field(default_factory=dict)
    accounts: dict[str, int] = Field(default_factory=dict)
    errors: int = 0
    error_lines: list[str] = Field(default_factory=list)
    top_owners: list[tuple[str, int]] = Field(default_factory=list)
    reclaimed_today_usd: float | None = None
    reclaimed_week_usd: float | None = None
    # DiscountAwareSavings=on: this week's saving after Savings Plans / RI coverage, and where it comes from
    reclaimed_week_after_usd: float | None = None
    after_commitments: str | None = None
    bill: str | None = None  # DigestBill=on: what AWS billed beside the reaper's claim (docs/bill.md)
    coverage: CoverageHeadline | None = None
    anomalies: list[str] = Field(default_factory=list)  # today's cost anomalies, one line each
    anomalies_total: int = 0
    units: str | None = None  # the week's unit costs in one line (reaper.report.units)
    advice: str | None = None  # right-size advice for endpoints in one line (reaper.kinds.endpoint.usage; never an action)
    stoppable: list[StoppableRow] = Field(default_factory=list)  # the organisation's digest only
    stoppable_total: int = 0

    @property
    def subject(self) -> str:
        return f"the digest of {self.date}"


Message = Annotated[
    VerdictMessage | NoticeMessage | OwnerSummaryMessage | BudgetChangeMessage | AnomalyMessage | DailyDigestMessage,
    Field(discriminator="type"),
]
MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)


def parse_body(body: str | bytes | None) -> Message:
    """The message in a queued body; BadMessage says why when it is none."""
    if body is None or not body.strip():
        raise BadMessage("the body is empty")
    if len(body) > MAX_BODY_BYTES or (isinstance(body, str) and len(body.encode("utf-8", errors="replace")) > MAX_BODY_BYTES):
        raise BadMessage(f"the body is over {MAX_BODY_BYTES:,} bytes, more than SQS ever delivers")
    try:
        return MESSAGE.validate_json(body)
    except ValidationError as exc:
        raise BadMessage(_why(exc)) from None


def from_record(data: Mapping[str, object]) -> Message:
    """The message in a body the action log kept (an unposted copy), read as the notifier would read it."""
    return parse_body(json.dumps(dict(data), default=str))


def _why(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    said = []
    for e in errors[:ERRORS_SHOWN]:
        where = ".".join(str(part) for part in e["loc"]) or "the body"
        said.append(f"{where}: {e['msg']}")
    more = f" (and {len(errors) - ERRORS_SHOWN} more)" if len(errors) > ERRORS_SHOWN else ""
    return "not a message: " + "; ".join(said) + more
