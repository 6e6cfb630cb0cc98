"""The events the functions accept, as pydantic models. Anything else is a BadEventError."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reaper.errors import BadEventError


class EventBridgeEvent(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")

    id: str = Field(min_length=1)
    detail_type: str = Field(alias="detail-type")
    source: str
    account: str = ""
    region: str = ""
    time: str = ""
    resources: list[str] = Field(default_factory=list)
    detail: dict[str, Any] = Field(default_factory=dict)


class CloudTrailDetail(BaseModel):
    model_config = ConfigDict(extra="allow")

    eventName: str
    eventSource: str = ""
    awsRegion: str = ""
    errorCode: str | None = None
    requestParameters: dict[str, Any] | None = None


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


SCHEDULED = ("Scheduled Event",)
SCHEDULE_SOURCES = ("aws.events", "aws.scheduler", "mlreaper")
