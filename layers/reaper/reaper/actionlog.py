"""The action log: one DynamoDB table holding the log, claims and restore records.

Keys (all strings):
  log entries      pk = LOG#YYYY-MM-DD          sk = <iso time>#<kind>#<id>#<event>
  claims           pk = CLAIM#<sha256 of key>   sk = -          (conditional put; expires in 8 days)
  restore records  pk = RESTORE#<kind>#<id>     sk = <iso time>
A claim is how a duplicated delivery acts and posts once: the first writer wins.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from reaper.timeutil import as_utc, iso

LOG_TTL = timedelta(days=400)
CLAIM_TTL = timedelta(days=8)

PERMISSIONS = ("dynamodb:PutItem", "dynamodb:Query")


class ActionLog:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self.client = dynamodb
        self.table = table

    # -- claims ------------------------------------------------------------------------
    def claim(self, key: str, now: datetime) -> bool:
        """True for the first caller with this key; False for every later one."""
        digest = hashlib.sha256(key.encode()).hexdigest()
        try:
            self.client.put_item(
                TableName=self.table,
                Item={
                    "pk": {"S": f"CLAIM#{digest}"},
                    "sk": {"S": "-"},
                    "key": {"S": key[:1024]},
                    "at": {"S": iso(now)},
                    "expires_at": {"N": str(int((as_utc(now) + CLAIM_TTL).timestamp()))},
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True

    # -- log ---------------------------------------------------------------------------
    def record(self, entry: dict[str, Any], now: datetime, event_id: str) -> None:
        now = as_utc(now)
        sk = f"{iso(now)}#{entry.get('kind')}#{entry.get('id')}#{event_id[:12]}"
        self.client.put_item(
            TableName=self.table,
            Item={
                "pk": {"S": f"LOG#{now:%Y-%m-%d}"},
                "sk": {"S": sk},
                "entry": {"S": json.dumps({**entry, "logged_at": iso(now), "event_id": event_id}, default=str)},
                "expires_at": {"N": str(int((now + LOG_TTL).timestamp()))},
            },
        )

    def entries(self, since: datetime, until: datetime) -> Iterator[dict[str, Any]]:
        """Log entries from `since` to `until`, oldest first."""
        day = as_utc(since).date()
        last = as_utc(until).date()
        while day <= last:
            request: dict[str, Any] = {
                "TableName": self.table,
                "KeyConditionExpression": "pk = :pk AND sk >= :from",
                "ExpressionAttributeValues": {":pk": {"S": f"LOG#{day:%Y-%m-%d}"}, ":from": {"S": iso(since)}},
            }
            while True:
                page = self.client.query(**request)
                for item in page.get("Items", []):
                    yield json.loads(item["entry"]["S"])
                if "LastEvaluatedKey" not in page:
                    break
                request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
            day += timedelta(days=1)

    # -- restore records -----------------------------------------------------------------
    def put_restore(self, kind: str, resource_id: str, record: Mapping[str, Any], now: datetime) -> None:
        self.client.put_item(
            TableName=self.table,
            Item={
                "pk": {"S": f"RESTORE#{kind}#{resource_id}"},
                "sk": {"S": iso(now)},
                "record": {"S": json.dumps(record, default=_json_default)},
            },
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
