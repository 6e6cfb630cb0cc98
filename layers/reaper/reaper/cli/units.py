"""`reaper report --units`: the week's unit costs beside last week's (reaper.report.units; docs/unit-costs.md)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from reaper.cli.formats import to_json_lines
from reaper.kinds.bedrock_pt.settings import BedrockPtSettings
from reaper.record.runtime import Runtime
from reaper.report import units


def report(rt: Runtime, now: datetime, output: str, out: Callable[[str], None]) -> int:
    """One row per project (training), endpoint and Bedrock model, in each region the runtime covers."""
    regions = rt.settings.regions or ((rt.home_region,) if rt.home_region else ())
    found: list[units.UnitCost] = []
    for region in regions:
        clients = rt.clients(region)
        found += units.read(
            clients("sagemaker"),
            clients("cloudwatch"),
            region,
            now,
            units.price_book(clients.pricer, rt.settings.of(BedrockPtSettings).model_unit_hourly_usd),
            bedrock=clients("bedrock"),
        )
    if output == "json":
        for line in to_json_lines(u.as_json() for u in found):
            out(line)
        return 0
    week = units.Weeks.ending(now)
    out(f"Unit costs, week to {week.end:%Y-%m-%d %H:%M} UTC (list prices; change on the week before):")
    for u in found:
        out(f"  {units.line(u)}")
    if not found:
        out("  no training runs, endpoints in service or Bedrock token metrics in either week")
    return 0
