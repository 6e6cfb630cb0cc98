"""Stop now, clicked in Slack: run in the kind's own function (its role, its IAM Deny backstop).

The interactions function checked the signature and that the clicker owns the resource or is an
admin; here the resource is found again, screened like a sweep (exempt, snoozed, bad tag and
production stay untouched), the kind's own reasons to keep (`reaper.sweep.gate`: managed by a
cluster, instance store a stop erases, unknown evidence) refuse it, and otherwise its kind's action
goes through `pipeline.enforce` with a Decision ACT: time, lease, claim, state, protection and
those reasons read again just before the change. A click skips the idle wait and the grace
period, never a guard. The outcome is recorded and posted like a sweep's, and answered in the
clicked message's thread.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from reaper.core.model import Decision, Mode, Outcome, Verdict
from reaper.core.policy import exempt_hint, production_guard
from reaper.kinds.base import ActContext, Kind
from reaper.record.runtime import Runtime
from reaper.slack.message import escape, mention
from reaper.slack.reply import answer
from reaper.sweep import gate, pipeline
from reaper.sweep.courier import Courier


def stop_now(rt: Runtime, kind: Kind, event_id: str, detail: dict[str, Any], now: datetime) -> dict[str, Any]:
    arn, user = str(detail.get("arn") or ""), str(detail.get("user") or "")
    region = arn.split(":")[3] if arn.count(":") >= 5 else ""
    name = escape(arn.rsplit("/", 1)[-1])  # shown in the thread: escaped like every message (docs/slack.md, Escaping)
    if region not in rt.regions:
        return _said(detail, f"`{name}`: not a resource in a region mlreaper sweeps; nothing was done.", "refused")
    clients = rt.clients(region)
    found = [r for r in kind.discover(clients, rt.settings, now) if r.arn == arn]
    if not found:
        return _said(detail, f"`{name}` is gone or no longer a candidate: nothing was done.", "gone")
    r = found[0]
    # The kind's rule names the action (an endpoint is deleted or taken to zero by its type, an FSx
    # file system is backed up first); when the rule would keep it, the kind's first action.
    signal = kind.signals(clients, [r], rt.settings, now).get(r.id)
    ruled, view = pipeline.decide(kind, r, signal, rt.settings, now)
    first = next(iter(kind.actions.values()))
    action = kind.actions.get(ruled.action or "") or (first if r.state in first.valid_origin_states else None)
    guarded = gate.refusal(kind, r, view, rt.settings, ruled)
    if ruled.verdict in (Verdict.EXEMPT, Verdict.ERROR):  # exempt, snoozed, bad tag, production: as a sweep
        decision = ruled
    elif action is None or r.state not in action.valid_origin_states:
        return _said(detail, f"`{name}` is {r.state}: nothing to stop.", "state")
    elif guarded is not None:  # what a sweep would never do now, a click does not do either
        decision = Decision(Verdict.KEEP, f"Stop now refused: {guarded}", evidence=ruled.evidence)
    else:
        decision = Decision(
            Verdict.ACT,
            f"{action.name} now, asked in Slack by {user} (the rule said: {ruled.reason})",
            action=action.name,
            evidence=ruled.evidence,
            skip_grace=True,
        )
    decision = production_guard(decision, view, rt.settings)
    outcome = Outcome(
        r,
        decision,
        rt.settings.mode_for(kind.name),
        owner=view.owner,
        project=view.project,
        stage=view.stage,
        undo=kind.undo_hint(r, decision.action) if decision.action else None,
        opt_out=exempt_hint(r.arn, rt.settings),
    )
    if outcome.mode is Mode.ENFORCE and decision.verdict is Verdict.ACT:
        ctx = ActContext(clients=clients, settings=rt.settings, now=now, log=rt.log, event_id=event_id)
        outcome.result = pipeline.enforce(kind, outcome, ctx)
    courier = Courier(rt, now, event_id)
    courier.take(outcome)
    courier.flush()
    if outcome.executed:
        done = kind.actions.get(decision.action or "")
        past = done.past if done is not None else "changed"
        text = f"`{name}` {past}, at {mention(user)}'s request."
    elif outcome.mode is Mode.DRY_RUN and decision.verdict is Verdict.ACT:
        text = f"Would {decision.action} `{name}` (dry-run: nothing was changed)."
    else:
        text = f"`{name}` was not changed: {escape(outcome.reason)}"  # a reason may quote a tag's value
    return _said(detail, text, outcome.verdict.value)


def _said(detail: dict[str, Any], text: str, result: str) -> dict[str, Any]:
    answer(str(detail.get("response_url") or ""), text, detail.get("thread_ts"))
    return {"stop_now": result, "said": text}
