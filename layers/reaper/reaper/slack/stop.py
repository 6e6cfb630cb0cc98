"""Stop now, clicked in Slack: run in the kind's own function (its role, its IAM Deny backstop).

The interactions function checked the signature and that the clicker owns the resource or is an
admin; here the resource goes through the sweep's own door for named resources
(`pipeline.sweep_kind(..., only=[arn])`): read alone where its kind can (else found among the
region's), screened like a sweep (exempt, snoozed, bad tag and production stay untouched), and
its rule's decision judged (`_Click`): the kind's own reasons to keep (`reaper.sweep.gate`:
managed by a cluster, instance store a stop erases, unknown evidence) refuse it, and otherwise its
kind's action is carried out with a Decision ACT through the sweep's tail: time, lease, claim,
state, protection and those reasons read again just before the change, then recorded and posted
like a sweep's. A click skips the idle wait and the grace period, never a guard. The outcome is
answered in the clicked message's thread.

Stop anyway (an EC2 box kept for the files on its instance store): the same door, with the owner's (or an
admin's) consent, recorded by the interactions function before it handed the click over, carried in the
decision's evidence (`CONSENT`); the kind's guard lets the instance store through on it, and only on it
(a fresh reading of more than the figure consented to still refuses: reaper.kinds.ec2.rules).
"""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict

from reaper.core.events import StopNowDetail
from reaper.core.model import CONSENT, Decision, Mode, Resource, Verdict
from reaper.core.policy import TagView, production_guard
from reaper.core.results import StopNowResult
from reaper.core.settings import Settings
from reaper.kinds.base import Kind
from reaper.record.runtime import Runtime
from reaper.slack.message import escape, mention
from reaper.slack.reply import answer
from reaper.sweep import gate, pipeline


class Consent(TypedDict):
    """What a Decision's evidence carries under CONSENT (reaper.core.model): the figure shown, and who gave it."""

    gb: float
    user: str


class _Click:
    """A rule's decision judged for a Stop-now click (a pipeline.Judge). Keeps the state it found when
    no action may start from it, so the answer says so."""

    def __init__(self, settings: Settings, user: str, consent: Consent | None = None) -> None:
        self.settings, self.user, self.consent = settings, user, consent
        self.nothing_to_stop: str | None = None

    def __call__(self, kind: Kind, r: Resource, ruled: Decision, view: TagView) -> Decision:
        # The kind's rule names the action (an endpoint is deleted or taken to zero by its type, an FSx
        # file system is backed up first); when the rule would keep it, the kind's first action.
        if self.consent is not None:
            ruled = ruled.with_(evidence={**ruled.evidence, CONSENT: self.consent})
        first = next(iter(kind.actions.values()))
        action = (kind.actions.get(ruled.action) if ruled.action else None) or (first if r.state in first.valid_origin_states else None)
        if ruled.verdict in (Verdict.EXEMPT, Verdict.ERROR):  # exempt, snoozed, bad tag, production: as a sweep
            decision = ruled
        elif action is None or r.state not in action.valid_origin_states:
            self.nothing_to_stop = r.state  # said, neither recorded nor posted (a keep is not)
            return Decision(Verdict.KEEP, f"{r.state}: nothing to stop")
        elif (guarded := gate.refusal(kind, r, view, self.settings, ruled)) is not None:
            # what a sweep would never do now, a click does not do either
            decision = Decision(Verdict.KEEP, f"Stop now refused: {guarded}", evidence=ruled.evidence)
        else:
            decision = Decision(
                Verdict.ACT,
                f"{action.name} now, asked in Slack by {self.user}{self._consented()} (the rule said: {ruled.reason})",
                action=action.name,
                evidence=ruled.evidence,
                skip_grace=True,
            )
        return production_guard(decision, view, self.settings)

    def _consented(self) -> str:
        if self.consent is None:
            return ""
        return f", who consented to losing the {float(self.consent.get('gb') or 0):,.1f} GB on its instance store"


def consent_of(detail: StopNowDetail, user: str) -> Consent | None:
    """The consent a Stop-anyway event carries (reaper.slack.buttons), or None: the figure shown, and who gave it."""
    if detail.consent is None or not user:
        return None
    return {"gb": detail.consent.gb, "user": user}


def stop_now(rt: Runtime, kind: Kind, event_id: str, detail: StopNowDetail, now: datetime) -> StopNowResult:
    """The click through the sweep's door (module docstring); `detail` parsed already (reaper.core.events.parse_stop_now)."""
    arn, user, region = detail.arn, detail.user, detail.region
    name = escape(arn.rsplit("/", 1)[-1])  # shown in the thread: escaped like every message (docs/slack.md, Escaping)
    if region not in rt.regions:
        return _said(detail, f"`{name}`: not a resource in a region mlreaper sweeps; nothing was done.", "refused")
    click = _Click(rt.settings, user, consent_of(detail, user))
    outcomes = pipeline.sweep_kind(rt, kind, region, now, event_id, lambda _msg: None, only=[arn], judge=click)
    found = [o for o in outcomes if o.resource.arn == arn]
    if not found:
        if outcomes:  # the kind could not be listed or read: the sweep's error outcome says why (and was posted)
            return _said(detail, f"`{name}` was not changed: {outcomes[0].reason}", outcomes[0].verdict.value)
        return _said(detail, f"`{name}` is gone or no longer a candidate: nothing was done.", "gone")
    outcome = found[0]
    decision = outcome.decision
    if click.nothing_to_stop is not None:
        return _said(detail, f"`{name}` is {click.nothing_to_stop}: nothing to stop.", "state")
    if outcome.executed:
        done = kind.actions.get(decision.action) if decision.action else None
        past = done.past if done is not None else "changed"
        text = f"`{name}` {past}, at {mention(user)}'s request."
    elif outcome.mode is Mode.DRY_RUN and decision.verdict is Verdict.ACT:
        text = f"Would {decision.action} `{name}` (dry-run: nothing was changed)."
    else:
        text = f"`{name}` was not changed: {escape(outcome.reason)}"  # a reason may quote a tag's value
    return _said(detail, text, outcome.verdict.value)


def _said(detail: StopNowDetail, text: str, result: str) -> StopNowResult:
    answer(detail.response_url, text, detail.thread_ts)
    return {"stop_now": result, "said": text}
