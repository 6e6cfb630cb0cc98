"""The interactions endpoint (a Lambda function URL Slack posts button clicks to): one request in,
one HTTP answer out, fast (Slack waits 3 seconds: https://api.slack.com/interactivity/handling#acknowledgment_response).

Refused with 401 and never acted on: unsigned, badly signed, or older than 5 minutes (counted,
metric `SlackRequestRefused`, and logged). A signed request seen before (a replay: the same
signature) is answered 200 and not acted on again. Every signed click, refused or done, is a
record in the action log and an answer in the clicked message's thread.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypedDict

from reaper.aws.faults import AwsError, short
from reaper.core.observability import MetricUnit, logger, metrics
from reaper.record.actionlog import ActionLog
from reaper.record.runtime import Runtime
from reaper.slack.bot import SlackBot
from reaper.slack.buttons import Answer, Invoke, handle_click
from reaper.slack.reply import answer
from reaper.slack.request import Click, ClickRecord, RequestRefused, parse_click, verify

RECORD_ATTEMPTS = 3  # each already retried by the client (standard mode)
# (a signed, fresh, first click; the bot that verified it) -> what was done, said and recorded
Act = Callable[[Click, SlackBot], Answer]

# The interactions function's role, exactly (tests/unit/test_iam.py): the secret, the click's claim,
# record and lease, the two protection tags, and invoking the functions that stop and restore.
PERMISSIONS = frozenset(
    {
        "secretsmanager:GetSecretValue",
        "dynamodb:PutItem",
        "dynamodb:DeleteItem",
        "sagemaker:ListTags",
        "fsx:ListTagsForResource",
        "ec2:DescribeTags",
        "sagemaker:AddTags",
        "fsx:TagResource",
        "ec2:CreateTags",
        "lambda:InvokeFunction",
    }
)


class HttpResponse(TypedDict):
    """What a Lambda function URL returns (https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html#urls-response-payload)."""

    statusCode: int
    headers: dict[str, str]
    body: str


def http(status: int, text: str = "") -> HttpResponse:
    return {"statusCode": status, "headers": {"Content-Type": "text/plain"}, "body": text}


def handle_request(event: Any, rt: Runtime, bot: SlackBot | None, now: datetime, invoke: Invoke) -> HttpResponse:
    """The member's endpoint: every button of the member's messages, acted on in this account."""
    return serve(event, rt.log, bot, now, lambda click, slack: handle_click(rt, slack, click, now, invoke))


def serve(event: Any, log: ActionLog | None, bot: SlackBot | None, now: datetime, act: Act) -> HttpResponse:
    """The front door every Slack endpoint shares (the member's, the central account's): configured,
    signed, fresh, a button we render, claimed once in `log`; then `act`, its record in `log` and its
    answer in the clicked message's thread."""
    if bot is None or not bot.config.signing_secret:
        logger.error("Slack buttons need bot mode: a bot_token and a signing_secret in the Slack secret")
        return http(503, "mlreaper: Slack buttons are not configured")
    if log is None:
        logger.error("Slack buttons need the action log (REAPER_TABLE; REAPER_ORG_TABLE in the central account)")
        return http(503, "mlreaper: no action log")
    if not isinstance(event, dict):
        return http(400)
    try:
        body, signature = verify(event, bot.config.signing_secret, now)
        click = parse_click(body, signature)
    except RequestRefused as exc:
        metrics.add_metric(name="SlackRequestRefused", unit=MetricUnit.Count, value=1)
        logger.warning("Slack request refused", extra={"why": str(exc), "status": exc.status})
        return http(exc.status, str(exc))
    event_id = f"slack:{signature[-32:]}"
    try:
        first = log.claim(f"slack-request|{signature}", now)
    except AwsError as exc:
        metrics.add_metric(name="SlackRequestUnclaimed", unit=MetricUnit.Count, value=1)
        logger.warning("Slack click not claimed: nothing done", extra={"error": short(exc), "button": click.action})
        answer(click.response_url, f"mlreaper could not take this click ({short(exc)}): nothing was done. Click again.", click.thread_ts)
        return http(503, "mlreaper: the action log is unavailable; nothing was done")
    if not first:
        metrics.add_metric(name="SlackRequestReplayed", unit=MetricUnit.Count, value=1)
        logger.warning("Slack request replayed: not acted on again", extra={"user": click.user, "button": click.action})
        record_click(log, _replayed(click), now, event_id)
        return http(200)
    result = act(click, bot)
    record_click(log, result.record, now, event_id)
    logger.info("Slack click", extra={"button": click.action, "user": click.user, "result": result.status})
    answer(click.response_url, result.text, click.thread_ts)
    return http(200)


def _replayed(click: Click) -> ClickRecord:
    return {
        **click.record(),
        "result": "replayed",
        "reason": "the same signed request again: ignored",
    }


def record_click(log: ActionLog, entry: ClickRecord, now: datetime, event_id: str) -> None:
    """The click's record; a failure is logged and counted, and never keeps the answer from being posted
    (a change the click made was recorded ahead of it)."""
    for attempt in range(RECORD_ATTEMPTS):
        try:
            log.record(entry, now, event_id)
            return
        except AwsError as exc:
            if attempt == RECORD_ATTEMPTS - 1:
                metrics.add_metric(name="SlackClickUnrecorded", unit=MetricUnit.Count, value=1)
                logger.error("Slack click not recorded", extra={"error": short(exc), "result": entry.get("result")})
