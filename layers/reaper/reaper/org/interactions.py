"""The central account's Slack endpoint: Stop now, clicked in the digest across accounts.

The front door is the member's (reaper.slack.interactions.serve): Slack's signature over the raw
body, a 5-minute window, one claim per signed request in the organisation's log, and only the
buttons mlreaper renders. Behind it the central account judges nothing about the resource:

1. the digest renders one button, Stop now; any other is refused here;
2. the clicker must be an admin named in the central Slack secret (`admins`): the digest goes to the
   organisation's admin channel; owners act from their own account's messages;
3. the button names the record the digest showed (its key in the organisation's log): that record
   must exist, be this week's, name the same resource, and have come from the account in the
   resource's ARN. The account is EventBridge's (the event's `account`, set to the sender's), and
   the bus takes events from the organisation only (aws:PrincipalOrgID): so an account outside the
   organisation, or a resource its member never logged, is refused without calling any account;
4. the member's CentralActionRole is assumed (IAM: only `mlreaper-central-action-*` roles in the
   organisation, aws:ResourceOrgID) and the member function that logged the resource is invoked with
   the Stop now event (reaper.org.click.forward_stop). A role that does not trust the central account
   refuses the AssumeRole, and the click is refused with that reason.
The member's function runs its own gate (reaper.slack.stop.stop_now: found again, exempt, snoozed,
production, in use, the kind's reasons to keep) and answers in the clicked message's thread: done,
or refused with the gate's reason. Its outcome is a member record, forwarded to the organisation's
log like any other; the click itself is recorded here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from reaper.aws.faults import AwsError, error_code, short
from reaper.org import central, click
from reaper.record.actionlog import ActionLog
from reaper.record.logentry import LogEntry
from reaper.slack.bot import SlackBot
from reaper.slack.buttons import Answer, stop_event
from reaper.slack.interactions import HttpResponse, serve
from reaper.slack.request import Click, ClickRecord

STOP = "reaper:stop"  # the one button the central digest renders (reaper.slack.digest)
# The central interactions function's role, exactly (tests/unit/test_org_forward.py): the Slack secret, the
# click's claim and record (PutItem) and the record the button names (GetItem), the member's role.
PERMISSIONS = frozenset({"secretsmanager:GetSecretValue", "dynamodb:PutItem", "dynamodb:GetItem", *click.PERMISSIONS})
REFUSED_ROLE_CODES = frozenset({"AccessDenied", "AccessDeniedException"})


def handle_central_request(
    event: Any, log: ActionLog | None, bot: SlackBot | None, now: datetime, sts: Any, lambda_for: click.LambdaFor
) -> HttpResponse:
    return serve(event, log, bot, now, lambda c, slack: central_click(log, sts, lambda_for, slack, c, now))


def central_click(log: ActionLog | None, sts: Any, lambda_for: click.LambdaFor, bot: SlackBot, c: Click, now: datetime) -> Answer:
    """Authorize, find the record the button named, hand the click to its member; every answer is also the
    organisation log's record of the click."""
    parts = c.arn.split(":")
    account = parts[4] if len(parts) > 5 else ""
    base: ClickRecord = {
        **c.record(),
        "region": parts[3] if len(parts) > 5 else "",  # only from a whole ARN: the account must come with it
        "account": account,
        "via": "central",
    }
    name = f"`{base['id']}`"
    if c.action != STOP:
        return Answer.of(
            base, "refused", "The organisation's digest acts only through Stop now; snooze or exempt from the owner's own message."
        )
    if c.user not in bot.config.admins:
        return Answer.of(base, "refused", f"<@{c.user}> is not an mlreaper admin of the organisation: nothing was done.")
    try:
        entry = _logged(log, c, now) if account.isdigit() and len(account) == 12 else None
    except AwsError as exc:
        return Answer.of(base, "failed", f"Could not read the organisation's log: {short(exc)}. Nothing was done; click again.")
    if entry is None or entry.arn != c.arn or entry.account != account or not entry.function:
        return Answer.of(
            base,
            "refused",
            f"{name} in account {account or '(none)'} is in no record a member of the organisation sent this week: "
            "nothing was asked of any account.",
        )
    try:
        click.forward_stop(sts, lambda_for, entry.function, stop_event(c, now))
    except AwsError as exc:
        if error_code(exc) in REFUSED_ROLE_CODES:
            return Answer.of(
                base,
                "refused",
                f"Account {account} does not let this central account act ({short(exc)}): its stack has no CentralActionRole "
                "trusting this account. Nothing was done.",
            )
        return Answer.of(
            base, "failed", f"Could not hand the stop of {name} to account {account}: {short(exc)}. Nothing was done; click again."
        )
    return Answer.of(
        base,
        "delegated",
        f"<@{c.user}> asked to stop {name} in account {account}: that account checks it again (exempt, snoozed, production and "
        "work in progress are refused there) and answers here.",
    )


def _logged(log: ActionLog | None, c: Click, now: datetime) -> LogEntry | None:
    """The record the button names, read back from the organisation's log; None when there is none this week."""
    sk = c.logged or ""
    if log is None or sk[:10] < f"{now - click.LOOKBACK:%Y-%m-%d}":
        return None
    return central.read(log.client, log.table, sk)
