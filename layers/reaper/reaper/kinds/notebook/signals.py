"""The activity agent's samples for every running notebook: one FilterLogEvents scan of the stack's
log group (kinds/notebook/samples.py), and one batched GetMetricData only for the notebooks with the
agent attached and no sample in the window: agents installed before the stack moved to Logs keep
publishing MLReaper/NotebookActivity until their notebook's next start, so they are judged from it
meanwhile. Notebooks without the agent get no metric read (their data would be ignored anyway)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from reaper.clients import Clients
from reaper.kinds.notebook import samples
from reaper.kinds.notebook.model import KIND, LOOKBACK_MINUTES, METRIC, NAMESPACE, ActivitySignal, NotebookFacts, activity_log_group, align
from reaper.metrics import MetricQuery, fetch
from reaper.model import Resource
from reaper.policy import read_tags
from reaper.settings import Settings


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, ActivitySignal]:
    running = [r for r in resources if r.state == "InService"]
    if not running:
        return {}
    end = align(now)
    longest = max([settings.idle_for(KIND)] + [read_tags(r.tags, settings).idle_minutes or 0 for r in running])
    start = end - timedelta(minutes=max(longest, LOOKBACK_MINUTES))
    try:
        read = samples.read(clients("logs"), activity_log_group(settings), {r.id for r in running}, start, end)
    except samples.SamplesUnreadable as exc:
        return {r.id: ActivitySignal([], end, unreadable=str(exc)) for r in running}
    out = {name: ActivitySignal(series, end) for name, series in read.items()}
    old_agents = [
        r for r in running if r.id not in read and r.facts_as(NotebookFacts).lifecycle_config == settings.agent_lifecycle_config
    ]
    if old_agents:
        queries = [MetricQuery(r.id, NAMESPACE, METRIC, (("NotebookInstanceName", r.id),), stat="Maximum", period=300) for r in old_agents]
        series = fetch(clients("cloudwatch"), queries, start, end)
        out.update({key: ActivitySignal(points, end, source="metric") for key, points in series.items() if points})
    return out
