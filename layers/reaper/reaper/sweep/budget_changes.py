"""Budgets for a sweep: read with the admin's confirmations, and every change posted to the admin channel.

The action log keeps which tag-made budgets an admin confirmed (reaper.slack.buttons); the kinds'
budget rules act at 100 % only on a budget at the admin's amount (ProjectSpend.enforceable). Each
creation, change or failure (reaper.aws.budgets.BudgetChange) is recorded and posted once (a claim
on the change), as a `budget-change` message the notifier sends to the admin channel; a change made
from a tag carries a Confirm button there.
"""

from __future__ import annotations

import logging
from datetime import datetime

from reaper.aws import budgets
from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, short
from reaper.core.model import ProjectSpend
from reaper.core.settings import Settings
from reaper.record.message import BudgetChangeMessage
from reaper.record.runtime import Runtime

log = logging.getLogger("reaper")


def read_budgets(
    rt: Runtime, clients: Clients, settings: Settings, *, manage: bool, create: bool, now: datetime, event_id: str
) -> dict[str, ProjectSpend]:
    """Each budgeted project's spend (marked enforceable or not); the changes made on the way are posted."""
    topic = settings.budget_topic_arn or ""
    account = topic.split(":")[4] if topic.count(":") >= 5 else ""
    confirmed: budgets.Confirmations = {}
    if rt.log is not None:
        try:
            confirmed = rt.log.budget_confirmations()
        except AwsError as exc:  # unknown confirmations: tag-made budgets stay notify-only this sweep
            log.warning("budget confirmations unreadable: %s", short(exc))
    spend, changes = budgets.read(clients, settings, account, manage=manage, create=create, confirmed=confirmed)
    for change in changes:
        post_change(rt, change, topic, account, now, event_id)
    return spend


def post_change(rt: Runtime, change: budgets.BudgetChange, topic: str, account: str, now: datetime, event_id: str) -> None:
    partition = topic.split(":")[1] if topic.count(":") >= 5 else "aws"
    body = BudgetChangeMessage(
        kind="budget",
        id=change.budget_name,
        arn=f"arn:{partition}:budgets::{account}:budget/{change.budget_name}",
        account=account,
        project=change.project,
        what=change.what,
        usd=change.usd,
        previous_usd=change.previous_usd,
        origin=change.origin,
        confirmable=change.confirmable,
        reason=change.text,
    )
    # once per change; a failure once a day while it lasts
    key = f"budget-change|{change.budget_name}|{change.what}|{change.usd:.2f}|{change.previous_usd}"
    if change.what == "failed":
        key += f"|{now:%Y-%m-%d}"
    try:
        if rt.log is not None:
            if not rt.log.claim(key, now):
                return
            rt.log.record(body.as_record(), now, event_id)
        problems = rt.outbox.send([body])
    except AwsError as exc:
        log.warning("budget change not posted (%s): %s", short(exc), change.text)
        return
    if problems:
        log.warning("budget change not posted: %s", change.text)
