"""The activity the reaper can read for Studio apps: Canvas's metric, and (JupyterReads=on) the Jupyter
server of the JupyterLab and classic JupyterServer apps nothing else judges.

Canvas: CloudWatch `TimeSinceLastActive` in `/aws/sagemaker/Canvas/AppActivity`, per DomainId and
UserProfileName (seconds since the user was last active), read for every candidate Canvas app in the
same batched GetMetricData (500 queries a call). No datapoint means unknown, never idle.
https://aws.amazon.com/blogs/machine-learning/optimizing-costs-for-amazon-sagemaker-canvas-with-automatic-shutdown-of-idle-apps/

JupyterLab and Code Editor: nothing is read. DescribeApp's LastUserActivityTimestamp "is also
updated when SageMaker AI performs health checks without user activity. As a result, this value is
set to the same value as LastHealthCheckTimestamp" (DescribeApp reference): it is neither activity
nor idleness, so no call is spent on it. SageMaker's own idle shutdown (see rules) is what reclaims
those apps where the domain has it on. Classic KernelGateway apps: AWS records no activity for them.

JupyterReads=on: a JupyterLab app whose domain or user profile has idle shutdown off (or whose profile was not
read) or that runs a custom image, and a
classic JupyterServer app on a billed instance, are judged by their own Jupyter server
(kinds/studio_app/studio_jupyter.py: CreatePresignedDomainUrl, then read-only GETs), like a notebook without
the agent. Code Editor is not Jupyter: nothing is read for it.

Not read (so no query, no URL): apps that are exempt, snoozed or badly tagged, production apps (IAM
denies their URL too; their verdict does not depend on it), and apps younger than their idle window.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from reaper.aws import metrics
from reaper.aws.clients import Clients
from reaper.core.jupyter_verdict import JupyterReading
from reaper.core.model import Resource
from reaper.core.policy import is_production, read_tags, screen
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc, sweep_turn
from reaper.kinds.studio_app import studio_jupyter
from reaper.kinds.studio_app.model import CANVAS, CANVAS_METRIC, CANVAS_NAMESPACE, KIND, AppActivity, AppFacts

LOOKBACK = timedelta(hours=1)  # the newest datapoint within the last hour says how long the app has been inactive
PERIOD = 300


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, AppActivity | JupyterReading]:
    out: dict[str, AppActivity | JupyterReading] = {**_canvas(clients, resources, settings, now)}
    if settings.jupyter_reads:
        readable = [r for r in resources if _worth_opening(r, settings, now)]
        out.update(
            studio_jupyter.read_all(clients("sagemaker"), readable, turn=sweep_turn(now, settings.sweep_schedule)) if readable else {}
        )
    return out


def _canvas(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> dict[str, AppActivity]:
    queries = [
        metrics.MetricQuery(
            key=r.id,
            namespace=CANVAS_NAMESPACE,
            metric=CANVAS_METRIC,
            dimensions=(("DomainId", r.facts.domain_id), ("UserProfileName", r.facts.user_profile or "")),
            stat="Maximum",
            period=PERIOD,
        )
        for r in resources
        if _worth_reading(r, settings, now)
    ]
    if not queries:
        return {}
    end = as_utc(now)
    series = metrics.fetch(clients("cloudwatch"), queries, end - LOOKBACK, end)
    newest = {key: max(points, key=lambda p: p[0]) for key, points in series.items() if points}  # whatever order CloudWatch returns
    return {key: AppActivity(inactive_seconds=value, at=at) for key, (at, value) in newest.items()}


def _worth_reading(r: Resource, settings: Settings, now: datetime) -> bool:
    if not isinstance(r.facts, AppFacts) or r.state != "InService" or r.facts.app_type != CANVAS:
        return False
    return _judgeable(r, settings, now)


def _worth_opening(r: Resource, settings: Settings, now: datetime) -> bool:
    """An app whose Jupyter server JupyterReads may open: readable (or covered by SageMaker's idle shutdown and still
    running past its timeout plus the margin: trust, then verify), and neither production nor protected."""
    if not isinstance(r.facts, AppFacts) or r.state != "InService":
        return False
    due = r.facts.verify_from(r.created_at) if r.facts.verifiable else None
    if not r.facts.jupyter_readable and (due is None or as_utc(now) < due):
        return False
    return _judgeable(r, settings, now) and not is_production(read_tags(r.tags, settings), settings)


def _judgeable(r: Resource, settings: Settings, now: datetime) -> bool:
    """Not exempt, snoozed or badly tagged, and at least as old as its idle window."""
    view = read_tags(r.tags, settings)
    if screen(view, settings, now) is not None:
        return False
    window = view.idle_minutes or settings.idle_for(KIND)
    return r.created_at is None or as_utc(now) - as_utc(r.created_at) >= timedelta(minutes=window)
