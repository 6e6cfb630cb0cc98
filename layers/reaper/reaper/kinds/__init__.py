"""The registry of kinds: one package each, `reaper/kinds/<kind>/`, whose `__init__.py` declares it.

Adding a kind: its package, its template statements, an event fixture and its tests. A kind's parts
are imported on first use: a function that sweeps one kind does not pay, at cold start, for the others.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from reaper.core.errors import UsageError
from reaper.core.kind_names import KIND_PACKAGES as KIND_PACKAGES
from reaper.kinds.base import Kind, KindDeclaration

_loaded: dict[str, Kind] = {}


def declaration(name: str) -> KindDeclaration:
    decl: KindDeclaration = importlib.import_module(KIND_PACKAGES[name]).DECLARATION
    if decl.name != name:
        raise RuntimeError(f"{KIND_PACKAGES[name]} declares kind {decl.name!r}, registered as {name!r}")
    return decl


class _Registry(Mapping[str, Kind]):
    """{name: Kind}, reading each kind's declaration when it is first asked for."""

    def __getitem__(self, name: str) -> Kind:
        if name not in _loaded:
            _loaded[name] = Kind(declaration(name))
        return _loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(KIND_PACKAGES)

    def __len__(self) -> int:
        return len(KIND_PACKAGES)


REGISTRY: Mapping[str, Kind] = _Registry()


def get(name: str) -> Kind:
    if name not in KIND_PACKAGES:
        raise UsageError(f"unknown kind {name!r} (available: {', '.join(sorted(KIND_PACKAGES))})")
    return REGISTRY[name]


def all_kinds() -> list[Kind]:
    return [REGISTRY[name] for name in KIND_PACKAGES]
