"""The activity agent's reports for every running notebook, by the stack's AgentChannel:

- "metric" (the default, the contract): MLReaper/NotebookActivity in GetMetricData batches, as the
  agent publishes it; the reaper never calls CloudWatch Logs.
- "logs": one FilterLogEvents scan of the stack's log group (kinds/notebook/samples.py), and one
  batched GetMetricData only for the notebooks with the agent attached and no sample in the window:
  agents installed before the stack switched to logs keep publishing the metric until their
  notebook's next start, so they are judged from it meanwhile. Notebooks without the agent get no
  metric read (their data would be ignored anyway).

Both read past the end of the last whole period, into the period `now` falls in: the agent reports
at the end of each 5 minutes (a sample stamped 10:05:07 says what happened from 10:00 to 10:05), so
a sweep at 10:07 that stopped reading at 10:05 would miss the report that the owner came back, and
stop a notebook in use. A report in that partial period counts only as activity (rules.decide
judges idleness on whole periods), so it can keep a notebook and never stop one. The metric is read
to the end of that period (GetMetricData's EndTime is exclusive and best aligned to the Period:
https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html); the
samples to `now` (one stamped later is from a wrong clock or forged).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from reaper.clients import Clients
from reaper.kinds.notebook import samples
from reaper.kinds.notebook.model import (
    KIND,
    LOOKBACK_MINUTES,
    METRIC,
    NAMESPACE,
    PERIOD,
    ActivitySignal,
    NotebookFacts,
    activity_log_group,
    align,
)
from reaper.metrics import MetricQuery, fetch
from reaper.model import Resource
from reaper.policy import read_tags
from reaper.settings import Settings
from reaper.timeutil import as_utc


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, ActivitySignal]:
    running = [r for r in resources if r.state == "InService"]
    if not running:
        return {}
    end = align(now)
    longest = max([settings.idle_for(KIND)] + [read_tags(r.tags, settings).idle_minutes or 0 for r in running])
    start = end - timedelta(minutes=max(longest, LOOKBACK_MINUTES))
    if settings.agent_channel != "logs":
        return _from_metric(clients, running, start, end)
    try:
        read = samples.read(clients("logs"), activity_log_group(settings), {r.id for r in running}, start, max(as_utc(now), end))
    except samples.SamplesUnreadable as exc:
        return {r.id: ActivitySignal([], end, source="logs", unreadable=str(exc)) for r in running}
    out = {name: ActivitySignal(series, end, source="logs") for name, series in read.items()}
    old_agents = [
        r for r in running if r.id not in read and r.facts_as(NotebookFacts).lifecycle_config == settings.agent_lifecycle_config
    ]
    if old_agents:
        out.update({key: signal for key, signal in _from_metric(clients, old_agents, start, end).items() if signal.series})
    return out


def _from_metric(clients: Clients, notebooks: list[Resource], start: datetime, end: datetime) -> dict[str, ActivitySignal]:
    queries = [MetricQuery(r.id, NAMESPACE, METRIC, (("NotebookInstanceName", r.id),), stat="Maximum", period=300) for r in notebooks]
    series = fetch(clients("cloudwatch"), queries, start, end + PERIOD)  # and the period in progress (above)
    return {key: ActivitySignal(points, end, source="metric") for key, points in series.items()}
