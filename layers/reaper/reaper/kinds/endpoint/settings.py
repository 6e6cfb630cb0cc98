"""The endpoint kind's own settings (docs/kinds/endpoint.md), read from their REAPER_* variables
(reaper.core.settings). The Scheduler group (REAPER_SCHEDULE_GROUP) stays shared: the FSx kind's
one-off checks are arranged in it too."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator

from reaper.core.settings import KindSettings


class EndpointSettings(KindSettings):
    ENV_VARS: ClassVar[dict[str, str]] = {
        "REAPER_ENDPOINT_OFF_HOURS_RESTORE": "endpoint_off_hours_restore",
        "REAPER_ENDPOINT_LEARNED_WAKE": "endpoint_learned_wake",
        "REAPER_ENDPOINT_WAKE_LEAD_MINUTES": "endpoint_wake_lead_minutes",
        "REAPER_RESTORE_FUNCTION_ARN": "restore_function_arn",
        "REAPER_SCHEDULER_ROLE_ARN": "scheduler_role_arn",
        "REAPER_RESTORE_WAIT_MINUTES": "restore_wait_minutes",
    }

    # off-hours restore: endpoints taken to zero off hours are brought back at the start of working hours
    endpoint_off_hours_restore: bool = False
    # learned wake (issues 27, 37; docs/kinds/endpoint.md, "Learned wake"): dev endpoints at zero between their
    # usual bursts, brought back just before each. On by default wherever a wake can be scheduled (the restore
    # function and the Scheduler role are set: the stack always sets them); asked for without them, refused
    endpoint_learned_wake: bool = True
    endpoint_wake_lead_minutes: int = Field(default=30, ge=5, le=720)  # before a burst, while no restore has measured the start-up
    # what a wake's schedule invokes, and the role it invokes it with
    restore_function_arn: str | None = None
    scheduler_role_arn: str | None = None
    # how long `reaper restore` follows an endpoint while it is Creating (the restore function: 0)
    restore_wait_minutes: int = Field(default=30, ge=0, le=1_440)

    @model_validator(mode="before")
    @classmethod
    def _learned_wake_default(cls, data: Any) -> Any:
        """Learned wake is on by default only where a wake can be scheduled; elsewhere (the CLI with no
        restore function) it is off unless asked for, and asked for without them it is refused below."""
        if isinstance(data, dict) and "endpoint_learned_wake" not in data:
            wired = bool(data.get("restore_function_arn")) and bool(data.get("scheduler_role_arn"))
            return {**data, "endpoint_learned_wake": wired}
        return data

    @model_validator(mode="after")
    def _wake_wired(self) -> EndpointSettings:
        if self.endpoint_learned_wake and not (self.restore_function_arn and self.scheduler_role_arn):
            raise ValueError(
                "REAPER_ENDPOINT_LEARNED_WAKE needs REAPER_RESTORE_FUNCTION_ARN and REAPER_SCHEDULER_ROLE_ARN "
                "(the schedule that brings an endpoint back invokes the restore function with that role)"
            )
        if self.endpoint_off_hours_restore and not (self.restore_function_arn and self.scheduler_role_arn):
            raise ValueError(
                "REAPER_ENDPOINT_OFF_HOURS_RESTORE needs REAPER_RESTORE_FUNCTION_ARN and REAPER_SCHEDULER_ROLE_ARN "
                "(the schedule invokes the restore function with that role)"
            )
        return self
