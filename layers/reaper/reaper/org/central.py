"""The central account's log: each member's forwarded record (reaper.record.forward), kept in the
organisation-wide table in the member log's own shape plus `account`.

The account is the event's own `account` field, which EventBridge sets to the account that sent it
(docs/aws-assumptions.md); a member cannot write a record in another member's name. A redelivered
event writes the same key again, so the log holds one copy.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from typing import Any, TypedDict

from reaper.core.errors import BadEventError
from reaper.core.events import parse_eventbridge
from reaper.record.forward import COVERAGE, RECORD, SOURCE
from reaper.record.logentry import BadEntry, LogEntry, parse_entry
from reaper.record.org_keys import log_key, logged_at, pk_of

log = logging.getLogger("reaper")

PERMISSIONS = ("dynamodb:PutItem",)
LOG_TTL = timedelta(days=400)  # as the member's log (reaper.record.actionlog)


class Taken(TypedDict):
    """What `take` wrote: the sender's account and the record's kind, id and type (None where it had none)."""

    account: str
    kind: str | None
    id: str | None
    type: str | None


def take(dynamodb: Any, table: str, event: Any) -> Taken:
    """Write one forwarded record; returns what was written (kind, id, account)."""
    ev = parse_eventbridge(event)
    if ev.source != SOURCE or ev.detail_type not in (RECORD, COVERAGE):
        raise BadEventError(f"the central log takes {SOURCE} records, not {ev.detail_type!r} from {ev.source!r}")
    account = str(event.get("account") or "")
    if not (account.isdigit() and len(account) == 12):
        raise BadEventError(f"a forwarded record without its sender's account ({account!r})")
    entry = {**ev.detail, "account": account}
    entry["event_id"] = str(entry.get("event_id") or ev.id)
    at = logged_at(entry)
    dynamodb.put_item(
        TableName=table,
        Item={**log_key(entry), "entry": {"S": json.dumps(entry, default=str)}, "expires_at": {"N": str(int((at + LOG_TTL).timestamp()))}},
    )
    return {"account": account, "kind": entry.get("kind"), "id": entry.get("id"), "type": entry.get("type")}


def read(dynamodb: Any, table: str, sort_key: str) -> LogEntry | None:
    """The record filed under `sort_key` (GetItem), or None: none there, or one that is not a log entry (said)."""
    item = dynamodb.get_item(TableName=table, Key={"pk": {"S": pk_of(sort_key)}, "sk": {"S": sort_key}}).get("Item")
    if item is None:
        return None
    try:
        return parse_entry(item.get("entry", {}).get("S", ""))
    except BadEntry as exc:
        log.warning("skipped a malformed organisation log entry %s: %s", sort_key, exc)
        return None
