"""The events the functions accept, as pydantic models. Anything else is a BadEventError."""

from __future__ import annotations

from typing import Any, TypeVar

from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reaper.core.errors import BadEventError


class EventBridgeEvent(EventBridgeModel):
    """Powertools' EventBridge envelope (every field EventBridge documents for an event), with the
    detail kept as a JSON object: each route reads its own detail model from it."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    id: str = Field(min_length=1)
    detail: dict[str, Any] = Field(default_factory=dict)


class CloudTrailDetail(BaseModel):
    model_config = ConfigDict(extra="allow")

    eventName: str
    eventSource: str = ""
    awsRegion: str = ""
    errorCode: str | None = None
    requestParameters: dict[str, Any] | None = None
    responseElements: dict[str, Any] | None = None


M = TypeVar("M", bound=BaseModel)


def parse_model(model: type[M], data: Any, what: str, where: str = "") -> M:
    """Validate `data` as `model`; the first problem becomes one readable BadEventError."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(map(str, first["loc"]))
        raise BadEventError(f"not {what}: {where}{loc or 'event'}: {first['msg']}") from None


def parse_eventbridge(event: Any) -> EventBridgeEvent:
    if not isinstance(event, dict):
        raise BadEventError(f"expected a JSON object, got {type(event).__name__}")
    return parse_model(EventBridgeEvent, event, "an EventBridge event")


def parse_cloudtrail(event: EventBridgeEvent) -> CloudTrailDetail:
    return parse_model(CloudTrailDetail, event.detail, "a CloudTrail API call event", "detail.")


class SnsMessage(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")

    MessageId: str = Field(min_length=1)
    TopicArn: str = Field(min_length=1)
    Message: str = ""


class SnsRecord(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")

    EventSource: str
    Sns: SnsMessage


class SnsEvent(BaseModel):
    """An SNS delivery to Lambda (AWS Budgets notifications come this way).
    https://docs.aws.amazon.com/lambda/latest/dg/with-sns.html"""

    model_config = ConfigDict(extra="allow")

    Records: list[SnsRecord] = Field(min_length=1)


def is_sns(event: Any) -> bool:
    return (
        isinstance(event, dict)
        and isinstance(event.get("Records"), list)
        and any(isinstance(r, dict) and r.get("EventSource") == "aws:sns" for r in event["Records"])
    )


def parse_sns(event: Any) -> SnsEvent:
    parsed = parse_model(SnsEvent, event, "an SNS event")
    if any(r.EventSource != "aws:sns" for r in parsed.Records):
        raise BadEventError("not an SNS event: a record is not from aws:sns")
    return parsed


SCHEDULED = ("Scheduled Event",)
SCHEDULE_SOURCES = ("aws.events", "aws.scheduler", "mlreaper")


class StopAnywayConsent(BaseModel):
    """What a Stop anyway click consented to lose: the instance store's figure the button showed (docs/slack.md,
    Stop anyway; reaper.slack.buttons)."""

    model_config = ConfigDict(frozen=True, strict=True, extra="forbid")

    gb: float = Field(ge=0, le=1_000_000)


class StopNowDetail(BaseModel):
    """The Stop now event's detail: which resource, who asked, and where to answer. The interactions function
    writes it (reaper.slack.buttons.stop_event) and the central account forwards the same event
    (reaper.org.click); the kind function parses it before it reads or changes anything (docs/slack.md,
    Stop now). A field missing or of the wrong type, or one it does not know, is a BadEventError."""

    model_config = ConfigDict(frozen=True, strict=True, extra="forbid")

    arn: str = Field(min_length=1, max_length=2048)  # IAM's bound on an ARN
    user: str = Field(min_length=1, max_length=255)  # the clicker's Slack user id
    response_url: str = Field(default="", max_length=2048)  # where the thread's answer goes (reaper.slack.reply)
    thread_ts: str | None = Field(default=None, max_length=64)
    consent: StopAnywayConsent | None = None  # a Stop anyway's (EC2 instance store), recorded before it was sent

    @property
    def region(self) -> str:
        """The ARN's region, or "" when it is not a whole ARN (arn:partition:service:region:account:resource)."""
        parts = self.arn.split(":")
        return parts[3] if len(parts) >= 6 else ""

    @property
    def account(self) -> str:
        parts = self.arn.split(":")
        return parts[4] if len(parts) >= 6 else ""


def parse_stop_now(detail: Any) -> StopNowDetail:
    """A Stop now event's detail as its model; BadEventError naming the field and the problem otherwise."""
    return parse_model(StopNowDetail, detail, "a Stop now event", "detail.")
