"""`reaper restore NAME`: each kind that deletes something declares how to bring it back."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from reaper.errors import NoRestoreRecord, RestoreError
from reaper.runtime import Runtime

Say = Callable[[str], None]

# What the other kinds do keeps the resource (stopped, or only the app deleted): it is restarted.
RESTARTED = "notebooks, training jobs, Studio apps and EC2 instances are stopped, not deleted: they are restarted, not restored"


def restorable_kinds() -> str:
    from reaper import kinds

    return ", ".join(k.name for k in kinds.all_kinds() if k.declaration.restorer is not None) or "none"


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
            try:
                return run(rt, name, now, say)
            except NoRestoreRecord as exc:
                raise NoRestoreRecord(f"{exc}; restorable kinds: {restorable_kinds()}; {RESTARTED}") from None
    raise NoRestoreRecord(f"nothing restorable is called {name!r} (restorable kinds: {restorable_kinds()}; {RESTARTED})")
