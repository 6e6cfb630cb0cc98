"""The storage kind's parts, typed: the one module its declaration names (`parts="reaper.kinds.storage.parts:PARTS"`), so
mypy checks its discover, signals, decide and the rest against `kinds.base.Parts` (a wrong signature fails `mypy --strict`)."""

from __future__ import annotations

from collections.abc import Mapping

from reaper.core.model import Resource
from reaper.kinds.base import Parts, SignalContext, state_of
from reaper.kinds.storage import actions, discover, rules, signals
from reaper.kinds.storage.model import StorageSignal


def _signals(ctx: SignalContext, resources: list[Resource]) -> Mapping[str, StorageSignal]:
    """Looked up when called (a test may patch it). The log: whether a restore record names each of the reaper's own
    snapshots that no volume marks (signals.recorded)."""
    return signals.signals(ctx.clients, resources, ctx.settings, ctx.now, ctx.log)


PARTS: Parts[StorageSignal] = Parts(
    discover=discover.discover,
    signals=_signals,
    decide=rules.decide,
    current_state=state_of(actions),
    undo_hint=actions.undo_hint,
    current_read=actions.current_read,
    kill_decision=rules.kill_decision,
    guard=actions.guard,
)
