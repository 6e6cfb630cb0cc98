"""Each kind's parts are one typed module (`kinds/<kind>/parts.py`, a `Parts[ItsSignal]`): the declaration
names only it, and mypy checks every decide against its signals there. The mypy check is held here too:
a decide with the wrong signature is refused."""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path

import pytest

from reaper import kinds
from reaper.kinds.base import Parts, load_parts

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
from reaper.kinds.base import Parts
from reaper.kinds.notebook import actions, discover, rules
from reaper.kinds.notebook.parts import _signals
from reaper.kinds.notebook.model import ActivitySignal
from reaper.core.model import Decision, Resource, Verdict


def decide(resource: Resource, signal: int | None) -> Decision:  # the wrong signature
    return Decision(Verdict.KEEP, "-")


PARTS: Parts[ActivitySignal] = Parts(
    discover=discover.discover, signals=_signals, decide=decide, current_state=actions.current_state, undo_hint=actions.undo_hint
)
"""


def test_mypy_refuses_a_decide_with_the_wrong_signature(tmp_path, monkeypatch):
    api = pytest.importorskip("mypy.api")
    bad = tmp_path / "bad_parts.py"
    bad.write_text(textwrap.dedent(WRONG))
    monkeypatch.setenv("MYPYPATH", str(LAYER))
    out, _err, status = api.run(["--strict", "--follow-imports=silent", "--cache-dir", str(tmp_path / ".mypy"), str(bad)])
    assert status == 1 and 'Argument "decide" to "Parts" has incompatible type' in out, out
