"""An endpoint sweep that schedules its own comeback, as the stack deploys it: the restore function, the
Scheduler role and group, and off-hours in Berlin (mon-fri from 08:00)."""

from __future__ import annotations

from typing import Any

import pytest

RESTORE_ARN = "arn:aws:lambda:us-east-1:123456789012:function:mlreaper-RestoreFunction"
ROLE_ARN = "arn:aws:iam::123456789012:role/mlreaper-RestoreSchedulerRole"
GROUP = "mlreaper-restores"

ENFORCE_NOW = {"REAPER_MODE": "enforce", "REAPER_GRACE_MINUTES": "0"}
WAKE_TARGETS = {"REAPER_RESTORE_FUNCTION_ARN": RESTORE_ARN, "REAPER_SCHEDULER_ROLE_ARN": ROLE_ARN, "REAPER_SCHEDULE_GROUP": GROUP}
OFF_HOURS = {
    **ENFORCE_NOW,
    "REAPER_OFF_HOURS": "true",
    "REAPER_TIMEZONE": "Europe/Berlin",
    "REAPER_WORK_DAYS": "mon-fri",
    "REAPER_WORK_START": "08:00",
    "REAPER_ENDPOINT_OFF_HOURS_RESTORE": "true",
    **WAKE_TARGETS,
}


def deploy_wake(aws: Any, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    """The function's environment `env`, and the schedule group the stack creates."""
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    aws.client("scheduler").create_schedule_group(Name=GROUP)
