"""Action names are a type per kind (a StrEnum in its declaration), not text compared in many places:
the declared actions are exactly the enum's members, and the dispatch knows no other name."""

from __future__ import annotations

import ast
import importlib
from enum import StrEnum
from pathlib import Path

import pytest

import reaper
from reaper import kinds
from reaper.core.model import KindAction, Resource
from reaper.kinds.base import action_named


def _names(kind_name: str) -> type[StrEnum]:
    names: type[StrEnum] = importlib.import_module(kinds.KIND_PACKAGES[kind_name]).ActionName
    return names


@pytest.mark.parametrize("kind_name", sorted(kinds.KIND_PACKAGES))
def test_the_declared_actions_are_exactly_the_kinds_action_names(kind_name):
    # Given a kind's declaration and its ActionName enum
    declaration = kinds.declaration(kind_name)
    names = _names(kind_name)
    # Then every declared action is keyed and named by a member, and every member is declared
    assert set(declaration.actions) == {n.value for n in names}
    assert all(isinstance(key, names) and action.name is key for key, action in declaration.actions.items())
    assert declaration.default_action is None or isinstance(declaration.default_action, names)


@pytest.mark.parametrize("kind_name", sorted(kinds.KIND_PACKAGES))
def test_the_undo_hint_knows_no_action_outside_the_kinds_names(kind_name):
    # Given a resource and an action name the kind does not have
    kind = kinds.get(kind_name)
    resource = Resource(kind=kind_name, id="r-1", arn="", region="us-east-1", state="unknown")
    # Then there is nothing to undo, and no other part of the resource is read
    assert kind.undo_hint(resource, "reaper:not-an-action") is None


def test_action_named_takes_the_member_or_none():
    class Names(StrEnum):
        STOP = "stop"

    assert action_named(Names, "stop") is Names.STOP
    assert action_named(Names, "delete") is None
    assert action_named(Names, None) is None


@pytest.mark.parametrize("kind_name", sorted(kinds.KIND_PACKAGES))
def test_every_kinds_action_names_are_kind_actions(kind_name):
    # Decision.action is typed KindAction | None: a kind's names subclass it, so mypy refuses free text
    assert issubclass(_names(kind_name), KindAction)


def test_no_decision_in_the_layer_names_its_action_as_text():
    # Given every module of the layer: a Decision(..., action=...) or a helper's action= given a string
    # literal would be a name no enum holds (the dispatch looks actions up by member)
    layer = Path(reaper.__file__).parent
    literal = [
        f"{p.relative_to(layer)}:{node.lineno}"
        for p in layer.rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Call)
        and not (isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument")  # argparse's action="append"
        for kw in node.keywords
        if kw.arg == "action" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)
    ]
    assert literal == []
