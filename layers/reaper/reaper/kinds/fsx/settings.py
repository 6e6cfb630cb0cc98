"""The FSx kind's own settings (docs/kinds/fsx.md), read from their REAPER_* variables (reaper.core.settings)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from reaper.core.settings import KindSettings


class FsxSettings(KindSettings):
    ENV_VARS: ClassVar[dict[str, str]] = {
        "REAPER_FSX_JOB_LOOKBACK_DAYS": "job_lookback_days",
        "REAPER_FSX_STUCK_HOURS": "stuck_hours",
        "REAPER_FSX_CHECK_FUNCTION_ARN": "check_function_arn",
        "REAPER_FSX_CHECK_ROLE_ARN": "check_role_arn",
    }

    # how far back training jobs count as using a file system
    job_lookback_days: int = Field(default=14, ge=1, le=365)
    # when an unfinished backup or export is reported as stuck
    stuck_hours: float = Field(default=24.0, gt=0, le=8_760)
    # the one-off check the job-ended event arranges: the function it invokes, and the Scheduler role
    check_function_arn: str | None = None
    check_role_arn: str | None = None
