"""A sweep in parts as the continuation and chain tests drive it: the schedule group and role a deployment
gives it, a Lambda context whose clock the test runs, the parts' schedules and the event each would deliver."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from reaper.wiring import build_runtime
from tests.helpers import studio_fleet as fleet

GROUP = "mlreaper-sweeps"
ROLE = "arn:aws:iam::123456789012:role/mlreaper-SweepContinuationRole-AB12"
FUNCTION = "arn:aws:lambda:us-east-1:123456789012:function:mlreaper-studio-app"


class TickingContext:
    """A Lambda context whose remaining time drops by `tick` seconds each time it is read
    (invoked through an alias: the next part targets the function itself)."""

    invoked_function_arn = FUNCTION + ":live"
    function_name = "mlreaper-studio-app"
    memory_limit_in_mb = 512
    aws_request_id = "req"

    def __init__(self, seconds: float, tick: float = 1.0) -> None:
        self.left, self.tick = seconds, tick

    def get_remaining_time_in_millis(self) -> int:
        self.left -= self.tick
        return int(self.left * 1000)


def roomy() -> TickingContext:
    return TickingContext(300, tick=0)


def short() -> TickingContext:
    return TickingContext(40)


def schedules(aws: Any) -> list[dict[str, Any]]:
    scheduler = aws.client("scheduler")
    names = [s["Name"] for s in scheduler.list_schedules(GroupName=GROUP)["Schedules"]]
    return [scheduler.get_schedule(Name=n, GroupName=GROUP) for n in names]


def next_event(aws: Any, part: int) -> dict[str, Any]:
    """The event the schedule for `part` would deliver."""
    [s] = [s for s in schedules(aws) if json.loads(s["Target"]["Input"])["detail"]["part"] == part]
    return json.loads(s["Target"]["Input"])


def everything(aws: Any, sm: Any) -> list[str]:
    """The ids a sweep of the seeded account handles, from a fresh full dry-run pass."""
    from reaper import kinds
    from reaper.core.settings import Settings

    rt = build_runtime(Settings(), session=aws, region="us-east-1")
    return sorted(r.id for r in kinds.get("studio-app").discover(rt.clients(), rt.settings, datetime.now(UTC)))


def idle_ids(seeded: dict[str, Any]) -> list[str]:
    return sorted(fleet.app_id(seeded["apps"][c]) for c in ("idle-canvas", "idle-canvas-big"))
