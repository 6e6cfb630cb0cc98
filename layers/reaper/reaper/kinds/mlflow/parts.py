"""The mlflow kind's parts, typed: the one module its declaration names (`parts="reaper.kinds.mlflow.parts:PARTS"`), so
mypy checks its discover, signals, decide and the rest against `kinds.base.Parts`."""

from __future__ import annotations

from reaper.kinds.base import Parts, signals_of, state_of
from reaper.kinds.mlflow import actions, discover, rules, signals
from reaper.kinds.mlflow.model import ServerSignal

PARTS: Parts[ServerSignal] = Parts(
    discover=discover.discover,
    signals=signals_of(signals),
    decide=rules.decide,
    current_state=state_of(actions),
    undo_hint=actions.undo_hint,
    discover_named=discover.discover_named,
    current_read=actions.current_read,
)
