"""The Bedrock Provisioned Throughput kind's own settings (docs/kinds/bedrock-pt.md), read from their
REAPER_* variables (reaper.core.settings)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from reaper.core.settings import KindSettings


class BedrockPtSettings(KindSettings):
    ENV_VARS: ClassVar[dict[str, str]] = {"REAPER_BEDROCK_MODEL_UNIT_HOURLY_USD": "model_unit_hourly_usd"}

    # the price per model unit-hour its cost estimates use (an estimate: AWS prices it per model and
    # commitment; 0 = no dollar figures)
    model_unit_hourly_usd: float = Field(default=20.0, ge=0, le=10_000)
