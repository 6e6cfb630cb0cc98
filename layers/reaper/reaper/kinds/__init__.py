"""The registry of kinds. Adding a kind: one module here, its template statements, an event, tests.

Kinds are imported on first use: a function that sweeps one kind does not pay, at cold start,
for importing the others.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from reaper.errors import UsageError
from reaper.kinds.base import Kind

KIND_CLASSES: dict[str, str] = {
    "notebook": "reaper.kinds.notebook:NotebookKind",
    "endpoint": "reaper.kinds.endpoint:EndpointKind",
    "training-job": "reaper.kinds.training_job:TrainingJobKind",
    "fsx": "reaper.kinds.fsx:FsxKind",
}
_loaded: dict[str, Kind] = {}


class _Registry(Mapping[str, Kind]):
    """{name: Kind}, importing each kind's module when it is first asked for."""

    def __getitem__(self, name: str) -> Kind:
        if name not in _loaded:
            module_name, class_name = KIND_CLASSES[name].split(":")
            _loaded[name] = getattr(importlib.import_module(module_name), class_name)()
        return _loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(KIND_CLASSES)

    def __len__(self) -> int:
        return len(KIND_CLASSES)


REGISTRY: Mapping[str, Kind] = _Registry()


def get(name: str) -> Kind:
    if name not in KIND_CLASSES:
        raise UsageError(f"unknown kind {name!r} (available: {', '.join(sorted(KIND_CLASSES))})")
    return REGISTRY[name]


def all_kinds() -> list[Kind]:
    """Every kind, imported (restore needs them all: each registers its restorer on import)."""
    return [REGISTRY[name] for name in KIND_CLASSES]
