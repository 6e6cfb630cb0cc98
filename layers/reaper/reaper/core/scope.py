"""One kind's sweep in one region, as a scope its parts can see: the pipeline opens it around the
chunks it reads signals in, so a kind can keep what it read for the next chunk (endpoint models and
configurations) and never past the end of that sweep."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class Scope:
    """A token: the same object for every chunk of one sweep of one kind in one region."""


_current: ContextVar[Scope | None] = ContextVar("sweep_scope", default=None)


@contextmanager
def opened() -> Iterator[Scope]:
    scope = Scope()
    token = _current.set(scope)
    try:
        yield scope
    finally:
        _current.reset(token)


def current() -> Scope | None:
    """The sweep in progress, or None outside one (a signal read on its own)."""
    return _current.get()
