"""The activity agent's reports for every running notebook, by the stack's AgentChannel:

- "metric" (the default; docs/kinds/notebook.md): MLReaper/NotebookActivity in GetMetricData batches, as the
  agent publishes it; the reaper never calls CloudWatch Logs.
- "logs": one FilterLogEvents scan of the stack's log group (kinds/notebook/samples.py) over the
  usual window (the longer of the account's idle window and LOOKBACK_MINUTES); then, only for the
  notebooks whose `reaper:idle-minutes` tag asks for more, a read of their own streams (logStreamNames,
  up to 100 a request) further back. One notebook's 7-day window must not stretch the scan of every
  notebook: at 10,000 notebooks that is 3,423 pages instead of 62 (178 bytes a sample in a 1 MB page),
  past the scan's budget and the function's timeout, so every notebook would be unknown. A further
  read that fails leaves only its own notebooks unknown. Then one batched GetMetricData only for the
  notebooks with the agent attached and no sample in the window: agents installed before the stack
  switched to logs keep publishing the metric until their notebook's next start, so they are judged
  from it meanwhile. Notebooks without the agent get no metric read (their data would be ignored anyway).

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
from dataclasses import replace
from datetime import datetime, timedelta

from reaper.aws.clients import Clients
from reaper.aws.metrics import MetricQuery, fetch
from reaper.core.model import Resource
from reaper.core.policy import is_production, read_tags, screen
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc, sweep_turn
from reaper.kinds.notebook import notebook_jupyter, samples
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
from reaper.kinds.notebook.settings import NotebookSettings


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, ActivitySignal]:
    running = [r for r in resources if r.state == "InService"]
    if not running:
        return {}
    read = _agent_signals(clients, running, settings, now)
    if not settings.jupyter_reads:
        return read
    return {**read, **_with_jupyter(clients, running, read, settings, now)}


def _with_jupyter(
    clients: Clients, running: list[Resource], read: Mapping[str, ActivitySignal], settings: Settings, now: datetime
) -> dict[str, ActivitySignal]:
    """JupyterReads=on: the Jupyter server's reading for the notebooks without the agent (whose agent data
    would not be trusted), except those the reaper may not change (exempt, snoozed, bad tag, production
    stage): IAM denies their URL too, and their verdict does not depend on it."""
    agent = settings.of(NotebookSettings).agent_lifecycle_config
    names = [
        r.id
        for r in running
        if r.facts_as(NotebookFacts).lifecycle_config != agent
        and screen(view := read_tags(r.tags, settings), settings, now) is None
        and not is_production(view, settings)
    ]
    readings = notebook_jupyter.read_all(clients("sagemaker"), names, turn=sweep_turn(now, settings.sweep_schedule))
    end = align(now)
    return {name: replace(read.get(name) or ActivitySignal([], end), jupyter=reading) for name, reading in readings.items()}


def _agent_signals(clients: Clients, running: list[Resource], settings: Settings, now: datetime) -> dict[str, ActivitySignal]:
    end = align(now)
    usual = max(settings.idle_for(KIND), LOOKBACK_MINUTES)
    windows = {r.id: read_tags(r.tags, settings).idle_minutes or 0 for r in running}
    start = end - timedelta(minutes=max([usual, *windows.values()]))
    if settings.of(NotebookSettings).agent_channel != "logs":
        return _from_metric(clients, running, start, end)
    logs, group = clients("logs"), activity_log_group(settings)
    usual_start = end - timedelta(minutes=usual)
    try:
        read = samples.read(logs, group, {r.id for r in running}, usual_start, max(as_utc(now), end))
    except samples.SamplesUnreadable as exc:
        return {r.id: ActivitySignal([], end, source="logs", unreadable=str(exc)) for r in running}
    out = {name: ActivitySignal(series, end, source="logs") for name, series in read.items()}
    further = sorted((name for name, minutes in windows.items() if minutes > usual), key=lambda n: (-windows[n], n))
    for i in range(0, len(further), samples.MAX_STREAMS):
        batch = further[i : i + samples.MAX_STREAMS]
        batch_start = end - timedelta(minutes=windows[batch[0]])  # the longest first: each batch reads as far as its first needs
        try:
            older = samples.read(logs, group, set(batch), batch_start, usual_start, streams=batch)
        except samples.SamplesUnreadable as exc:
            out.update(
                {n: ActivitySignal([], end, source="logs", unreadable=f"{exc} (window of the reaper:idle-minutes tag)") for n in batch}
            )
            continue
        for name, series in older.items():
            out[name] = ActivitySignal(series + list(out[name].series if name in out else []), end, source="logs")
    old_agents = [
        r
        for r in running
        if r.id not in read and r.facts_as(NotebookFacts).lifecycle_config == settings.of(NotebookSettings).agent_lifecycle_config
    ]
    if old_agents:
        out.update({key: signal for key, signal in _from_metric(clients, old_agents, start, end).items() if signal.series})
    return out


def _from_metric(clients: Clients, notebooks: list[Resource], start: datetime, end: datetime) -> dict[str, ActivitySignal]:
    queries = [MetricQuery(r.id, NAMESPACE, METRIC, (("NotebookInstanceName", r.id),), stat="Maximum", period=300) for r in notebooks]
    series = fetch(clients("cloudwatch"), queries, start, end + PERIOD)  # and the period in progress (above)
    return {key: ActivitySignal(points, end, source="metric") for key, points in series.items()}
