"""`reaper restore NAME`: each kind that deletes something declares how to bring it back."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from reaper.errors import RestoreError
from reaper.runtime import Runtime

Say = Callable[[str], None]


def restore(rt: Runtime, name: str, now: datetime, say: Say) -> str:
    from reaper import kinds

    if rt.log is None:
        raise RestoreError("restore needs the action log, where restore records are kept: set REAPER_TABLE or pass --table")
    restorable = [k for k in kinds.all_kinds() if k.declaration.restorer is not None]
    for kind in restorable:
        restorer = kind.declaration.restorer
        assert restorer is not None
        if restorer.claims(name):
            from reaper.kinds.base import RestoreRun, resolve

            run: RestoreRun = resolve(restorer.run)
            return run(rt, name, now, say)
    names = ", ".join(k.name for k in restorable) or "none yet"
    raise RestoreError(f"nothing restorable is called {name!r} (restorable kinds: {names})")
