"""A member account's copy of its records for the organisation's central account (issue: across the organisation).

With `REAPER_CENTRAL_EVENT_BUS_ARN` set, each record the sweep writes to its own action log (a
verdict, a notice, a coverage tally) is also sent as an EventBridge event to the central account's
bus, ten to a PutEvents call (its most). They are events, not table data: the central account
never reads the member's table, and the member never writes the central one.

A failed send is logged and counted, never an error of the sweep: the member's own action log
keeps the record, and the central log is a view of it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from reaper.aws.faults import AwsError, short
from reaper.core.observability import MetricUnit, metrics

log = logging.getLogger("reaper")

PERMISSIONS = ("events:PutEvents",)
SOURCE = "mlreaper.member"
RECORD = "mlreaper record"  # detail-type: a verdict or notice the member logged
COVERAGE = "mlreaper coverage"  # detail-type: a sweep's coverage tally for one kind and region
BATCH = 10  # botocore's PutEventsRequestEntryList: at most 10 entries a call
# "The total entry size must be less than 256KB" (PutEvents): a record over it is cut to its summary fields.
MAX_DETAIL = 200_000
SUMMARY_FIELDS = ("type", "kind", "id", "arn", "region", "verdict", "action", "reason", "executed", "hourly_usd", "owner", "project")


def detail_type(entry: dict[str, Any]) -> str:
    return COVERAGE if entry.get("type") == "coverage" else RECORD


@dataclass
class Forwarder:
    events: Any  # an EventBridge client in the member's home region
    bus_arn: str
    # the member function that logged the records (its name; the central account's Stop now invokes it
    # by this name through the member's CentralActionRole, whose policy names the functions it may invoke)
    function: str | None = None
    pending: list[dict[str, Any]] = field(default_factory=list)

    def add(self, body: dict[str, Any]) -> None:
        """`body` as the member logged it (with logged_at and event_id). The account is not in it: the
        central side takes it from the event's own `account`, which EventBridge sets to the sender's."""
        if self.function:
            body = {**body, "function": self.function}
        text = json.dumps(body, default=str)
        if len(text) > MAX_DETAIL:
            text = json.dumps({k: body.get(k) for k in (*SUMMARY_FIELDS, "logged_at", "event_id", "function")}, default=str)
        self.pending.append({"Source": SOURCE, "DetailType": detail_type(body), "Detail": text, "EventBusName": self.bus_arn})
        if len(self.pending) >= BATCH:
            self.flush()

    def flush(self) -> int:
        """Send what is pending; returns how many the bus refused or could not be sent."""
        failed = 0
        while self.pending:
            batch, self.pending = self.pending[:BATCH], self.pending[BATCH:]
            try:
                failed += int(self.events.put_events(Entries=batch).get("FailedEntryCount", 0))
            except AwsError as exc:
                log.error("central event bus: %d record(s) not forwarded: %s", len(batch), short(exc))
                failed += len(batch)
        if failed:
            metrics.add_metric(name="CentralForwardFailed", unit=MetricUnit.Count, value=failed)
        return failed
