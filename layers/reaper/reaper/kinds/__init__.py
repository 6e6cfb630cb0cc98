"""The registry of kinds. Adding a kind: one module here, its template statements, an event, tests."""

from __future__ import annotations

from reaper.errors import UsageError
from reaper.kinds.base import Kind
from reaper.kinds.endpoint import EndpointKind
from reaper.kinds.fsx import FsxKind
from reaper.kinds.notebook import NotebookKind
from reaper.kinds.training_job import TrainingJobKind

REGISTRY: dict[str, Kind] = {k.name: k for k in (NotebookKind(), EndpointKind(), TrainingJobKind(), FsxKind())}


def get(name: str) -> Kind:
    try:
        return REGISTRY[name]
    except KeyError:
        raise UsageError(f"unknown kind {name!r} (available: {', '.join(sorted(REGISTRY))})") from None


def all_kinds() -> list[Kind]:
    return list(REGISTRY.values())
