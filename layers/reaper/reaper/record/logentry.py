"""One action-log entry, as read back: a pydantic model over the JSON the log stores (reaper.record.actionlog).

The log holds several shapes under one key scheme: a verdict (an Outcome's `to_json()`, the courier),
a notice, a budget change, a coverage tally (`type` "coverage"), a click or a settings change; the
organisation's central table holds each member's entries plus `account` (reaper.org.central). They
share the fields below; every other key an entry has is kept as it was stored (`extra="allow"`), and
`stored` is the entry exactly as read, key for key and value for value, which is what `reaper log
--output json/csv` prints. Entries written before this model still validate
(tests/unit/test_log_entry_seam.py replays entries captured from the code before it).

Read with `parse_entry`: an entry that is not JSON, lacks `logged_at` or has a field of the wrong
type raises BadEntry with the field and the problem (never the value); `ActionLog.entries` reports
it and goes on with the next one (docs/cli.md, `reaper log`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime

from pydantic import BaseModel, ConfigDict, JsonValue, PrivateAttr, ValidationError

from reaper.core.timeutil import parse_instant

ERRORS_SHOWN = 3  # a refusal names its first few problems


class BadEntry(ValueError):
    """A stored log entry that is not one: not a JSON object, `logged_at` missing, a field of the wrong type."""


class LogEntry(BaseModel):
    """The fields the read side uses; `stored` holds the whole entry as it was written."""

    model_config = ConfigDict(frozen=True, strict=True, extra="allow")

    logged_at: str  # stamped by ActionLog.record (iso, UTC)
    event_id: str | None = None  # the sweep's or event's id, stamped with logged_at
    type: str | None = None  # None or "verdict": a resource's decision; "notice", "coverage", ...
    kind: str | None = None
    id: str | None = None
    arn: str | None = None
    region: str | None = None
    account: str | None = None  # the sender's account: the central log, and a verdict's resource
    owner: str | None = None
    project: str | None = None
    stage: str | None = None  # the resource's ml:stage tag (reaper.report.reconcile.to_tag)
    verdict: str | None = None
    action: str | None = None
    mode: str | None = None
    executed: bool | None = None
    unconfirmed: bool | None = None  # a change recorded ahead of the call, never settled
    reason: str | None = None
    error: str | None = None
    title: str | None = None  # a notice's
    text: str | None = None
    function: str | None = None  # the member function that logged it (forwarded records)
    message_claim: str | None = None  # the key of the message this entry was told in
    instance_type: str | None = None
    instance_count: int | None = None
    hourly_usd: float | None = None
    price_source: str | None = None  # where hourly_usd comes from (docs/prices.md); None before prices said
    price_as_of: str | None = None
    evidence: JsonValue = None  # a kind's own facts: free-form JSON

    _stored: dict[str, JsonValue] = PrivateAttr(default_factory=dict)

    @property
    def stored(self) -> dict[str, JsonValue]:
        """The entry as it was read: every key, every value, as stored."""
        return dict(self._stored)

    def value(self, key: str) -> JsonValue:
        """A stored key by name (a report's `--by`, a coverage count): None when absent."""
        return self._stored.get(key)

    def has(self, key: str) -> bool:
        return key in self._stored

    @property
    def at(self) -> datetime | None:
        """When it was logged, or None when `logged_at` is not a time."""
        try:
            return parse_instant(self.logged_at)
        except (TypeError, ValueError):
            return None

    @property
    def facts(self) -> dict[str, JsonValue]:
        """The evidence when it is an object, else empty."""
        return self.evidence if isinstance(self.evidence, dict) else {}

    @property
    def is_verdict(self) -> bool:
        return self.type in (None, "verdict")

    @property
    def done(self) -> bool:
        """An executed action. A change recorded ahead of the call and never confirmed (the sweep died
        before it could record how it ended: `unconfirmed`) may not have been made: never counted."""
        return self.verdict == "act" and bool(self.executed) and not self.unconfirmed


def from_mapping(data: Mapping[str, JsonValue]) -> LogEntry:
    """A LogEntry from an entry's JSON object; BadEntry with its problems when it is not one."""
    try:
        entry = LogEntry.model_validate(dict(data))
    except ValidationError as exc:
        raise BadEntry(_problems(exc)) from None
    entry._stored = dict(data)
    return entry


def parse_entry(text: str | bytes) -> LogEntry:
    """A stored entry's JSON text as a LogEntry; BadEntry when it is not JSON, not an object, or not an entry."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise BadEntry(f"not JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise BadEntry(f"not a JSON object (a {type(data).__name__})")
    return from_mapping(data)


def _problems(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    said = [f"{'.'.join(str(p) for p in e['loc']) or '(entry)'}: {e['msg']}" for e in errors[:ERRORS_SHOWN]]
    more = len(errors) - ERRORS_SHOWN
    return "; ".join(said) + (f"; and {more} more" if more > 0 else "")
