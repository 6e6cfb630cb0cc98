"""What a TypedDict requires, read from its hints: with postponed annotations (`from __future__ import
annotations`) Python 3.11's `__required_keys__` does not see `Required[...]` / `NotRequired[...]`."""

from __future__ import annotations

import typing


def required_members(typed: type) -> set[str]:
    """The members a TypedDict requires."""
    hints = typing.get_type_hints(typed, include_extras=True)
    total = typed.__total__  # type: ignore[attr-defined]
    return {
        m
        for m, hint in hints.items()
        if typing.get_origin(hint) is typing.Required or (total and typing.get_origin(hint) is not typing.NotRequired)
    }
