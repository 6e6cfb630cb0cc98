"""Each kind's parts are one typed module (`kinds/<kind>/parts.py`, a `Parts[ItsSignal]`): the declaration
names only it, and mypy checks every decide against its signals there. The mypy check is held here too:
a decide with the wrong signature is refused."""

from __future__ import annotations

import importlib
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reaper import kinds
from reaper.core.settings import Settings
from reaper.kinds.base import Parts, SignalContext, load_parts

LAYER = Path(__file__).resolve().parents[2] / "layers" / "reaper"


@pytest.mark.parametrize("kind_name", sorted(kinds.KIND_PACKAGES))
def test_a_kinds_parts_are_its_typed_module(kind_name):
    # Given a kind's declaration: its parts are the Parts object of its own parts.py, built from its own modules
    package = kinds.KIND_PACKAGES[kind_name]
    declaration = kinds.declaration(kind_name)
    parts = load_parts(declaration.parts)
    assert declaration.parts == f"{package}.parts:PARTS"
    assert isinstance(parts, Parts)
    assert parts.decide is importlib.import_module(f"{package}.rules").decide
    assert parts.undo_hint is importlib.import_module(f"{package}.actions").undo_hint


def test_something_else_named_as_parts_is_refused():
    with pytest.raises(TypeError, match="not a kinds.base.Parts"):
        load_parts("reaper.kinds.notebook.rules:decide")


WRONG = """
from reaper.kinds.base import Parts, signals_of
from reaper.kinds.notebook import actions, discover, rules, signals
from reaper.kinds.notebook.model import ActivitySignal
from reaper.core.model import Decision, Resource, Verdict


def decide(resource: Resource, signal: int | None) -> Decision:  # the wrong signature
    return Decision(Verdict.KEEP, "-")


PARTS: Parts[ActivitySignal] = Parts(
    discover=discover.discover, signals=signals_of(signals), decide=decide, current_state=actions.current_state, undo_hint=actions.undo_hint
)
"""


def strict_mypy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> tuple[str, int]:
    """What mypy --strict says of `source` written as `name` (the layer on MYPYPATH): (its report, its exit status)."""
    api = pytest.importorskip("mypy.api")
    bad = tmp_path / name
    bad.write_text(textwrap.dedent(source))
    monkeypatch.setenv("MYPYPATH", str(LAYER))
    out, _err, status = api.run(["--strict", "--follow-imports=silent", "--cache-dir", str(tmp_path / ".mypy"), str(bad)])
    return out, status


def test_mypy_refuses_a_decide_with_the_wrong_signature(tmp_path, monkeypatch):
    out, status = strict_mypy(tmp_path, monkeypatch, "bad_parts.py", WRONG)
    assert status == 1 and 'Argument "decide" to "Parts" has incompatible type' in out, out


ANOTHER_KINDS_SIGNALS = """
from reaper.kinds.base import Parts, signals_of, state_of
from reaper.kinds.ec2 import actions, discover, rules
from reaper.kinds.ec2.model import Ec2Signal
from reaper.kinds.notebook import signals as notebook_signals

PARTS: Parts[Ec2Signal] = Parts(
    discover=discover.discover,
    signals=signals_of(notebook_signals),  # a notebook's signals for EC2's decide
    decide=rules.decide,
    current_state=state_of(actions),
    undo_hint=actions.undo_hint,
)
"""


def test_mypy_refuses_another_kinds_signals_through_the_one_helper(tmp_path, monkeypatch):
    # Given EC2's parts built with the shared helper over the notebook's signals module
    # When mypy --strict reads it
    out, status = strict_mypy(tmp_path, monkeypatch, "bad_parts.py", ANOTHER_KINDS_SIGNALS)
    # Then the helper carries the signal type: the mismatch is refused
    assert status == 1 and "incompatible type" in out and "Ec2Signal" in out, out


@pytest.mark.parametrize("kind_name", sorted(kinds.KIND_PACKAGES))
def test_a_kinds_signals_and_state_are_looked_up_when_called(kind_name, monkeypatch):
    # Given a kind's signals and state read patched after its parts were built (as tests patch them)
    package = kinds.KIND_PACKAGES[kind_name]
    parts = load_parts(kinds.declaration(kind_name).parts)
    monkeypatch.setattr(importlib.import_module(f"{package}.signals"), "signals", lambda *a, **k: {"arn": "patched"})
    monkeypatch.setattr(importlib.import_module(f"{package}.actions"), "current_state", lambda *a: "Patched")
    # Then the parts call the patched ones
    ctx = SignalContext(None, Settings(), datetime(2026, 12, 5, tzinfo=UTC))  # type: ignore[arg-type]
    assert parts.signals(ctx, []) == {"arn": "patched"}
    assert parts.current_state(None, None) == "Patched"  # type: ignore[arg-type]


OPAQUE_SIGNAL = """
from datetime import datetime

from reaper import kinds
from reaper.aws.clients import Clients
from reaper.core.settings import Settings


def peek(clients: Clients, settings: Settings, now: datetime) -> None:
    signal = kinds.get("ec2").signals(clients, [], settings, now)["arn"]
    print(signal.cpu)  # a kind's signal read by the sweep as if it knew the kind
"""


def test_a_kinds_signal_is_opaque_to_the_sweep_not_any(tmp_path, monkeypatch):
    # Given code above the kinds reading an attribute of a signal the registry handed it
    # When mypy --strict reads it
    out, status = strict_mypy(tmp_path, monkeypatch, "peek.py", OPAQUE_SIGNAL)
    # Then it is refused: the registry's signals are `object` (only the kind's own decide reads them), never Any
    assert status == 1 and '"object" has no attribute "cpu"' in out, out
