"""The ec2 kind's parts, typed: the one module its declaration names (`parts="reaper.kinds.ec2.parts:PARTS"`), so
mypy checks its discover, signals, decide and the rest against `kinds.base.Parts` (a wrong signature fails `mypy --strict`)."""

from __future__ import annotations

from collections.abc import Mapping

from reaper.aws.clients import Clients
from reaper.core.model import Resource
from reaper.kinds.base import Parts, SignalContext
from reaper.kinds.ec2 import actions, discover, rules, signals
from reaper.kinds.ec2.model import Ec2Signal


def _signals(ctx: SignalContext, resources: list[Resource]) -> Mapping[str, Ec2Signal]:
    """Every kind's signals take one SignalContext; looked up when called (a test may patch it)."""
    return signals.signals(ctx.clients, resources, ctx.settings, ctx.now)


def _current_state(clients: Clients, resource: Resource) -> str | None:
    """Read just before a change; looked up when called (a test may patch it)."""
    return actions.current_state(clients, resource)


PARTS: Parts[Ec2Signal] = Parts(
    discover=discover.discover,
    signals=_signals,
    decide=rules.decide,
    current_state=_current_state,
    undo_hint=actions.undo_hint,
    kill_decision=rules.kill_decision,  # never what a fleet manages, nor what cannot stop
    guard=rules.guard,  # managed, instance store, Spot that cannot stop: whatever asks (reaper.sweep.gate)
)
