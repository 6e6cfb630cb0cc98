"""What each button does, for the resource's owner or a listed admin only.

- Snooze 24 h / Exempt: the tag (`reaper:snooze-until` = now + 24 h, `reaper:exempt=true`) is
  written here, the way a sweep writes `reaper:warned-at`: under the resource's lease, after reading
  its tags again from its own service, and recorded in the action log.
- Stop now: the kind's own function is invoked (asynchronously) with the click; it runs the kind's
  action through `pipeline.enforce` (lease, claim, state and protection read again), under its own
  role and its IAM Deny backstop, records and posts the outcome, and answers in the thread
  (reaper.slack.stop).
- Stop anyway (an EC2 box kept for the files on its instance store; the button shows how many GB): the
  owner's or an admin's consent to losing them, claimed once per message and recorded in the action log
  (`instance-store-consent`) before the stop is handed to the ec2 function as a Stop now that carries it
  (reaper.slack.stop). A second click on the same message records nothing more and stops nothing more.
- Restore (endpoints, FSx): the restore function is invoked with the resource's name, as
  `reaper restore NAME`; it posts the result when done.
- Confirm (a budget made from a tag, in the admin channel): admins only. The confirmation (project,
  amount shown, who) goes to the action log; from the next sweep the budget is the admin's at that
  amount (reaper.aws.budgets). Nothing in AWS changes.
In dry-run nothing is changed in AWS, tags included: the click is answered with what would be done.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypedDict

from reaper import kinds
from reaper.aws.faults import AwsError, is_not_found, short
from reaper.aws.tagging import current_tags, write_tags
from reaper.core.errors import UsageError
from reaper.core.model import Mode
from reaper.core.policy import read_tags
from reaper.core.timeutil import iso
from reaper.record.runtime import Runtime
from reaper.slack.bot import SlackBot
from reaper.slack.message import escape
from reaper.slack.request import STOP_ANYWAY, Click, ClickRecord

SNOOZE = timedelta(hours=24)
MAX_BUDGET_USD = 1_000_000.0  # the bound on a dollar tag (docs/safety.md, item 2)
RESTORABLE = frozenset({"endpoint", "fsx"})
MAX_CONSENT_GB = 1_000_000.0  # no instance store is larger (the biggest are tens of TB)
STOP_SOURCE, STOP_DETAIL_TYPE = "mlreaper.slack", "Stop now"

# (target: a kind name or "restore", event) -> None; invokes that function asynchronously
Invoke = Callable[[str, Mapping[str, object]], None]


class ConsentJson(TypedDict):
    gb: float


class StopNowDetailJson(TypedDict, total=False):
    """What reaper.core.events.StopNowDetail parses back (its fields, as JSON)."""

    arn: str
    user: str
    response_url: str
    thread_ts: str | None
    consent: ConsentJson


# EventBridge's event shape (https://docs.aws.amazon.com/eventbridge/latest/ref/overiew-event-structure.html):
# "detail-type" is no identifier, hence the functional form
StopNowEvent = TypedDict(
    "StopNowEvent",
    {
        "version": str,
        "id": str,
        "source": str,
        "detail-type": str,
        "account": str,
        "time": str,
        "region": str,
        "resources": list[str],
        "detail": StopNowDetailJson,
    },
)


@dataclass(frozen=True)
class Answer:
    text: str  # said in the thread
    status: str  # done | refused | failed | delegated | dry-run
    record: ClickRecord

    @classmethod
    def of(cls, base: ClickRecord, status: str, text: str) -> Answer:
        """`text` said in the thread; the record is `base` with its result and reason."""
        return cls(text=text, status=status, record={**base, "result": status, "reason": text})


def handle_click(rt: Runtime, bot: SlackBot, click: Click, now: datetime, invoke: Invoke) -> Answer:
    """Authorize, then act; every answer is also the action log's record of the click."""
    base = click.record()
    if click.action == "reaper:confirm-budget":
        return _confirm_budget(rt, bot, click, now, base)
    try:
        kind = kinds.get(click.kind)
    except UsageError:
        return _answer(base, "refused", "This button names no kind mlreaper knows.")
    if base["region"] not in rt.regions:
        return _answer(base, "refused", "This resource is in a region mlreaper does not sweep: nothing was done.")
    clients = rt.clients(base["region"])
    try:
        tags = current_tags(clients, click.arn)
    except AwsError as exc:
        if is_not_found(exc):
            return _answer(base, "refused", f"`{base['id']}` is gone: nothing to do.")
        return _answer(base, "failed", f"Could not read `{base['id']}`'s tags: {short(exc)}. Nothing was done.")
    owner = read_tags(tags, rt.settings).owner
    base["owner"] = owner
    is_admin = click.user in bot.config.admins
    if not is_admin and (not owner or bot.user_id(owner) != click.user):
        return _answer(base, "refused", f"<@{click.user}> is neither this resource's owner nor an mlreaper admin: nothing was done.")
    dry = rt.settings.mode_for(kind.name) is Mode.DRY_RUN
    if click.action in ("reaper:snooze", "reaper:exempt"):
        return _tag(rt, click, base, now, dry)
    if click.action == "reaper:restore":
        if kind.name not in RESTORABLE:
            return _answer(base, "refused", f"{kind.name} resources are restarted, not restored: nothing was done.")
        if dry:
            return _answer(base, "dry-run", f"Would restore `{base['id']}` (dry-run: nothing was changed).")
        try:
            invoke("restore", {"name": base["id"], "reason": f"Restore clicked in Slack by {click.user}"})
        except AwsError as exc:
            return _answer(base, "failed", f"Could not start restoring `{base['id']}`: {short(exc)}. Nothing was done; click again.")
        return _answer(base, "delegated", f"Restoring `{base['id']}` for <@{click.user}>; the result is posted when it is done.")
    if click.action == STOP_ANYWAY:
        return _stop_anyway(rt, click, base, now, dry, kind.name, invoke)
    event = stop_event(click, now)
    try:
        invoke(kind.name, event)
    except AwsError as exc:
        return _answer(base, "failed", f"Could not hand the stop of `{base['id']}` over: {short(exc)}. Nothing was done; click again.")
    return _answer(base, "delegated", f"<@{click.user}> asked to stop `{base['id']}` now: checking it again, then acting.")


def stop_event(click: Click, now: datetime) -> StopNowEvent:
    """The Stop now event a kind's function takes (reaper.slack.stop), in EventBridge's shape, every field
    it documents (the kind function parses it as one); the central account forwards the same event."""
    return {
        "version": "0",
        "id": f"slack-{click.signature[-32:]}",
        "source": STOP_SOURCE,
        "detail-type": STOP_DETAIL_TYPE,
        "account": "",
        "time": iso(now),
        "region": "",
        "resources": [],
        "detail": {"arn": click.arn, "user": click.user, "response_url": click.response_url, "thread_ts": click.thread_ts},
    }


def _stop_anyway(rt: Runtime, click: Click, record: ClickRecord, now: datetime, dry: bool, kind: str, invoke: Invoke) -> Answer:
    """The owner's (or an admin's) consent to losing the instance store's files: recorded once, then a Stop now
    that carries it (docs/slack.md, Stop anyway)."""
    gb = click.gb
    base = record.copy()
    base["gb"] = gb
    if kind != "ec2" or gb is None or not 0 <= gb <= MAX_CONSENT_GB:
        return _answer(base, "refused", "Stop anyway is only for an EC2 instance store, with the figure it showed: nothing was done.")
    if dry:
        return _answer(
            base, "dry-run", f"Would stop `{base['id']}` and lose the {gb:,.1f} GB on its instance store (dry-run: nothing was changed)."
        )
    if rt.log is None:
        return _answer(base, "refused", "No action log to record the consent in: nothing was done.")
    key = f"instance-store-consent|{click.arn}|{click.thread_ts or click.signature}"
    try:
        if not rt.log.claim(key, now):
            return _answer(
                base,
                "duplicate",
                f"Stop anyway on `{base['id']}` was already asked from this message: it is recorded once and handed over once.",
            )
        rt.log.record(
            {
                **base,
                "type": "instance-store-consent",
                "result": "consented",
                "reason": f"{click.user} consents to losing the {gb:,.1f} GB on its instance store",
            },
            now,
            f"consent:{click.signature[-32:]}",
        )
    except AwsError as exc:
        return _answer(base, "failed", f"Could not record the consent: {short(exc)}. Nothing was done; click again.")
    event = stop_event(click, now)
    event["detail"]["consent"] = {"gb": gb}
    try:
        invoke(kind, event)
    except AwsError as exc:
        return _answer(
            base, "failed", f"Consent recorded, but the stop of `{base['id']}` could not be handed over: {short(exc)}. Nothing was stopped."
        )
    return _answer(
        base,
        "delegated",
        f"<@{click.user}> asked to stop `{base['id']}` anyway (the {gb:,.1f} GB on its instance store is lost): "
        "checking it again, then acting.",
    )


def _tag(rt: Runtime, click: Click, base: ClickRecord, now: datetime, dry: bool) -> Answer:
    snooze = click.action == "reaper:snooze"
    key = rt.settings.tag("snooze-until" if snooze else "exempt")
    value = iso(now + SNOOZE) if snooze else "true"
    what = f"snoozed until {value}" if snooze else "exempt"
    base = {**base, "tag": {key: value}}
    if dry:
        return _answer(base, "dry-run", f"Would tag `{base['id']}` {key}={value} (dry-run: nothing was changed).")
    holder = f"slack:{click.signature[-32:]}"
    try:
        if rt.log is not None and not rt.log.lease(click.arn, holder, now):
            return _answer(base, "refused", f"A sweep is handling `{base['id']}` right now; click again in a minute.")
        if rt.log is not None:  # recorded ahead: the change is in the log even if its final record fails
            rt.log.record(
                {**base, "type": "slack-click-ahead", "result": "started", "reason": f"tagging {key}={value}"}, now, f"{holder}:ahead"
            )
    except AwsError as exc:
        return _answer(base, "failed", f"Could not take `{base['id']}` for the change: {short(exc)}. Nothing was changed; click again.")
    try:
        write_tags(rt.clients(base["region"]), click.arn, {key: value})
    except AwsError as exc:
        return _answer(base, "failed", f"Could not tag `{base['id']}`: {short(exc)}. Nothing was changed.")
    finally:
        if rt.log is not None:
            with contextlib.suppress(Exception):  # a lease expires by itself
                rt.log.release(click.arn, holder)
    return _answer(base, "done", f"`{base['id']}` is {what}, at <@{click.user}>'s request.")


def _confirm_budget(rt: Runtime, bot: SlackBot, click: Click, now: datetime, base: ClickRecord) -> Answer:
    """An admin makes a tag-made budget theirs, at the amount the message showed."""
    base = {**base, "region": "", "project": click.project, "usd": click.usd}
    if click.user not in bot.config.admins:
        return _answer(base, "refused", f"<@{click.user}> is not an mlreaper admin: budgets are the admins'. Nothing was confirmed.")
    usd = click.usd
    if click.kind != "budget" or not click.project or usd is None or not 0 < usd <= MAX_BUDGET_USD or ":budget/" not in click.arn:
        return _answer(base, "refused", "This button names no budget mlreaper made: nothing was confirmed.")
    if rt.log is None:
        return _answer(base, "refused", "No action log to keep the confirmation in: nothing was confirmed.")
    try:
        rt.log.confirm_budget(click.project, usd, click.user, now)
    except AwsError as exc:
        return _answer(base, "failed", f"Could not record the confirmation: {short(exc)}. Nothing was confirmed; click again.")
    return _answer(
        base,
        "done",
        f"`{escape(base['id'])}` (${usd:,.2f} a month, project {escape(click.project)}) is confirmed by <@{click.user}>: "
        "from the next sweep it is the admin's budget (at 100 % it acts when BudgetEnforce is on).",
    )


def _answer(base: ClickRecord, status: str, text: str) -> Answer:
    return Answer.of(base, status, text)
