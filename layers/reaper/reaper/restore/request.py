"""What the restore function runs: {"name": "..."} in, the same restore as `reaper restore NAME` out.

It does not wait for a recreated endpoint to be InService (REAPER_RESTORE_WAIT_MINUTES=0 in its
environment): the endpoint function finishes the restore on the state-change event.
A request a wake schedule sent ({"wake": <schedule>}) restores only what is still the reaper's to
restore (reaper.kinds.endpoint.wakeup); a person's request (CLI, Slack button) restores regardless.
A restore that cannot go ahead (record missing, config deleted …) is answered and posted, not
raised, since retrying cannot help; an AWS failure is raised, so the caller (Scheduler) retries.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from reaper.core.errors import BadEventError, ReaperError, RestoreError
from reaper.core.events import parse_model
from reaper.core.observability import logger
from reaper.record.message import NoticeMessage
from reaper.record.notices import post_notice
from reaper.record.runtime import Runtime
from reaper.restore import run

# what an endpoint wake's payload said before it named its schedule (reaper.kinds.endpoint.wake): such a
# schedule, made by an earlier version and still pending, is a wake too
LEGACY_WAKE_REASONS = frozenset({"start of working hours", "before its usual traffic"})


class RestoreRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1, max_length=128)
    reason: str = ""
    wake: str = Field(default="", max_length=64)  # the schedule that sent it (wake.schedule_restore); empty: a person asked

    @property
    def is_wake(self) -> bool:
        return bool(self.wake) or self.reason in LEGACY_WAKE_REASONS


def parse_restore_request(event: Any) -> RestoreRequest:
    if not isinstance(event, dict):
        raise BadEventError(f'expected a JSON object like {{"name": "my-endpoint"}}, got {type(event).__name__}')
    return parse_model(RestoreRequest, event, "a restore request")


class RestoreAnswer(TypedDict, total=False):
    """The restore function's answer: the name, whether it went ahead, what it said, and its result or error."""

    name: str
    ok: bool
    result: str
    error: str
    progress: list[str]


def handle_restore_request(event: Any, rt: Runtime, now: datetime | None = None) -> RestoreAnswer:
    now = now or datetime.now(UTC)
    request = parse_restore_request(event)
    progress: list[str] = []
    try:
        if request.is_wake:
            result = run.wake(rt, request.name.strip(), request.wake, now, progress.append)
        else:
            result = run.restore(rt, request.name.strip(), now, progress.append)
    except ReaperError as exc:
        logger.error("restore did not go ahead", extra={"restore_name": request.name, "error": str(exc)})
        if isinstance(exc, RestoreError):
            notice = NoticeMessage(
                kind="restore",
                id=request.name,
                region=rt.home_region,
                title=f"Could not restore {request.name}" + (f" ({request.reason})" if request.reason else ""),
                text=str(exc),
            )
            post_notice(rt, notice, now, f"restore-refused-{request.name}-{now:%Y%m%dT%H%M}")
        return {"name": request.name, "ok": False, "error": str(exc), "progress": progress}
    logger.info("restore", extra={"restore_name": request.name, "result": result})
    return {"name": request.name, "ok": True, "result": result, "progress": progress}
