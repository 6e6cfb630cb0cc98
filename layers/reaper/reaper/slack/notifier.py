"""The Slack notifier: reads the queue, posts each message once, and reports per message what
failed so SQS retries exactly those (and, after the queue's maxReceiveCount, keeps them in the
dead-letter queue). Powertools' BatchProcessor does the per-record bookkeeping; the event source
has `FunctionResponseTypes: [ReportBatchItemFailures]`
(https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).

Each body is read as a typed message (reaper.record.message.parse_body): a body that is not one
(not JSON, too big, an unknown type, a missing or mistyped field) is a poison message, logged
with the reason and counted (NotifierPoisonMessage), never posted, and reported as that record's
failure, so SQS retries it and, after maxReceiveCount, keeps it in the dead-letter queue; its
batch-mates are posted.

Once per message: a post is claimed in the action log before Slack is called (see
`ActionLog.claim_post`), keyed by the message's `message_key` (stamped by the outbox before
queueing, so a producer's retried SendMessage is the same message) or else the SQS message id
(the same on every redelivery). A claimed, sent or unconfirmed post is never sent again.

Rate: Slack takes about one message per second per webhook
(https://api.slack.com/apis/rate-limits). The event source runs at most 2 notifiers at once
(ScalingConfig MaximumConcurrency, whose minimum is 2:
https://docs.aws.amazon.com/lambda/latest/api/API_ScalingConfig.html), each posts at most one
message per `min_interval`, short 429s are waited out, and after a long one the rest of the
batch goes back to the queue without being tried.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import JsonValue

from reaper.aws import anomalies, pricing
from reaper.aws.discounts import CE_PERMISSIONS, Discounts
from reaper.core.errors import BadEventError
from reaper.core.events import is_sns, parse_sns
from reaper.core.observability import MetricUnit, logger, metrics
from reaper.record.actionlog import POST_CLAIM_PERMISSIONS, ActionLog, PostClaim
from reaper.record.message import BadMessage, Message, parse_body
from reaper.report import savings_metric, units
from reaper.slack import digest, post
from reaper.slack.anomaly_alerts import AnomalyAlerts
from reaper.slack.bot import SlackBot
from reaper.slack.render import render_for
from reaper.slack.webhook import WebhookConfigError, redact

__all__ = ["HeldBack", "Notifier", "PoisonMessage", "handle_queue_batch", "parse_body", "render_for"]

# the daily digest and the savings metric read the action log (Query); the metric is published
# into its own namespace only (template.yaml conditions PutMetricData on it)
# the digest's unit-cost line reads training jobs, endpoints and their metrics (reaper/report/units.py)
PERMISSIONS = frozenset(
    {
        "secretsmanager:GetSecretValue",
        *POST_CLAIM_PERMISSIONS,
        "dynamodb:Query",
        *savings_metric.PERMISSIONS,
        *units.PERMISSIONS,
        *pricing.PERMISSIONS,  # the digest's unit costs, priced by the Pricer (the price cache: Query, PutItem above)
    }
)
# DiscountAwareSavings=on (template condition DiscountsOn): the digest's Cost Explorer coverage read
# AnomalyAlerts=on (template condition AnomalyAlertsOn): the monitors' setup, and an alert's owner
CONDITIONAL_PERMISSIONS = {"DiscountsOn": CE_PERMISSIONS, "AnomalyAlertsOn": anomalies.PERMISSIONS}

# () -> the webhook URL, None when Slack is off; raises WebhookConfigError when it cannot be used
WebhookSource = Callable[[], str | None]
# () -> the bot (bot mode), None in webhook mode; raises WebhookConfigError when the secret cannot be used
BotSource = Callable[[], SlackBot | None]


class PoisonMessage(Exception):
    """A body that can never be posted (not a message: reaper.record.message.BadMessage; or it cannot be rendered)."""


class HeldBack(Exception):
    """Not tried in this invocation (rate limit, a live claim elsewhere, too little time left)."""


@dataclass
class Notifier:
    webhook: WebhookSource
    log: ActionLog | None = None
    bot: BotSource = lambda: None
    policy: post.PostPolicy = field(default_factory=post.PostPolicy)
    min_interval: float = 1.0
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic
    # () -> a CloudWatch client for the savings metric (made only when the daily schedule fires)
    cloudwatch: Callable[[], Any] | None = None
    # now -> savings after commitments for the digest (DiscountAwareSavings=on; reaper/aws/discounts.py)
    discounts: Callable[[datetime], Discounts] | None = None
    # () -> a Cost Explorer client: DigestBill=on only, the digest's line against the bill (docs/bill.md)
    cost_explorer: Callable[[], Any] | None = None
    # the organisation's digest (the central function): the bill by linked account, each member's stops against
    # its own account's drop (docs/bill.md, "Across the organisation")
    bill_org: bool = False
    # AnomalyAlerts=on: the anomaly topic and the clients behind it (reaper/slack/anomaly_alerts.py)
    anomalies: AnomalyAlerts | None = None
    # now -> the digest's unit-cost line (reaper/report/units.py), read only by the invocation that posts
    units: Callable[[datetime], str | None] | None = None
    # now -> the digest's right-size advice for endpoints (docs/kinds/endpoint.md#right-size-advice), read like units
    advice: Callable[[datetime], str | None] | None = None

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.policy.longest_post + self.min_interval + 5)

    def handle(self, event: Any, context: Any = None) -> NotifierResult:
        if isinstance(event, dict) and event.get("detail-type") == "Scheduled Event":
            return self.daily()
        if is_sns(event):
            return self.handle_alerts(event, context)
        if not isinstance(event, dict) or not isinstance(event.get("Records"), list):
            raise BadEventError("notifier expects an SQS event with Records")
        try:
            bot = self.bot()
            url = None if bot is not None else (self.webhook() or None)
        except WebhookConfigError as exc:
            # Never silence: count it (alarmed), say why (never the value), and keep every message.
            metrics.add_metric(name="SlackConfigError", unit=MetricUnit.Count, value=1)
            logger.error("the Slack webhook secret cannot be used; messages go back to the queue", extra={"problem": str(exc)})
            return {"batchItemFailures": [{"itemIdentifier": r.get("messageId", "")} for r in event["Records"]]}
        if bot is not None:
            batch = _Batch(self, "", context, bot=bot)
            processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
            return process_partial_response(event=event, record_handler=batch.post_record, processor=processor, context=context)
        if url is None:
            logger.info("Slack is not configured; the action log keeps the records", extra={"messages": len(event["Records"])})
            return {"batchItemFailures": []}
        batch = _Batch(self, url, context)
        processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
        return process_partial_response(event=event, record_handler=batch.post_record, processor=processor, context=context)

    def daily(self) -> DailyResult:
        """The daily schedule: the savings metric (any Slack mode), then the digest (bot mode).
        Both are tried; a failure of either raises afterwards, so the schedule's retry redoes it
        (each is claimed per day, so what succeeded is not done twice)."""
        failures: list[BaseException] = []
        savings: Published = {}
        try:
            savings = self.publish_savings()
        except Exception as exc:  # noqa: BLE001 - the digest still goes out; raised below
            logger.exception("the savings metric was not published; the schedule's retry will try again")
            failures.append(exc)
        try:
            self.setup_anomalies()
        except Exception as exc:  # noqa: BLE001 - the digest still goes out; raised below
            logger.exception("Cost Anomaly Detection was not set up; the schedule's retry will try again")
            failures.append(exc)
        try:
            result = self.post_daily_digest()
        except Exception as exc:  # noqa: BLE001 - raised below, after the metric's outcome is known
            failures.append(exc)
            result = {"posted": False}
        if failures:
            raise failures[-1]
        result["savings"] = savings
        return result

    def setup_anomalies(self) -> AnomalySetup:
        """AnomalyAlerts=on: the monitors on the ML tags and their subscription, created where missing."""
        if self.anomalies is None:
            return {}
        done = self.anomalies.setup()
        if done.created:
            logger.info("Cost Anomaly Detection set up", extra={"made": list(done.created)})
        return {"monitors": done.monitors, "subscription": done.subscription, "created": list(done.created)}

    def handle_alerts(self, event: Any, context: Any = None) -> AlertsResult:
        """Cost Anomaly Detection alerts (SNS, AnomalyAlerts=on): each to its owner once (per AnomalyId),
        and into the action log for the digest. A failed post raises: Lambda retries the SNS delivery."""
        if self.anomalies is None:
            raise BadEventError("an SNS delivery, but AnomalyAlerts is off")
        posted: list[str] = []
        for record in parse_sns(event).Records:
            if record.Sns.TopicArn != self.anomalies.topic_arn:
                raise BadEventError(f"SNS message from {record.Sns.TopicArn!r}, not the anomaly topic")
            try:
                alert = anomalies.Alert.parse(record.Sns.Message)
            except ValueError as exc:  # never posted, never retried: it can never be one
                metrics.add_metric(name="NotifierPoisonMessage", unit=MetricUnit.Count, value=1)
                logger.error("SNS message is not an anomaly alert", extra={"message_id": record.Sns.MessageId, "problem": str(exc)})
                continue
            payload = self.anomalies.message(alert)
            if self._deliver_now(payload, record.Sns.MessageId, context):
                posted.append(payload.id)
        return {"posted": posted}

    def _deliver_now(self, payload: Message, message_id: str, context: Any) -> bool:
        """One message outside the queue, through the queue's own claim and post; True when posted now."""
        bot = self.bot()
        url = None if bot is not None else (self.webhook() or None)
        if bot is None and url is None:
            logger.info("Slack is not configured; the action log keeps the record", extra={"message_id": message_id})
        batch = _Batch(self, url or "", context, bot=bot)
        key = f"post|{payload.message_key or message_id}"
        posted = True if bot is None and url is None else batch.deliver(key, payload, render_for(payload), message_id)
        if posted and self.log is not None:
            self.log.record(payload.as_record(), self.clock(), f"sns:{message_id}")
        return posted

    def _units_line(self, now: datetime, read: Callable[[datetime], str | None] | None = None, what: str = "unit costs") -> str | None:
        """The week's unit costs (or `read`'s line) in a line; a failed read leaves the line out (said in the log), never the digest."""
        read = self.units if read is None and what == "unit costs" else read
        if read is None:
            return None
        try:
            return read(now)
        except Exception:  # noqa: BLE001 - the digest goes out without the line
            logger.exception("%s were not read; the digest goes out without them", what)
            return None

    def publish_savings(self) -> Published:
        """Publish each complete day not yet published (see reaper.report.savings_metric); returns {day: {kind: usd}}."""
        if self.log is None or self.cloudwatch is None:
            logger.info("no savings metric: it needs the action log")
            return {}
        now = self.clock()
        days = savings_metric.days_to_publish(now)
        first, _ = savings_metric.day_bounds(days[0])
        entries = list(self.log.entries(first - savings_metric.LOOKBACK, now))
        published: Published = {}
        for day in days:
            key = f"metric|savings|{day:%Y-%m-%d}"
            claim = self.log.claim_post(key, now, self.lease)
            if claim is not PostClaim.CLAIMED:
                continue
            figures = savings_metric.day_savings(entries, day)
            try:
                savings_metric.publish(self.cloudwatch(), day, figures)
            except BaseException:
                self.log.release_post(key)
                raise
            self.log.finish_post(key, self.clock(), PostClaim.SENT)
            published[f"{day:%Y-%m-%d}"] = {k: f.saved_usd for k, f in figures.items()}
            unpriced = sum(f.unpriced for f in figures.values())
            if unpriced:
                logger.info(
                    "savings metric: some reclaimed resources have no price", extra={"day": f"{day:%Y-%m-%d}", "unpriced": unpriced}
                )
        return published

    def _bill_line(self, now: datetime) -> str:
        """One Cost Explorer read a day (kept in the action log, so a retried digest pays nothing more); a read
        that fails is said in the line, never stops the digest."""
        from botocore.exceptions import BotoCoreError, ClientError

        from reaper.report import bill, bill_view, reconcile

        assert self.log is not None and self.cost_explorer is not None
        since = now - bill.DIGEST_PERIOD
        try:
            read = bill.read(self.cost_explorer(), self.log, since, now, org=self.bill_org)
        except (ClientError, BotoCoreError) as exc:
            logger.warning("the digest's bill line was not read", extra={"problem": type(exc).__name__})
            return f"not read ({type(exc).__name__}): see `reaper report --bill`"
        rows = [] if read.refused else reconcile.reconcile(read, list(self.log.entries(since, now)), now)
        return bill_view.digest_line(read, rows)

    def post_daily_digest(self) -> DailyResult:
        """The admin channel's digest (bot mode), once per day however often the schedule fires.
        A failed post raises: the schedule's asynchronous invocation retries it."""
        bot = self.bot()
        if bot is None or self.log is None:
            logger.info("no daily digest: it needs a bot token in the Slack secret and the action log")
            return {"posted": False}
        now = self.clock()
        entries = list(self.log.entries(digest.window_start(now), now))
        payload = digest.build(entries, now)
        key = f"post|{payload.id}"
        claim = self.log.claim_post(key, now, self.lease)
        if claim is not PostClaim.CLAIMED:
            return {"posted": False, "claim": claim.value}
        commitments_now = self.discounts(now) if self.discounts is not None else None  # Cost Explorer bills each request
        units_now = self._units_line(now)
        if commitments_now is not None or units_now is not None:  # read only by the invocation that posts
            payload = digest.build(entries, now, commitments_now, units_now)
        if self.cost_explorer is not None:
            payload = payload.model_copy(update={"bill": self._bill_line(now)})
        if self.advice is not None:
            payload = payload.model_copy(update={"advice": self._units_line(now, self.advice, "right-size advice")})
        message = digest.render(payload)
        try:
            bot.post(payload, message)
        except post.SlackUnconfirmed:
            self.log.finish_post(key, self.clock(), PostClaim.UNCONFIRMED)
            return {"posted": False, "claim": PostClaim.UNCONFIRMED.value}
        except BaseException:
            self.log.release_post(key)
            raise
        self.log.finish_post(key, self.clock(), PostClaim.SENT)
        metrics.add_metric(name="SlackDigestPosted", unit=MetricUnit.Count, value=1)
        return {"posted": True, "digest": payload.model_dump(mode="json")}


Published = dict[str, dict[str, float]]  # the savings metric: UTC day -> {kind: USD}


class DailyResult(TypedDict, total=False):
    """The daily schedule: the digest (posted, or why not) and the savings metric's days."""

    posted: bool
    claim: str  # the digest's post claim when this invocation did not post it
    digest: dict[str, JsonValue]  # the DailyDigestMessage posted
    savings: Published


class AnomalySetup(TypedDict, total=False):
    monitors: dict[str, str]  # tag key -> monitor ARN
    subscription: str
    created: list[str]


class AlertsResult(TypedDict):
    posted: list[str]  # the AnomalyIds posted now


# what the notifier function returns: the queue's partial-batch answer, the daily schedule's, the alerts'
NotifierResult = PartialItemFailureResponse | DailyResult | AlertsResult


@dataclass
class _Batch:
    """One invocation's state: the pace, and whether Slack told us to stop."""

    notifier: Notifier
    url: str
    context: Any
    last_post: float | None = None
    held_until: float | None = None
    bot: SlackBot | None = None

    def post_record(self, record: SQSRecord) -> None:
        try:
            payload = _payload(record.body)
            message = render_for(payload)
        except PoisonMessage as exc:  # never posted: SQS retries it, then keeps it in the dead-letter queue
            metrics.add_metric(name="NotifierPoisonMessage", unit=MetricUnit.Count, value=1)
            logger.error(
                "message cannot be posted; it goes to the dead-letter queue", extra={"message_id": record.message_id, "problem": str(exc)}
            )
            raise
        except Exception as exc:  # noqa: BLE001 - a renderer bug on one payload must not sink its batch-mates
            metrics.add_metric(name="NotifierPoisonMessage", unit=MetricUnit.Count, value=1)
            logger.error("message cannot be rendered", extra={"message_id": record.message_id, "problem": f"{type(exc).__name__}: {exc}"})
            raise PoisonMessage(type(exc).__name__) from None
        self._check_time(record)
        self.deliver(f"post|{payload.message_key or record.message_id}", payload, message, record.message_id)

    def deliver(self, key: str, payload: Message, message: post.Message, message_id: str) -> bool:
        """Claim, post, finish: False when it was already posted (or probably was)."""
        n = self.notifier
        claim = n.log.claim_post(key, n.clock(), n.lease) if n.log is not None else PostClaim.CLAIMED
        if claim in (PostClaim.SENT, PostClaim.UNCONFIRMED):
            metrics.add_metric(name="SlackDuplicateSkipped", unit=MetricUnit.Count, value=1)
            logger.info("already posted; not again", extra={"message_id": message_id, "claim": claim.value})
            return False
        if claim is PostClaim.BUSY:
            raise HeldBack("another delivery is posting this message now")
        try:
            self._pace()
            if self.bot is not None:
                self.bot.post(payload, message)
            else:
                post.send(self.url, message, n.policy, n.sleep)
        except post.SlackUnconfirmed as exc:
            self._finish(key, PostClaim.UNCONFIRMED, message, payload)
            metrics.add_metric(name="SlackPostUnconfirmed", unit=MetricUnit.Count, value=1)
            logger.warning(
                "Slack did not answer after the message was sent; not sending it again",
                extra={"message_id": message_id, "problem": redact(str(exc), self.url)},
            )
            return True
        except post.SlackPostError as exc:
            self._release(key)
            if isinstance(exc, post.SlackRateLimited):
                self.held_until = n.monotonic() + exc.retry_after
            metrics.add_metric(name="SlackPostFailed", unit=MetricUnit.Count, value=1)
            logger.warning("Slack post failed; it will be retried", extra={"message_id": message_id, "problem": redact(str(exc), self.url)})
            raise
        except BaseException:
            self._release(key)
            raise
        self._finish(key, PostClaim.SENT, message, payload)
        metrics.add_metric(name="SlackPosted", unit=MetricUnit.Count, value=1)
        return True

    def _check_time(self, record: SQSRecord) -> None:
        n = self.notifier
        if self.held_until is not None and n.monotonic() < self.held_until:
            raise HeldBack("Slack asked us to wait; back to the queue")
        remaining = getattr(self.context, "get_remaining_time_in_millis", None)
        if callable(remaining) and remaining() / 1000 < n.policy.longest_post + n.min_interval + 1:
            raise HeldBack("too little time left in this invocation; back to the queue")

    def _pace(self) -> None:
        n = self.notifier
        if self.last_post is not None:
            wait = self.last_post + n.min_interval - n.monotonic()
            if wait > 0:
                n.sleep(wait)
        self.last_post = n.monotonic()

    def _finish(self, key: str, status: PostClaim, message: post.Message, payload: Message) -> None:
        if self.notifier.log is not None:
            full = payload.model_dump(mode="json") if message.cut else None
            self.notifier.log.finish_post(key, self.notifier.clock(), status, message.cut, full)

    def _release(self, key: str) -> None:
        if self.notifier.log is not None:
            self.notifier.log.release_post(key)


def _payload(body: str | None) -> Message:
    try:
        return parse_body(body)
    except BadMessage as exc:
        raise PoisonMessage(str(exc)) from None


def handle_queue_batch(
    event: Any, webhook: WebhookSource, log: ActionLog | None = None, context: Any = None, **options: Any
) -> NotifierResult:
    """One SQS batch in, the partial-batch response out."""
    return Notifier(webhook=webhook, log=log, **options).handle(event, context)
