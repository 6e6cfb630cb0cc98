"""The storage kind's parts, typed: the one module its declaration names (`parts="reaper.kinds.storage.parts:PARTS"`), so
mypy checks its discover, signals, decide and the rest against `kinds.base.Parts` (a wrong signature fails `mypy --strict`)."""

from __future__ import annotations

from reaper.kinds.base import Parts, signals_of, state_of
from reaper.kinds.storage import actions, discover, rules, signals
from reaper.kinds.storage.model import StorageSignal

PARTS: Parts[StorageSignal] = Parts(
    discover=discover.discover,
    signals=signals_of(signals),
    decide=rules.decide,
    current_state=state_of(actions),
    undo_hint=actions.undo_hint,
    current_read=actions.current_read,
    kill_decision=rules.kill_decision,
    guard=actions.guard,
)
