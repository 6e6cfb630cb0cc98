"""Changes begun and never recorded as ended: read the resource and say what was done.

A change is written ahead before it is made (reaper.sweep.pipeline._begin: its log entry and unposted
copy, flagged `unconfirmed`) and settled after (reaper.sweep.courier). When the settlement cannot be
written (the action log throttled past every retry) or the sweep dies first, the write-ahead copy
stays unposted, and the sweep holds the change's message back rather than post it as failed. The next
sweep of the kind finds it here: the kind's `confirm` reads the resource's state (a notebook Stopping,
an endpoint gone, a backup of the file system ...), and the entry is settled in place as done (or as
not made, an error), and its message posted once, under the key the write-ahead copy had (the notifier
posts a key once: a duplicate delivery or a second sweep reconciling it too posts nothing more).
What the state cannot tell is posted as before, "Began to … (unconfirmed: check it)". See docs/safety.md.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from reaper import kinds
from reaper.aws.faults import AwsError, short
from reaper.core.model import Mode, Verdict
from reaper.kinds.base import Made, Unconfirmed
from reaper.record.message import ResultPart, VerdictMessage
from reaper.record.runtime import Runtime

log = logging.getLogger("reaper")

# an unconfirmed change of a kind no sweep here reads (another function's) waits this long for its own
# kind's sweep, then is posted unreconciled
RECONCILE_WAIT = timedelta(days=1)


def needs_reading(body: VerdictMessage) -> bool:
    """A change (not a warning) written ahead in enforce whose end was never recorded."""
    return body.unconfirmed and body.verdict is Verdict.ACT and body.action is not None and body.mode is not Mode.DRY_RUN


def read_made(rt: Runtime, body: VerdictMessage, since: datetime) -> Made:
    """What the resource's state says of the change now; AWS errors propagate."""
    assert body.action is not None
    kind = kinds.get(body.kind)
    change = Unconfirmed(action=body.action, id=body.id, arn=body.arn, since=since, evidence=body.evidence)
    return kind.confirm(rt.clients(body.region), change)


def settled(body: VerdictMessage, made: Made) -> VerdictMessage:
    """The message (and log entry) of the change as its resource says it ended: done, or not made."""
    if made.made:
        return body.model_copy(
            update={
                "unconfirmed": False,
                "executed": True,
                "detail": f"confirmed by a later sweep, which read its state ({made.seen}): its own sweep could not record it",
                "result": ResultPart(code="done", executed=True),
            }
        )
    why = f"{body.action} was not made: its state, read by a later sweep, is {made.seen}"
    return body.model_copy(
        update={
            "unconfirmed": False,
            "executed": False,
            "verdict": Verdict.ERROR,
            "error": why,
            "detail": why,
            "result": ResultPart(code="failed", executed=False),
        }
    )


def reconcile(rt: Runtime, body: VerdictMessage, since: datetime) -> VerdictMessage | None:
    """The settled message of an unconfirmed change; `body` itself (still unconfirmed) when its state cannot
    tell; None when the state cannot be read now (the next sweep reads it again)."""
    try:
        made = read_made(rt, body, since)
    except AwsError as exc:
        log.warning("could not read %s %s to confirm its %s: %s", body.kind, body.id, body.action, short(exc))
        return None
    if made.made is None:
        log.warning("%s %s: whether its %s was made cannot be told (%s)", body.kind, body.id, body.action, made.seen)
        return body
    return settled(body, made)
