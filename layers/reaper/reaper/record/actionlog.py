"""The action log: one DynamoDB table holding the log, claims and restore records.

Keys (all strings):
  log entries      pk = LOG#YYYY-MM-DD          sk = <iso time, µs>#<kind>#<id>#<event>
  claims           pk = CLAIM#<sha256 of key>   sk = -          (conditional put; expires in 8 days)
  restore records  pk = RESTORE#<kind>#<id>     sk = <iso time>
  leases           pk = LEASE#<sha256 of arn>   sk = -          (conditional put; held for minutes)
  unposted         pk = UNPOSTED                sk = <iso time>#<kind>#<id>#<event>
A claim is how a duplicated delivery acts and posts once: the first writer wins. A lease is how two
sweeps running at once (the schedule and a CLI, say) never warn or act on one resource twice. An
unposted item is a message recorded but not yet handed to the queue: it is deleted once queued,
and the next sweep posts what a sweep that died left behind.
  Slack posts      pk = POST#<sha256 of key>    sk = -          (status sending|sent|unconfirmed; 8 days)
  sweep chains     pk = CHAIN#<kind>#<region>   sk = -          (conditional put; see reaper.sweep.chain, reaper.record.chain_record)
  budget confirmations pk = BUDGET#CONFIRMED sk = <ml:project> (an admin confirmed a tag-made budget: usd, by, at)
  bill reads       pk = BILL#YYYY-MM-DD         sk = <sha256 of the request> (a day's Cost Explorer answer,
                   compressed; read by `reaper report --bill`, expires in 2 days: docs/bill.md)

A post claim is taken (status `sending`, with a lease) before the notifier calls Slack, and
becomes `sent` after Slack's 200, or `unconfirmed` when the request went out and no answer
came: neither is ever sent again. When Slack refused or could not be reached the claim is
released, so the queue's retry posts it. When the notifier died mid-post (the function timed
out) the claim stays `sending` until its lease ends; the queue brings the message back only
after its visibility timeout (longer than the lease), and that delivery takes the claim over.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any

from botocore.exceptions import ClientError
from pydantic import JsonValue

from reaper.aws.dynamo_shapes import AttributeValue, Delete, Item, Put, Query, TransactItem
from reaper.core.timeutil import as_utc, iso
from reaper.record import chain_record
from reaper.record.logentry import BadEntry, LogEntry, parse_entry

log = logging.getLogger("reaper")

LOG_TTL = timedelta(days=400)
CLAIM_TTL = timedelta(days=8)

LEASE_TTL = timedelta(minutes=15)  # longer than any function runs (the Lambda limit is 15 minutes)
UNPOSTED_AFTER = timedelta(minutes=15)  # older than this, an unposted message's sweep is over

BUDGETS_PK = "BUDGET#CONFIRMED"  # sk = ml:project
RECORD_PERMISSIONS = ("dynamodb:PutItem", "dynamodb:Query")  # records, claims, restore records
# a sweep also drops queued messages from the unposted list and gives leases back
PERMISSIONS = (*RECORD_PERMISSIONS, "dynamodb:BatchWriteItem", "dynamodb:DeleteItem")
POST_CLAIM_PERMISSIONS = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem")


# TransactWriteItems takes "up to 100 action requests" (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html)
TRANSACT_MAX = 100
SETTLE_ITEMS = 3  # a settled change: its record (or its removal), its unposted copy (or its removal), its lease
SETTLE_BATCH = TRANSACT_MAX // SETTLE_ITEMS  # 33 settled changes alone in one write; fewer ride along with a change begun


class TooManyItems(ValueError):
    """A transaction this module built is past TRANSACT_MAX: a bug here, never sent to DynamoDB."""


class Begun(StrEnum):
    BEGUN = "begun"  # leased, claimed and written ahead: make the change
    LEASED = "leased"  # another sweep holds the resource right now
    CLAIMED = "claimed"  # this decision of this event was handled already


@dataclass(frozen=True)
class Settlement:
    """How a begun change ended: `entry` replaces its write-ahead record and unposted copy (None: both
    go); `now` and `event_id` are the sweep's, which keyed the write-ahead record; `holder` holds the lease."""

    arn: str
    holder: str
    kind: str
    id: str
    entry: Mapping[str, object] | None
    now: datetime
    event_id: str


@dataclass(frozen=True)
class Unposted:
    """A message kept until queued. `at` and `event_id` key its log entry (None on items written before
    they were kept): with them a later sweep settles a change its own sweep could not (reaper.sweep.reconcile)."""

    sort_key: str
    body: dict[str, Any]
    at: datetime | None = None
    event_id: str | None = None


class PostClaim(StrEnum):
    CLAIMED = "claimed"  # ours: send it
    SENT = "sent"  # posted before: do not send
    UNCONFIRMED = "unconfirmed"  # sent before, no answer: do not send
    BUSY = "busy"  # another delivery is sending it now: try later


class ActionLog:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self.client = dynamodb
        self.table = table
        # each log entry, as written, also goes here (reaper.record.forward: the organisation's central bus)
        self.copy_to: Callable[[dict[str, object]], None] | None = None
        # entries `entries` could not read (sort key: problem), for the reader to say (reaper log, report)
        self.skipped: list[str] = []

    # -- claims ------------------------------------------------------------------------
    def claim(self, key: str, now: datetime) -> bool:
        """True for the first caller with this key; False for every later one."""
        try:
            self.client.put_item(TableName=self.table, **_claim_put(key, now))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def note_state(self, key: str, state: str, now: datetime) -> tuple[bool, str | None]:
        """Keep `state` under `key`: (True, the state before) for the first caller to see a change, else
        (False, None). A conditional PutItem, so two functions seeing the same change tell it once."""
        try:
            old = self.client.put_item(
                TableName=self.table,
                Item={"pk": {"S": f"STATE#{key}"}, "sk": {"S": "-"}, "state": {"S": state[:1024]}, "at": {"S": iso(now)}},
                ConditionExpression="attribute_not_exists(pk) OR #s <> :state",
                ExpressionAttributeNames={"#s": "state"},
                ExpressionAttributeValues={":state": {"S": state[:1024]}},
                ReturnValues="ALL_OLD",
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False, None
            raise
        before = old.get("Attributes", {}).get("state", {}).get("S")
        return True, before

    def lease(self, arn: str, holder: str, now: datetime) -> bool:
        """Hold `arn` for LEASE_TTL: True when free (or held by `holder`), False when another sweep has it."""
        try:
            self.client.put_item(TableName=self.table, **_lease_put(arn, holder, now))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True

    # -- a change: begun ahead in one write, settled in one batched write (reaper.sweep.pipeline, courier) --
    def begin(
        self,
        arn: str,
        holder: str,
        claim_key: str,
        entry: Mapping[str, object],
        now: datetime,
        event_id: str,
        settle: list[Settlement] | None = None,
    ) -> Begun:
        """The lease, the claim and the write-ahead record (its log entry and unposted copy), in one
        TransactWriteItems: all four are written, or none (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
        The earlier changes in `settle` ride along, as many as fit beside this change's four items in one
        transaction (TRANSACT_MAX), and are removed from it once written; when the write with them fails
        for any reason, this change is begun alone and they stay there.

        BEGUN when this caller may make the change; LEASED when another sweep holds the resource; CLAIMED
        when this decision was handled already under `claim_key` (an earlier delivery of the event).
        """
        items: list[TransactItem] = [
            {"Put": {"TableName": self.table, **_lease_put(arn, holder, now)}},
            {"Put": {"TableName": self.table, **_claim_put(claim_key, now)}},
        ]
        self.record(entry, now, event_id, into=items)
        self.put_unposted(entry, now, event_id, into=items)
        room = (TRANSACT_MAX - len(items)) // SETTLE_ITEMS
        riding = settle[:room] if settle else []
        if riding:
            try:
                begun = self._begin([*items, *self._settle_items(riding)])
            except ClientError:  # nothing of it was written (their lease taken over, say): begin alone
                return self._begin(items)
            if begun is Begun.BEGUN:
                assert settle is not None
                del settle[: len(riding)]  # the rest ride with the next change, or the courier settles them
            return begun
        return self._begin(items)

    def _transact(self, items: list[TransactItem]) -> None:
        """One TransactWriteItems, never past DynamoDB's limit on its items."""
        if len(items) > TRANSACT_MAX:
            raise TooManyItems(f"{len(items)} items in one transaction; TransactWriteItems takes {TRANSACT_MAX}")
        self.client.transact_write_items(TransactItems=items)

    def _begin(self, items: list[TransactItem]) -> Begun:
        try:
            self._transact(items)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                raise
            # one reason per item, in order: the lease is first, the claim second
            reasons = [r.get("Code") for r in exc.response.get("CancellationReasons", [])]
            if reasons[:1] == ["ConditionalCheckFailed"]:
                return Begun.LEASED
            if reasons[1:2] == ["ConditionalCheckFailed"]:
                return Begun.CLAIMED
            raise
        return Begun.BEGUN

    def settle(self, settlements: Sequence[Settlement]) -> None:
        """Replace begun changes' write-ahead records by how they ended and give their leases back, up to
        SETTLE_BATCH changes in one TransactWriteItems (three items each; it takes 100). All or none:
        on any error nothing of that batch is settled, and `settle_apart` does them one by one."""
        for i in range(0, len(settlements), SETTLE_BATCH):
            self._transact(self._settle_items(settlements[i : i + SETTLE_BATCH]))

    def _settle_items(self, settlements: Sequence[Settlement]) -> list[TransactItem]:
        items: list[TransactItem] = []
        for s in settlements:
            if s.entry is None:  # nothing worth telling: the write-ahead copies go
                items.append({"Delete": {"TableName": self.table, "Key": _log_key(s.kind, s.id, s.now, s.event_id)}})
                items.append({"Delete": {"TableName": self.table, "Key": _unposted_key(s.kind, s.id, s.now, s.event_id)}})
            else:
                self.record(s.entry, s.now, s.event_id, into=items)
                self.put_unposted(s.entry, s.now, s.event_id, into=items)
            items.append({"Delete": {"TableName": self.table, **_lease_release(s.arn, s.holder)}})
        return items

    def settle_apart(self, s: Settlement) -> None:
        """One settlement in plain writes (what `settle` does, without its all-or-none): the record first."""
        if s.entry is None:
            self.client.delete_item(TableName=self.table, Key=_log_key(s.kind, s.id, s.now, s.event_id))
            self.client.delete_item(TableName=self.table, Key=_unposted_key(s.kind, s.id, s.now, s.event_id))
        else:
            self.record(s.entry, s.now, s.event_id)
            self.put_unposted(s.entry, s.now, s.event_id)
        self.release(s.arn, s.holder)

    def release(self, arn: str, holder: str) -> None:
        """Give the lease back once the change is made and recorded (a later sweep may act again)."""
        try:
            self.client.delete_item(TableName=self.table, **_lease_release(arn, holder))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise

    # -- Slack post claims ------------------------------------------------------------------
    def claim_post(self, key: str, now: datetime, lease: timedelta) -> PostClaim:
        """Claim the right to post `key`: first caller, or the first after a dead sender's lease."""
        now = as_utc(now)
        try:
            self.client.put_item(
                TableName=self.table,
                Item={
                    **_post_key(key),
                    "key": {"S": key[:1024]},
                    "status": {"S": "sending"},
                    "at": {"S": iso(now)},
                    "lease_until": {"N": str(int((now + lease).timestamp()))},
                    "expires_at": {"N": str(int((now + CLAIM_TTL).timestamp()))},
                },
                ConditionExpression="attribute_not_exists(pk) OR (#s = :sending AND lease_until < :now)",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={":sending": {"S": "sending"}, ":now": {"N": str(int(now.timestamp()))}},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise
            status = exc.response.get("Item", {}).get("status", {}).get("S")
            if status == "sent":
                return PostClaim.SENT
            if status == "unconfirmed":
                return PostClaim.UNCONFIRMED
            return PostClaim.BUSY
        return PostClaim.CLAIMED

    def finish_post(
        self, key: str, now: datetime, status: PostClaim, cut: tuple[str, ...] = (), record: Mapping[str, object] | None = None
    ) -> None:
        """Mark a claimed post sent (or unconfirmed); a message cut to fit keeps its full record here."""
        values: Item = {":status": {"S": status.value}, ":at": {"S": iso(now)}}
        update = "SET #s = :status, finished_at = :at REMOVE lease_until"
        if cut:
            values[":cut"] = {"S": ",".join(cut)}
            values[":record"] = {"S": json.dumps(record or {}, default=str)}
            update = "SET #s = :status, finished_at = :at, cut_parts = :cut, full_record = :record REMOVE lease_until"
        self.client.update_item(
            TableName=self.table,
            Key=_post_key(key),
            UpdateExpression=update,
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues=values,
        )

    def release_post(self, key: str) -> None:
        """Give a claim back after Slack did not take the message, so the retry may post it."""
        try:
            self.client.delete_item(
                TableName=self.table,
                Key=_post_key(key),
                ConditionExpression="#s = :sending",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={":sending": {"S": "sending"}},
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise

    # -- sweep chains (reaper.sweep.chain) ---------------------------------------------------------
    def chain(self, kind: str, region: str) -> chain_record.ChainRecord | None:
        """The kind's chain record, read strongly consistent (a Query: what RECORD_PERMISSIONS grant), its
        fields parsed (reaper.record.chain_record); None when there is none. Raises AwsError when the table
        cannot be read."""
        page = self.client.query(
            TableName=self.table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": _chain_pk(kind, region)}},
            ConsistentRead=True,
            Limit=1,
        )
        items = page.get("Items", [])
        return chain_record.parse({k: next(iter(v.values())) for k, v in items[0].items()}) if items else None

    def put_chain(self, kind: str, region: str, fields: Mapping[str, str | int], condition: str, values: Mapping[str, str | int]) -> bool:
        """Write the kind's chain record when `condition` holds; False when it does not.

        `fields` and `values` are strings or integers; the condition names them as `#status`, `#part`
        and `:name` (status and part are reserved words in DynamoDB expressions).
        """
        item: Item = {"pk": {"S": _chain_pk(kind, region)}, "sk": {"S": "-"}, **{k: _attr(v) for k, v in fields.items()}}
        request: Put = {"TableName": self.table, "Item": item, "ConditionExpression": condition}
        names = {n: n[1:] for n in ("#status", "#part") if n in condition}  # DynamoDB refuses unused or empty ones
        if names:
            request["ExpressionAttributeNames"] = names
        if values:
            request["ExpressionAttributeValues"] = {f":{k}": _attr(v) for k, v in values.items()}
        try:
            self.client.put_item(**request)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True

    # -- unposted messages --------------------------------------------------------------
    def put_unposted(self, body: Mapping[str, object], now: datetime, event_id: str, into: list[TransactItem] | None = None) -> str:
        """Keep a message until it is queued; returns its sort key (to drop it once queued).

        With `into`, the write is added to that transaction instead of made now."""
        now = as_utc(now)
        key = _unposted_key(str(body.get("kind")), str(body.get("id")), now, event_id)
        item: Item = {
            **key,
            "body": {"S": json.dumps(body, default=str)},
            "expires_at": {"N": str(int((now + LOG_TTL).timestamp()))},
            # the keys of its log entry (to the microsecond), so a later sweep can settle that entry in place
            "at": {"S": _sort_time(now)},
            "event_id": {"S": event_id[:256]},
        }
        if into is not None:
            into.append({"Put": {"TableName": self.table, "Item": item}})
        else:
            self.client.put_item(TableName=self.table, Item=item)
        return str(key["sk"]["S"])

    def unposted_sort_key(self, body: Mapping[str, object], now: datetime, event_id: str) -> str:
        """The sort key `put_unposted` gives this message."""
        return str(_unposted_key(str(body.get("kind")), str(body.get("id")), now, event_id)["sk"]["S"])

    def drop_unposted(self, sort_keys: list[str]) -> None:
        for i in range(0, len(sort_keys), 25):
            request = {self.table: [{"DeleteRequest": {"Key": {"pk": {"S": "UNPOSTED"}, "sk": {"S": sk}}}} for sk in sort_keys[i : i + 25]]}
            for _ in range(5):  # BatchWriteItem hands back what it did not do
                left = self.client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
                if not left:
                    break
                request = left

    def unposted(self, now: datetime, limit: int = 200) -> list[tuple[str, dict[str, Any]]]:
        """Messages a finished sweep recorded and never queued (older than UNPOSTED_AFTER), oldest first."""
        return [(u.sort_key, u.body) for u in self.unposted_entries(now, limit)]

    def unposted_entries(self, now: datetime, limit: int = 200) -> list[Unposted]:
        """`unposted`, each with the keys of its log entry where the item has them."""
        before = iso(as_utc(now) - UNPOSTED_AFTER)
        page = self.client.query(
            TableName=self.table,
            KeyConditionExpression="pk = :pk AND sk < :before",
            ExpressionAttributeValues={":pk": {"S": "UNPOSTED"}, ":before": {"S": before}},
            Limit=limit,
        )
        out: list[Unposted] = []
        for item in page.get("Items", []):
            at = item.get("at", {}).get("S")
            out.append(
                Unposted(
                    sort_key=item["sk"]["S"],
                    body=json.loads(item["body"]["S"]),
                    at=datetime.fromisoformat(at) if at else None,
                    event_id=item.get("event_id", {}).get("S"),
                )
            )
        return out

    # -- log ---------------------------------------------------------------------------
    def record(self, entry: Mapping[str, object], now: datetime, event_id: str, into: list[TransactItem] | None = None) -> None:
        """Write a log entry; with `into`, add the write to that transaction instead of making it now."""
        now = as_utc(now)
        body = {**entry, "logged_at": iso(now), "event_id": event_id}
        item: Item = {
            **_log_key(str(entry.get("kind")), str(entry.get("id")), now, event_id),
            "entry": {"S": json.dumps(body, default=str)},
            "expires_at": {"N": str(int((now + LOG_TTL).timestamp()))},
        }
        if into is not None:
            into.append({"Put": {"TableName": self.table, "Item": item}})
        else:
            self.client.put_item(TableName=self.table, Item=item)
        if self.copy_to is not None:
            self.copy_to(body)

    def entries(self, since: datetime, until: datetime) -> Iterator[LogEntry]:
        """Log entries from `since` to `until`, oldest first. An entry that is not one (reaper.record.logentry:
        a field missing or of the wrong type) is skipped: said in the log and kept in `skipped`, never raised."""
        day = as_utc(since).date()
        last = as_utc(until).date()
        while day <= last:
            request: Query = {
                "TableName": self.table,
                "KeyConditionExpression": "pk = :pk AND sk >= :from",
                "ExpressionAttributeValues": {":pk": {"S": f"LOG#{day:%Y-%m-%d}"}, ":from": {"S": _sort_time(since)}},
            }
            while True:
                page = self.client.query(**request)
                for item in page.get("Items", []):
                    entry = self._read(item)
                    if entry is not None:
                        yield entry
                if "LastEvaluatedKey" not in page:
                    break
                request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
            day += timedelta(days=1)

    def stored_entries(self, since: datetime, until: datetime) -> Iterator[dict[str, JsonValue]]:
        """`entries` as stored, every key (what `reaper log --output json` prints; tests read these)."""
        return (e.stored for e in self.entries(since, until))

    def _read(self, item: Mapping[str, Any]) -> LogEntry | None:
        where = str(item.get("sk", {}).get("S", "?"))
        try:
            return parse_entry(item["entry"]["S"])
        except (KeyError, TypeError):
            problem = "no entry text"
        except BadEntry as exc:
            problem = str(exc)
        self.skipped.append(f"{where}: {problem}")
        log.warning("skipped a malformed action-log entry %s: %s", where, problem)
        return None

    # -- budgets an admin confirmed (reaper.slack.buttons, reaper.aws.budgets) -------------------
    def confirm_budget(self, project: str, usd: float, user: str, now: datetime) -> None:
        """An admin confirmed the tag-made budget of `project` at `usd` a month (the latest confirmation counts)."""
        self.client.put_item(
            TableName=self.table,
            Item={
                "pk": {"S": BUDGETS_PK},
                "sk": {"S": project[:1024]},
                "usd": {"N": f"{usd:.2f}"},
                "by": {"S": user[:64]},
                "at": {"S": iso(now)},
            },
        )

    def budget_confirmations(self) -> dict[str, tuple[float, str]]:
        """{project: (confirmed USD a month, who confirmed)}, read strongly consistent (Query: RECORD_PERMISSIONS)."""
        out: dict[str, tuple[float, str]] = {}
        request: Query = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": BUDGETS_PK}},
            "ConsistentRead": True,
        }
        while True:
            page = self.client.query(**request)
            for item in page.get("Items", []):
                out[item["sk"]["S"]] = (float(item["usd"]["N"]), item.get("by", {}).get("S", ""))
            if "LastEvaluatedKey" not in page:
                return out
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    # -- restore records -----------------------------------------------------------------
    def put_restore(self, kind: str, resource_id: str, record: Mapping[str, Any], now: datetime) -> None:
        self.client.put_item(TableName=self.table, Item=_restore_item(kind, resource_id, record, now))

    def put_restores(self, kind: str, records: Sequence[tuple[str, Mapping[str, Any]]], now: datetime) -> None:
        """Many restore records (a batch's, written after its gates and before its changes) in TransactWriteItems
        of up to TRANSACT_MAX: each write is all of its records or none, and raises when it is none
        (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html)."""
        if len(records) == 1:
            self.put_restore(kind, records[0][0], records[0][1], now)
            return
        for i in range(0, len(records), TRANSACT_MAX):
            self.client.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": self.table, "Item": _restore_item(kind, rid, record, now)}}
                    for rid, record in records[i : i + TRANSACT_MAX]
                ]
            )

    def latest_restore(self, kind: str, resource_id: str) -> dict[str, Any] | None:
        page = self.client.query(
            TableName=self.table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": f"RESTORE#{kind}#{resource_id}"}},
            ScanIndexForward=False,
            Limit=1,
        )
        items = page.get("Items", [])
        return json.loads(items[0]["record"]["S"]) if items else None

    # -- the day's Cost Explorer answer (reaper.report.bill: one paid read a day per request) -------
    def cached_bill(self, day: str, request_key: str) -> bytes | None:
        page = self.client.query(
            TableName=self.table,
            KeyConditionExpression="pk = :pk AND sk = :sk",
            ExpressionAttributeValues={":pk": {"S": f"BILL#{day}"}, ":sk": {"S": request_key}},
        )
        items = page.get("Items", [])
        return bytes(items[0]["answer"]["B"]) if items else None

    def put_bill(self, day: str, request_key: str, answer: bytes, now: datetime) -> None:
        self.client.put_item(
            TableName=self.table,
            Item={
                "pk": {"S": f"BILL#{day}"},
                "sk": {"S": request_key},
                "answer": {"B": answer},
                "expires_at": {"N": str(int((as_utc(now) + timedelta(days=2)).timestamp()))},
            },
        )


def _log_key(kind: str, resource_id: str, now: datetime, event_id: str) -> Item:
    # microseconds in the key: a warning and the action after it can fall in one second (two quick
    # sweeps), and whole seconds left them in the order of their event ids, i.e. by chance
    now = as_utc(now)
    return {"pk": {"S": f"LOG#{now:%Y-%m-%d}"}, "sk": {"S": f"{_sort_time(now)}#{kind}#{resource_id}#{event_id[:12]}"}}


def _unposted_key(kind: str, resource_id: str, now: datetime, event_id: str) -> Item:
    return {"pk": {"S": "UNPOSTED"}, "sk": {"S": f"{iso(as_utc(now))}#{kind}#{resource_id}#{event_id[:36]}"}}


def _claim_put(key: str, now: datetime) -> Put:
    digest = hashlib.sha256(key.encode()).hexdigest()
    return {
        "Item": {
            "pk": {"S": f"CLAIM#{digest}"},
            "sk": {"S": "-"},
            "key": {"S": key[:1024]},
            "at": {"S": iso(now)},
            "expires_at": {"N": str(int((as_utc(now) + CLAIM_TTL).timestamp()))},
        },
        "ConditionExpression": "attribute_not_exists(pk)",
    }


def _lease_put(arn: str, holder: str, now: datetime) -> Put:
    digest = hashlib.sha256(arn.encode()).hexdigest()
    now = as_utc(now)
    return {
        "Item": {
            "pk": {"S": f"LEASE#{digest}"},
            "sk": {"S": "-"},
            "arn": {"S": arn[:1024]},
            "holder": {"S": holder[:256]},
            "until": {"N": str(int((now + LEASE_TTL).timestamp()))},
            "expires_at": {"N": str(int((now + LEASE_TTL + timedelta(days=1)).timestamp()))},
        },
        "ConditionExpression": "attribute_not_exists(pk) OR #until < :now OR holder = :holder",
        "ExpressionAttributeNames": {"#until": "until"},
        "ExpressionAttributeValues": {":now": {"N": str(int(now.timestamp()))}, ":holder": {"S": holder[:256]}},
    }


def _lease_release(arn: str, holder: str) -> Delete:
    """Delete the lease if it is ours. In a transaction a lease found gone passes too (nothing to give
    back); alone, a ConditionalCheckFailed is ignored by `release`."""
    digest = hashlib.sha256(arn.encode()).hexdigest()
    return {
        "Key": {"pk": {"S": f"LEASE#{digest}"}, "sk": {"S": "-"}},
        "ConditionExpression": "attribute_not_exists(pk) OR holder = :holder",
        "ExpressionAttributeValues": {":holder": {"S": holder[:256]}},
    }


def _sort_time(at: datetime) -> str:
    """A log entry's time in its sort key, to the microsecond. Keys written before (whole seconds,
    `…:05Z#`) sort after this second's fractions (`…:05.000001Z#`), so a since-bound still finds them."""
    return f"{as_utc(at):%Y-%m-%dT%H:%M:%S.%f}Z"


def _chain_pk(kind: str, region: str) -> str:
    return f"CHAIN#{kind}#{region}"


def _attr(value: str | int) -> AttributeValue:
    return {"N": str(value)} if isinstance(value, int) else {"S": value}


def _post_key(key: str) -> Item:
    return {"pk": {"S": f"POST#{hashlib.sha256(key.encode()).hexdigest()}"}, "sk": {"S": "-"}}


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return str(value)


def create_table(dynamodb: Any, table: str) -> bool:
    """Create the table as the stack does (for `reaper init`). False if it exists already."""
    try:
        dynamodb.create_table(
            TableName=table,
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            BillingMode="PAY_PER_REQUEST",
        )
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ResourceInUseException":
            return False
        raise
    dynamodb.get_waiter("table_exists").wait(TableName=table, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    dynamodb.update_time_to_live(TableName=table, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires_at"})
    return True


def _restore_item(kind: str, resource_id: str, record: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    return {
        "pk": {"S": f"RESTORE#{kind}#{resource_id}"},
        "sk": {"S": iso(now)},
        "record": {"S": json.dumps(record, default=_json_default)},
    }
