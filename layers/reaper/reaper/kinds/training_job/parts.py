"""The training-job kind's parts, typed: the one module its declaration names (`parts="reaper.kinds.training_job.parts:PARTS"`), so
mypy checks its discover, signals, decide and the rest against `kinds.base.Parts` (a wrong signature fails `mypy --strict`)."""

from __future__ import annotations

from reaper.kinds.base import Parts, signals_of, state_of
from reaper.kinds.training_job import actions, discover, rules, signals
from reaper.kinds.training_job.model import TrainingSignal

PARTS: Parts[TrainingSignal] = Parts(
    discover=discover.discover,
    signals=signals_of(signals),
    decide=rules.decide,
    current_state=state_of(actions),
    undo_hint=actions.undo_hint,
)
