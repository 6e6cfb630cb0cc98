"""The studio-app kind's parts, typed: the one module its declaration names (`parts="reaper.kinds.studio_app.parts:PARTS"`), so
mypy checks its discover, signals, decide and the rest against `kinds.base.Parts` (a wrong signature fails `mypy --strict`)."""

from __future__ import annotations

from reaper.core.jupyter_verdict import JupyterReading
from reaper.kinds.base import Parts, signals_of, state_of
from reaper.kinds.studio_app import actions, discover, rules, signals
from reaper.kinds.studio_app.model import AppActivity

PARTS: Parts[AppActivity | JupyterReading] = Parts(
    discover=discover.discover,
    signals=signals_of(signals),
    decide=rules.decide,
    current_state=state_of(actions),
    undo_hint=actions.undo_hint,
    kill_decision=rules.kill_decision,  # apps only, never a domain
)
