"""The bedrock-pt kind's parts, typed: the one module its declaration names (`parts="reaper.kinds.bedrock_pt.parts:PARTS"`), so
mypy checks its discover, signals, decide and the rest against `kinds.base.Parts` (a wrong signature fails `mypy --strict`)."""

from __future__ import annotations

from reaper.kinds.base import Parts, signals_of, state_of
from reaper.kinds.bedrock_pt import actions, discover, rules, signals
from reaper.kinds.bedrock_pt.model import PtSignal

PARTS: Parts[PtSignal] = Parts(
    discover=discover.discover,
    signals=signals_of(signals),
    decide=rules.decide,
    current_state=state_of(actions),
    undo_hint=actions.undo_hint,
    current_read=actions.current_read,
    kill_decision=rules.kill_decision,  # never a committed one
)
