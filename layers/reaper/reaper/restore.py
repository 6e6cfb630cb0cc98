"""`reaper restore NAME`: each kind that deletes something registers how to bring it back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from reaper.errors import RestoreError
from reaper.runtime import Runtime

Say = Callable[[str], None]


@dataclass(frozen=True)
class Restorer:
    kind: str
    claims: Callable[[str], bool]  # does this name look like one of ours (e.g. fs-… for FSx)
    run: Callable[[Runtime, str, datetime, Say], str]  # returns the final one-line result


RESTORERS: list[Restorer] = []


def register(restorer: Restorer) -> None:
    RESTORERS.append(restorer)


def restore(rt: Runtime, name: str, now: datetime, say: Say) -> str:
    if rt.log is None:
        raise RestoreError("restore needs the action log, where restore records are kept: set REAPER_TABLE or pass --table")
    from reaper import kinds  # each kind registers its restorer when its module is imported

    kinds.all_kinds()
    for restorer in RESTORERS:
        if restorer.claims(name):
            return restorer.run(rt, name, now, say)
    restorable = ", ".join(r.kind for r in RESTORERS) or "none yet"
    raise RestoreError(f"nothing restorable is called {name!r} (restorable kinds: {restorable})")
