"""The mlflow kind's parts, typed: the one module its declaration names (`parts="reaper.kinds.mlflow.parts:PARTS"`), so
mypy checks its discover, signals, decide and the rest against `kinds.base.Parts`."""

from __future__ import annotations

from collections.abc import Mapping

from reaper.aws.clients import Clients
from reaper.core.model import Resource
from reaper.kinds.base import Parts, SignalContext
from reaper.kinds.mlflow import actions, discover, rules, signals
from reaper.kinds.mlflow.model import ServerSignal


def _signals(ctx: SignalContext, resources: list[Resource]) -> Mapping[str, ServerSignal]:
    return signals.signals(ctx, resources)


def _current_state(clients: Clients, resource: Resource) -> str | None:
    """Read just before a change; looked up when called (a test may patch it)."""
    return actions.current_state(clients, resource)


PARTS: Parts[ServerSignal] = Parts(
    discover=discover.discover,
    signals=_signals,
    decide=rules.decide,
    current_state=_current_state,
    undo_hint=actions.undo_hint,
    discover_named=discover.discover_named,
    current_read=actions.current_read,
)
