"""The Bedrock Provisioned Throughput kind's own settings (docs/kinds/bedrock-pt.md), read from their
REAPER_* variables (reaper.core.settings)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from reaper.core.settings import KindSettings


class BedrockPtSettings(KindSettings):
    ENV_VARS: ClassVar[dict[str, str]] = {"REAPER_BEDROCK_MODEL_UNIT_HOURLY_USD": "model_unit_hourly_usd"}

    # deprecated, kept as the admin's explicit override of the price per model-unit hour (AWS's Price List
    # holds no entry the reaper can read for it, docs/prices.md); every figure it makes says it is the
    # admin's. 0 (the default): unpriced, never $0
    model_unit_hourly_usd: float = Field(default=0.0, ge=0, le=10_000)
