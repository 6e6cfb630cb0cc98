"""SageMaker notebook instances: stop them when the activity agent reports them idle.

Signal: MLReaper/NotebookActivity (1 = something active in the 5-minute period, 0 = nothing),
published by the agent the stack ships as a lifecycle configuration. Idle means every period
of the idle window reported 0; a gap anywhere in the window is unknown, and unknown is keep.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from reaper import pricing
from reaper.clients import Clients
from reaper.kinds.base import ActContext, Action, Kind
from reaper.metrics import MetricQuery, Series, fetch
from reaper.model import Decision, Resource, Verdict
from reaper.policy import TagView, in_working_hours, is_dev
from reaper.settings import Settings
from reaper.tagging import tags_by_arn
from reaper.timeutil import as_utc, human_duration

NAMESPACE = "MLReaper"
METRIC = "NotebookActivity"
PERIOD = timedelta(minutes=5)
LOOKBACK_MINUTES = 180  # read at least this much history, to say how long a notebook has been idle


@dataclass(frozen=True)
class ActivitySignal:
    series: Series  # (period start, 0 or 1), oldest first
    window_end: datetime  # end of the last complete 5-minute period


def _align(now: datetime) -> datetime:
    now = as_utc(now)
    return now.replace(minute=now.minute - now.minute % 5, second=0, microsecond=0)


def idle_window(view: TagView, settings: Settings) -> int:
    return view.idle_minutes or settings.idle_for("notebook")


def _stop(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    ctx.clients("sagemaker").stop_notebook_instance(NotebookInstanceName=resource.id)
    return "stopping; the notebook's ML storage volume is kept"


def _attach_agent(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    ctx.clients("sagemaker").update_notebook_instance(
        NotebookInstanceName=resource.id, LifecycleConfigName=ctx.settings.agent_lifecycle_config
    )
    return f"lifecycle configuration {ctx.settings.agent_lifecycle_config} attached; it reports from the next start"


class NotebookKind(Kind):
    name = "notebook"
    tag_resource_types = ("sagemaker:notebook-instance",)
    tag_service = "sagemaker"
    read_permissions = (
        "sagemaker:ListNotebookInstances",
        "sagemaker:DescribeNotebookInstance",
        "sagemaker:ListTags",
        "cloudwatch:GetMetricData",
    )
    actions: Mapping[str, Action] = {
        "stop": Action("stop", "stopped", ("sagemaker:StopNotebookInstance",), frozenset({"InService"}), _stop),
        "attach-agent": Action(
            "attach-agent", "attached the activity agent to", ("sagemaker:UpdateNotebookInstance",), frozenset({"Stopped"}), _attach_agent
        ),
    }

    @staticmethod
    def event_route(rt: Any, ev: Any, now: datetime) -> dict[str, Any] | None:
        from reaper.kinds.notebook_admission import route

        return route(rt, ev, now)

    def discover(self, clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
        tags = tags_by_arn(clients, list(self.tag_resource_types))
        out: list[Resource] = []
        paginator = clients("sagemaker").get_paginator("list_notebook_instances")
        for page in paginator.paginate(PaginationConfig={"PageSize": 100}):
            for nb in page.get("NotebookInstances", []):
                arn = nb["NotebookInstanceArn"]
                itype = nb.get("InstanceType")
                out.append(
                    Resource(
                        kind=self.name,
                        id=nb["NotebookInstanceName"],
                        arn=arn,
                        region=clients.region,
                        state=nb.get("NotebookInstanceStatus", "Unknown"),
                        tags=tags.get(arn, {}),
                        instance_type=itype,
                        hourly_usd=pricing.hourly(pricing.NOTEBOOK, clients.region, itype),
                        created_at=nb.get("CreationTime"),
                        changed_at=nb.get("LastModifiedTime"),
                        attrs={"lifecycle_config": nb.get("NotebookInstanceLifecycleConfigName")},
                    )
                )
        return out

    def signals(self, clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, Any]:
        running = [r for r in resources if r.state == "InService"]
        if not running:
            return {}
        end = _align(now)
        longest = max([settings.idle_for(self.name)] + [_idle_tag(r, settings) for r in running])
        start = end - timedelta(minutes=max(longest, LOOKBACK_MINUTES))
        queries = [
            MetricQuery(r.id, NAMESPACE, METRIC, (("NotebookInstanceName", r.id),), stat="Maximum", period=300)
            for r in running
        ]
        series = fetch(clients("cloudwatch"), queries, start, end)
        return {key: ActivitySignal(points, end) for key, points in series.items()}

    def decide(self, resource: Resource, signal: Any, view: TagView, settings: Settings, now: datetime) -> Decision:
        has_agent = resource.attrs.get("lifecycle_config") == settings.agent_lifecycle_config
        if resource.state != "InService":
            if resource.state == "Stopped" and settings.attach_agent and not resource.attrs.get("lifecycle_config"):
                return Decision(
                    Verdict.ACT,
                    "stopped notebook without the activity agent: attaching it so idleness can be seen after the next start",
                    action="attach-agent",
                    skip_grace=True,
                )
            return Decision(Verdict.KEEP, f"not running ({resource.state})")

        if settings.off_hours.enabled and not in_working_hours(settings, now) and (view.stage is None or is_dev(view, settings)):
            oh = settings.off_hours
            return Decision(
                Verdict.ACT,
                f"outside working hours ({','.join(oh.days)} {oh.start:%H:%M}-{oh.end:%H:%M} {oh.timezone})",
                action="stop",
                evidence={"policy": "off-hours"},
            )

        window = idle_window(view, settings)
        sig: ActivitySignal | None = signal
        points = sig.series if sig else []
        if not points and not has_agent:
            return Decision(
                Verdict.KEEP,
                f"no activity agent: no {NAMESPACE}/{METRIC} data and lifecycle configuration is "
                f"{resource.attrs.get('lifecycle_config') or 'none'} (attach {settings.agent_lifecycle_config} to let the reaper see idleness)",
                evidence={"agent": False},
            )
        window_end = sig.window_end if sig else _align(now)
        needed = math.ceil(window / 5)
        slots = [window_end - PERIOD * (k + 1) for k in range(needed)]
        by_slot = {_align(ts): v for ts, v in points}
        missing = [s for s in slots if s not in by_slot]
        active = [ts for ts, v in points if v > 0]
        last_active = max(active) + PERIOD if active else None
        evidence: dict[str, Any] = {"idle_window_minutes": window, "periods": needed, "missing_periods": len(missing)}
        if last_active is not None and last_active > window_end - timedelta(minutes=window):
            ago = human_duration(now - last_active) if now > last_active else "0 m"
            return Decision(Verdict.KEEP, f"active {ago} ago (idle window {window} min)", evidence={**evidence, "last_active": last_active})
        if missing:
            what = "no activity data" if len(missing) == needed else f"gap in activity data ({len(missing)} of {needed} periods missing)"
            return Decision(Verdict.KEEP, f"{what} in the last {window} min: unknown is not idle", evidence=evidence)
        if last_active is not None:
            idle_for = f"no activity for {human_duration(now - last_active)}"
        else:
            first = points[0][0] if points else window_end
            idle_for = f"no activity for at least {human_duration(now - first)}"
        return Decision(Verdict.ACT, idle_for, action="stop", evidence={**evidence, "last_active": last_active})

    def current_state(self, clients: Clients, resource: Resource) -> str | None:
        try:
            desc = clients("sagemaker").describe_notebook_instance(NotebookInstanceName=resource.id)
        except ClientError as exc:
            if "RecordNotFound" in str(exc) or exc.response.get("Error", {}).get("Code") == "ResourceNotFound":
                return None
            raise
        state: str = desc.get("NotebookInstanceStatus", "Unknown")
        return state

    def undo_hint(self, resource: Resource, action: str | None) -> str | None:
        if action == "stop":
            return (
                f"aws sagemaker start-notebook-instance --notebook-instance-name {resource.id} --region {resource.region}"
                "   # the ML storage volume and its files are kept"
            )
        if action == "attach-agent":
            return (
                f"aws sagemaker update-notebook-instance --notebook-instance-name {resource.id} "
                f"--disassociate-lifecycle-config --region {resource.region}"
            )
        return None


def _idle_tag(resource: Resource, settings: Settings) -> int:
    from reaper.policy import read_tags

    return read_tags(resource.tags, settings).idle_minutes or 0
