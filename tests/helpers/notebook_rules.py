"""One notebook instance as the notebook rules judge it: the resource, its activity signal, and decide() at a fixed Wednesday."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper import kinds
from reaper.core.model import Resource
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.notebook.model import ActivitySignal, NotebookFacts
from reaper_devkit.seed import aligned

KIND = kinds.get("notebook")
NOW = datetime(2026, 12, 2, 14, 7, tzinfo=UTC)  # a Wednesday


def nb(
    tags: dict[str, str] | None = None,
    state: str = "InService",
    lifecycle: str | None = "mlreaper-activity-agent",
    since: datetime | None = None,
) -> Resource:
    facts = NotebookFacts(lifecycle, in_service_since=since)
    return Resource("notebook", "nb", "arn:aws:sagemaker:us-east-1:1:notebook-instance/nb", "us-east-1", state, tags or {}, facts=facts)


def signal(values: list[float | None], now: datetime = NOW) -> ActivitySignal:
    end = aligned(now)
    return ActivitySignal(sorted((end - timedelta(minutes=5 * (k + 1)), v) for k, v in enumerate(values) if v is not None), end)


DEFAULTS = Settings()


def decide(resource: Resource, sig: ActivitySignal | None, settings: Settings = DEFAULTS, now: datetime = NOW):
    return KIND.decide(resource, sig, read_tags(resource.tags, settings), settings, now)
