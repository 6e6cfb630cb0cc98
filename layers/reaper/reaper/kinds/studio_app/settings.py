"""The Studio kind's own settings (docs/kinds/studio-app.md), read from their REAPER_* variables (reaper.core.settings)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from reaper.core.settings import KindSettings


class StudioAppSettings(KindSettings):
    ENV_VARS: ClassVar[dict[str, str]] = {"REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES": "enforce_idle_shutdown_minutes"}

    # turn the domains' built-in idle shutdown on with this timeout (None: only report domains where it
    # is off). AWS accepts 60..525,600 minutes.
    enforce_idle_shutdown_minutes: int | None = Field(default=None, ge=60, le=525600)
