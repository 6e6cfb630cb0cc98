"""The central settings function: each change of a SET item (the settings table's stream, filtered to
pk `SET`) is recorded in the organisation's log and posted to the central admin channel, once per
stream record however often the batch is retried; then every account's effective item is brought in
line (reaper.org.settings.reconcile). The hourly run only reconciles (accounts moved between OUs).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from reaper.core.errors import BadEventError
from reaper.core.observability import MetricUnit, metrics
from reaper.org.settings import SET, AccountsUnder, Reconciled, change_notice, reconcile
from reaper.record.actionlog import ActionLog
from reaper.record.message import NoticeMessage

log = logging.getLogger("reaper")

LOG_PERMISSIONS = ("dynamodb:PutItem",)  # the organisation's log: the claim and the record
STREAM_PERMISSIONS = ("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams")


class SettingsRun(Reconciled):
    told: list[str]  # the titles of the notices told this time


Post = Callable[[NoticeMessage], None]  # the central function's: rendered (reaper.slack.message) and posted


def take_changes(
    records: list[Mapping[str, object]], org_log: ActionLog, post: Post | None, central_account: str, now: datetime
) -> list[NoticeMessage]:
    """Record and post each SET change once; returns the notices told this time."""
    told: list[NoticeMessage] = []
    for record in records:
        change = record.get(
            "dynamodb"
        )  # a StreamRecord (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_StreamRecord.html)
        if record.get("eventSource") != "aws:dynamodb" or not isinstance(change, dict):
            raise BadEventError("the central settings function takes the settings table's stream records")
        if (change.get("Keys") or {}).get("pk", {}).get("S") != SET:
            continue  # an effective item (the stream's filter keeps them out; a test may not)
        event_id = str(record.get("eventID") or change.get("SequenceNumber"))
        if not org_log.claim(f"settings-change|{event_id}", now):
            continue
        notice = change_notice(str(record.get("eventName")), change.get("OldImage"), change.get("NewImage"), central_account)
        org_log.record(notice.as_record(), now, f"settings-{event_id}")
        told.append(notice)
        if post is None:
            continue
        try:
            post(notice)
        except Exception as exc:  # noqa: BLE001 - the change is in the log; a Slack failure must not block the reconcile
            log.error("central settings change not posted (it is in the organisation's log): %s", type(exc).__name__)
            metrics.add_metric(name="CentralSettingsPostFailed", unit=MetricUnit.Count, value=1)
    return told


def handle(
    event: dict[str, Any],
    dynamodb: Any,
    settings_table: str,
    org_log: ActionLog,
    accounts_under: AccountsUnder,
    post: Post | None,
    central_account: str,
    now: datetime,
) -> SettingsRun:
    told = take_changes(list(event.get("Records") or []), org_log, post, central_account, now) if "Records" in event else []
    result = reconcile(dynamodb, settings_table, accounts_under, now)
    return {**result, "told": [n.title for n in told]}
