"""Plain data for the notebook kind: what discovery knows of a notebook, and its activity signal."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from reaper.aws.metrics import Series
from reaper.core.jupyter_verdict import JupyterKernel as JupyterKernel  # what JupyterReads reads, named here as before
from reaper.core.jupyter_verdict import JupyterReading as JupyterReading
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.notebook.settings import NotebookSettings

KIND = "notebook"
NAMESPACE = "MLReaper"  # the agent's metric (docs/kinds/notebook.md; AgentChannel=metric; with logs, agents installed before)
METRIC = "NotebookActivity"
PERIOD = timedelta(minutes=5)
LOOKBACK_MINUTES = 180  # read at least this much history, to say how long a notebook has been idle
SILENT_AFTER = timedelta(minutes=30)  # InService this long with the agent and no datapoint: the agent cannot publish


@dataclass(frozen=True)
class NotebookFacts:
    lifecycle_config: str | None  # the lifecycle configuration attached (the agent's, or another, or none)
    # when it went InService: ListNotebookInstances' LastModifiedTime while the status is InService
    # (a start is the last change an InService notebook had); None when not InService or unknown
    in_service_since: datetime | None = None


@dataclass(frozen=True)
class ActivitySignal:
    series: Series  # (period start, 0 or 1), oldest first
    window_end: datetime  # end of the last complete 5-minute period
    source: str = "metric"  # "metric": MLReaper/NotebookActivity; "logs": the agent's samples (AgentChannel=logs)
    unreadable: str | None = None  # the samples could not be read (why): unknown, whatever the series says
    jupyter: JupyterReading | None = None  # JupyterReads=on, for a notebook without the agent


def activity_log_group(settings: Settings) -> str:
    """The stack's log group for the agent's samples with AgentChannel=logs (template.yaml NotebookActivityLogGroup)."""
    return f"/mlreaper/{settings.of(NotebookSettings).agent_lifecycle_config}"


def align(now: datetime) -> datetime:
    """The start of the 5-minute period `now` falls in."""
    now = as_utc(now)
    return now.replace(minute=now.minute - now.minute % 5, second=0, microsecond=0)
