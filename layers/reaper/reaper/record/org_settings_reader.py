"""A member account's read of the modes its organisation's central account set for it
(docs/deploy-organisation.md, "Per-account settings").

The central account keeps one effective item per account in its settings table; a member reads its
own, by the table's ARN, with one GetItem. The table's resource-based policy lets a principal of the
organisation read only the item whose partition key is its own account id
(`dynamodb:LeadingKeys` = `${aws:PrincipalAccount}`, docs/aws-assumptions.md O13-O15). A reading is
kept for TTL, so a burst of invocations reads once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from reaper.aws.faults import AwsError, short
from reaper.core.org_settings import EFFECTIVE, Reading, parse_effective

PERMISSIONS = ("dynamodb:GetItem",)
TTL = timedelta(seconds=60)  # a setting reaches a member within a minute of the central function writing it


@dataclass
class CentralSettingsReader:
    dynamodb: Any  # a DynamoDB client in the central table's region
    table_arn: str
    account: str
    policy: str  # follow | dry-run-only | ignore (the stack's CentralSettings parameter)
    _cached: tuple[datetime, Reading] | None = None
    told: str | None = None  # the state this process last recorded (reaper.sweep.org_modes): no write while it holds

    def read(self, now: datetime) -> Reading:
        if self._cached is not None and timedelta(0) <= now - self._cached[0] < TTL:
            return self._cached[1]
        try:
            item = self.dynamodb.get_item(
                TableName=self.table_arn, Key={"pk": {"S": self.account}, "sk": {"S": EFFECTIVE}}, ConsistentRead=True
            ).get("Item")
        except AwsError as exc:
            reading = Reading("unreadable", detail=short(exc))
        else:
            reading = parse_effective(item, self.account)
        self._cached = (now, reading)
        return reading
