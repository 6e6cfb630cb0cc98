"""The endpoint kind's parts, typed: the one module its declaration names (`parts="reaper.kinds.endpoint.parts:PARTS"`), so
mypy checks its discover, signals, decide and the rest against `kinds.base.Parts` (a wrong signature fails `mypy --strict`)."""

from __future__ import annotations

from collections.abc import Mapping

from reaper.core.model import Resource
from reaper.kinds.base import Parts, SignalContext, state_of
from reaper.kinds.endpoint import actions, discover, rules, signals
from reaper.kinds.endpoint.model import EndpointSignal


def _signals(ctx: SignalContext, resources: list[Resource]) -> Mapping[str, EndpointSignal]:
    """Every kind's signals take one SignalContext; looked up when called (a test may patch it). The log:
    production configurations are read only when their daily message is due."""
    return signals.signals(ctx.clients, resources, ctx.settings, ctx.now, log=ctx.log)


PARTS: Parts[EndpointSignal] = Parts(
    discover=discover.discover,
    signals=_signals,
    decide=rules.decide,
    current_state=state_of(actions),
    undo_hint=actions.undo_hint,
    current_read=actions.current_read,
    kill_decision=rules.kill_decision,  # classic endpoints cannot scale to zero: delete for them
)
