"""What a Jupyter server says of its own activity, and the judgement every kind that reads one shares.

Plain data and a pure rule: `aws/jupyter.py` reads a server (a notebook instance's through
CreatePresignedNotebookInstanceUrl, a Studio app's through CreatePresignedDomainUrl) into a
`JupyterReading`; `judge` turns it into a Decision with the kind's own action (stop a notebook,
delete a Studio app). The reading holds figures only: never a URL, a token or a cookie.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from reaper.core.model import Decision, KindAction, Verdict
from reaper.core.timeutil import as_utc, human_duration


@dataclass(frozen=True)
class JupyterKernel:
    """One kernel as GET /api/kernels lists it."""

    execution_state: str  # "idle", "busy", "starting", ...
    last_activity: datetime  # the last message the kernel sent (never moved by a REST read)
    connections: int  # open WebSocket connections (a browser tab or a client attached)


@dataclass(frozen=True)
class JupyterReading:
    """What a Jupyter server says of its activity (JupyterReads=on), or why it could not be read."""

    started: datetime | None = None  # GET /api/status `started`: when the Jupyter server started
    kernels: tuple[JupyterKernel, ...] = ()
    terminals: tuple[datetime, ...] = ()  # each terminal's last_activity (GET /api/terminals)
    connections: int = 0  # GET /api/status `connections`: open connections to kernels
    unreadable: str | None = None  # why it could not be read: the resource is unknown
    unknown: str | None = None  # the stable code of `unreadable` (aws/jupyter.py)


def judge(reading: JupyterReading, window: int, now: datetime, *, action: KindAction, blind: str, evidence: dict[str, Any]) -> Decision:
    """A kernel not idle, an open connection, or kernel or terminal activity inside the idle window keeps
    the resource; else it is idle since the latest of those and the server's start, and `action` is
    proposed. A reading that failed is unknown, never idle. `blind` says why the server was read at all
    (e.g. "no activity agent"); `evidence` is the kind's own (merged under the reading's figures)."""
    if reading.unreadable is not None or reading.started is None:
        why = reading.unreadable or "no reading"
        return Decision(
            Verdict.KEEP,
            f"{blind}, and its Jupyter server could not be read: {why}. Unknown is not idle",
            evidence={**evidence, "source": "jupyter", "unknown": reading.unknown},
            unknown=reading.unknown or "jupyter-unreadable",
        )
    now = as_utc(now)
    kernels = reading.kernels
    connections = max(reading.connections, sum(k.connections for k in kernels))
    evidence = {
        **evidence,
        "source": "jupyter",
        "kernels": len(kernels),
        "terminals": len(reading.terminals),
        "connections": connections,
        "idle_window_minutes": window,
    }
    busy = sorted({k.execution_state for k in kernels if k.execution_state not in ("idle", "dead")})
    if busy:
        return Decision(Verdict.KEEP, f"Jupyter: kernel {', '.join(busy)} ({len(kernels)} kernel(s))", evidence={**evidence, "busy": busy})
    if connections:
        return Decision(Verdict.KEEP, f"Jupyter: {connections} open connection(s) to its kernels", evidence=evidence)
    last = max([reading.started, *(k.last_activity for k in kernels), *reading.terminals])
    evidence["last_active"] = last
    if last > now - timedelta(minutes=window):
        ago = human_duration(now - last) if now > last else "0 m"
        return Decision(Verdict.KEEP, f"Jupyter: kernel or terminal active {ago} ago (idle window {window} min)", evidence=evidence)
    what = f"{len(kernels)} idle kernel(s), {len(reading.terminals)} terminal(s)"
    return Decision(
        Verdict.ACT, f"no kernel or terminal activity for {human_duration(now - last)} (Jupyter: {what})", action=action, evidence=evidence
    )
