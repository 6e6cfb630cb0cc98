"""The ec2 kind's parts, typed: the one module its declaration names (`parts="reaper.kinds.ec2.parts:PARTS"`), so
mypy checks its discover, signals, decide and the rest against `kinds.base.Parts` (a wrong signature fails `mypy --strict`)."""

from __future__ import annotations

from reaper.kinds.base import Parts, signals_of, state_of
from reaper.kinds.ec2 import actions, discover, rules, signals
from reaper.kinds.ec2.model import Ec2Signal

PARTS: Parts[Ec2Signal] = Parts(
    discover=discover.discover,
    signals=signals_of(signals),
    decide=rules.decide,
    current_state=state_of(actions),
    undo_hint=actions.undo_hint,
    kill_decision=rules.kill_decision,  # never what a fleet manages, nor what cannot stop
    guard=rules.guard,  # managed, instance store, Spot that cannot stop: whatever asks (reaper.sweep.gate)
)
