"""`reaper restore NAME`: each kind that deletes something declares how to bring it back."""

from __future__ import annotations

from datetime import datetime

from reaper.core.errors import NoRestoreRecord, RestoreError
from reaper.kinds.base import RestoreRun, Say, WakeRun, resolve
from reaper.record.runtime import Runtime

# What the other kinds do keeps the resource (stopped, or only the app deleted): it is restarted.
RESTARTED = "notebooks, training jobs, Studio apps and EC2 instances are stopped, not deleted: they are restarted, not restored"


def restorable_kinds() -> str:
    from reaper import kinds

    return ", ".join(k.name for k in kinds.all_kinds() if k.declaration.restorer is not None) or "none"


def restore(rt: Runtime, name: str, now: datetime, say: Say, kind: str | None = None) -> str:
    """Bring back what the reaper deleted under NAME. A name two kinds could hold (an endpoint may be
    called `fs-0123abcd`, like a file system id) goes to the kind that has a restore record for it;
    when both have one, `kind` says which (`reaper restore NAME --kind K`)."""
    from reaper import kinds

    if rt.log is None:
        raise RestoreError("restore needs the action log, where restore records are kept: set REAPER_TABLE or pass --table")
    restorable = [k for k in kinds.all_kinds() if k.declaration.restorer is not None]
    if kind is not None and kind not in {k.name for k in restorable}:
        raise RestoreError(f"--kind {kind!r}: not a kind that restores (restorable kinds: {restorable_kinds()}; {RESTARTED})")
    claiming = [
        k for k in restorable if k.declaration.restorer is not None and k.declaration.restorer.claims(name) and kind in (None, k.name)
    ]
    if not claiming:
        as_kind = f" as {kind}" if kind else ""
        raise NoRestoreRecord(f"nothing restorable is called {name!r}{as_kind} (restorable kinds: {restorable_kinds()}; {RESTARTED})")
    if len(claiming) > 1:
        recorded = [k for k in claiming if rt.log.latest_restore(k.name, name.strip()) is not None]
        if len(recorded) > 1:
            names = " and ".join(k.name for k in recorded)
            raise RestoreError(f"{name!r} has restore records as {names}: say which with --kind ({'|'.join(k.name for k in recorded)})")
        if not recorded:
            looked = " or ".join(k.name for k in claiming)
            raise NoRestoreRecord(f"no restore record for {name!r} as {looked}; restorable kinds: {restorable_kinds()}; {RESTARTED}")
        claiming = recorded
    restorer = claiming[0].declaration.restorer
    assert restorer is not None
    run: RestoreRun = resolve(restorer.run)
    try:
        return run(rt, name, now, say)
    except NoRestoreRecord as exc:
        raise NoRestoreRecord(f"{exc}; restorable kinds: {restorable_kinds()}; {RESTARTED}") from None


def wake(rt: Runtime, name: str, schedule: str, now: datetime, say: Say) -> str:
    """A schedule the reaper made fired for NAME: the kind that made it checks the resource is still its to
    bring back, then restores it (docs/kinds/endpoint.md, "Wake")."""
    from reaper import kinds

    waking = [k for k in kinds.all_kinds() if k.declaration.restorer is not None and k.declaration.restorer.wake is not None]
    claiming = [k for k in waking if k.declaration.restorer is not None and k.declaration.restorer.claims(name)]
    if not claiming:
        raise NoRestoreRecord(f"no kind wakes anything called {name!r}")
    restorer = claiming[0].declaration.restorer
    assert restorer is not None and restorer.wake is not None
    run: WakeRun = resolve(restorer.wake)
    return run(rt, name.strip(), schedule, now, say)
