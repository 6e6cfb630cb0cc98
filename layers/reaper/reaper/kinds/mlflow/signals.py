"""A tracking server's use: nothing AWS publishes as a metric; with MlflowReads=on, its own MLflow API and
CloudTrail's record of its UI being opened (docs/kinds/mlflow.md).

Off (the default): SageMaker's CloudWatch page lists no metric for MLflow tracking servers and `IsActive` is
whether it runs, so every running server gets the same signal: not documented, unknown.

On: for the running servers the reaper may change (not exempt, snoozed, mis-tagged or production: IAM denies
their MLflow API too, and their verdict does not depend on it), the newest run activity its MLflow REST API
reports (kinds/mlflow/tracking_api.py) and the times its UI URL was asked for in the idle window
(kinds/mlflow/ui_opens.py). A server either read fails for is unknown, never idle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta

from reaper.aws import cloudtrail
from reaper.aws.clients import Clients
from reaper.core.model import Resource
from reaper.core.policy import is_production, read_tags, screen
from reaper.core.settings import Settings
from reaper.core.timeutil import sweep_turn
from reaper.kinds.mlflow import RUNNING, tracking_api, ui_opens
from reaper.kinds.mlflow.model import TRAIL_UNREADABLE, ServerFacts, ServerSignal, UsageReading
from reaper.kinds.mlflow.settings import MlflowSettings


def window_minutes(resource: Resource, settings: Settings) -> int:
    """Its idle window: the `reaper:idle-minutes` tag, else MlflowIdleHours."""
    return read_tags(resource.tags, settings).idle_minutes or settings.of(MlflowSettings).mlflow_idle_hours * 60


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, ServerSignal]:
    plain = {r.id: ServerSignal(documented=False) for r in resources}
    if not settings.of(MlflowSettings).mlflow_reads:
        return plain
    readable = [
        r
        for r in resources
        if r.state in RUNNING and screen(view := read_tags(r.tags, settings), settings, now) is None and not is_production(view, settings)
    ]
    if not readable:
        return plain
    targets = [tracking_api.Target(r.id, r.region, r.facts_as(ServerFacts).url) for r in readable]
    turn = sweep_turn(now, settings.sweep_schedule)
    readings = tracking_api.read_all(
        targets, clients.credentials(), timeout=tracking_api.REQUEST_TIMEOUT, budget=tracking_api.BUDGET, turn=turn
    )
    start = now - timedelta(minutes=max(window_minutes(r, settings) for r in readable))
    readings = _with_ui_opens(clients, readings, start, now)
    return {**plain, **{name: ServerSignal(documented=True, reading=reading) for name, reading in readings.items()}}


def _with_ui_opens(clients: Clients, readings: dict[str, UsageReading], start: datetime, now: datetime) -> dict[str, UsageReading]:
    """Each reading with the newest UI open in [start, now]; a server whose opens could not be read whole is unknown."""
    try:
        found, whole = ui_opens.opens(clients("cloudtrail"), readings, start, now)
    except cloudtrail.TrailUnreadable as exc:
        why = f"{exc}: whether its UI was opened is unknown"
        return {n: r if r.unreadable else replace(r, unreadable=why, unknown=TRAIL_UNREADABLE) for n, r in readings.items()}
    out: dict[str, UsageReading] = {}
    for name, reading in readings.items():
        times = found.get(name, [])
        if not times and not whole and reading.unreadable is None:
            why = f"more than {cloudtrail.PAGE * cloudtrail.MAX_PAGES:,} MLflow UI opens in the window: not all read"
            reading = replace(reading, unreadable=why, unknown=TRAIL_UNREADABLE)
        out[name] = replace(reading, last_ui_open=max(times, default=None), ui_opens=len(times))
    return out
