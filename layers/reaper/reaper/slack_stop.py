"""Stop now, clicked in Slack: run in the kind's own function (its role, its IAM Deny backstop).

The interactions function checked the signature and that the clicker owns the resource or is an
admin; here the resource is found again, screened like a sweep (exempt, snoozed, bad tag and
production stay untouched), and its kind's action goes through `pipeline.enforce` with a Decision
ACT: time, lease, claim, state and protection read again just before the change. The outcome is
recorded and posted like a sweep's, and answered in the clicked message's thread.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from reaper import pipeline
from reaper.courier import Courier
from reaper.kinds.base import ActContext, Kind
from reaper.model import Decision, Mode, Outcome, Verdict
from reaper.policy import exempt_hint, production_guard, read_tags, screen
from reaper.runtime import Runtime
from reaper.slack_reply import answer


def stop_now(rt: Runtime, kind: Kind, event_id: str, detail: dict[str, Any], now: datetime) -> dict[str, Any]:
    arn, user = str(detail.get("arn") or ""), str(detail.get("user") or "")
    region = arn.split(":")[3] if arn.count(":") >= 5 else ""
    name = arn.rsplit("/", 1)[-1]
    if region not in rt.regions:
        return _said(detail, f"`{name}`: not a resource in a region mlreaper sweeps; nothing was done.", "refused")
    clients = rt.clients(region)
    found = [r for r in kind.discover(clients, rt.settings, now) if r.arn == arn]
    if not found:
        return _said(detail, f"`{name}` is gone or no longer a candidate: nothing was done.", "gone")
    r = found[0]
    action = next((a for a in kind.actions.values() if r.state in a.valid_origin_states), None)
    if action is None:
        return _said(detail, f"`{name}` is {r.state}: nothing to stop.", "state")
    view = read_tags(r.tags, rt.settings)
    decision = screen(view, rt.settings, now) or Decision(Verdict.ACT, f"{action.name} now, asked in Slack by {user}", action=action.name,
                                                         skip_grace=True)
    decision = production_guard(decision, view, rt.settings)
    outcome = Outcome(r, decision, rt.settings.mode_for(kind.name), owner=view.owner, project=view.project, stage=view.stage,
                      undo=kind.undo_hint(r, decision.action) if decision.action else None, opt_out=exempt_hint(r.arn, rt.settings))
    if outcome.mode is Mode.ENFORCE and decision.verdict is Verdict.ACT:
        ctx = ActContext(clients=clients, settings=rt.settings, now=now, log=rt.log, event_id=event_id)
        outcome.result = pipeline.enforce(kind, outcome, ctx)
    courier = Courier(rt, now, event_id)
    courier.take(outcome)
    courier.flush()
    if outcome.executed:
        text = f"`{name}` {action.past}, at <@{user}>'s request."
    elif outcome.mode is Mode.DRY_RUN and decision.verdict is Verdict.ACT:
        text = f"Would {action.name} `{name}` (dry-run: nothing was changed)."
    else:
        text = f"`{name}` was not changed: {outcome.reason}"
    return _said(detail, text, outcome.verdict.value)


def _said(detail: dict[str, Any], text: str, result: str) -> dict[str, Any]:
    answer(str(detail.get("response_url") or ""), text, detail.get("thread_ts"))
    return {"stop_now": result, "said": text}
