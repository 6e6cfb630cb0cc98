"""The capacity kind's parts, typed: the one module its declaration names (`parts="reaper.kinds.capacity.parts:PARTS"`), so
mypy checks its discover, signals, decide and the rest against `kinds.base.Parts` (a wrong signature fails `mypy --strict`)."""

from __future__ import annotations

from reaper.kinds.base import Parts, signals_of, state_of
from reaper.kinds.capacity import actions, discover, rules, signals
from reaper.kinds.capacity.model import CapacitySignal

PARTS: Parts[CapacitySignal] = Parts(
    discover=discover.discover,
    signals=signals_of(signals),
    decide=rules.decide,
    current_state=state_of(actions),
    undo_hint=actions.undo_hint,
    discover_named=discover.discover,
    kill_decision=rules.kill_decision,  # never a Capacity Block, a committed reservation or a plan
)
