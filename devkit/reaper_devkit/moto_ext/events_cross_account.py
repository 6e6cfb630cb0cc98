"""EventBridge PutEvents to an event bus in another account: moto 5.2.5 looks the bus up by name in
the caller's own account only ("Event bus central does not exist").

AWS: PutEventsRequestEntry.EventBusName is "The name or ARN of the event bus to receive the event.
Only the rules that are associated with this event bus are used to match the event."
https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEventsRequestEntry.html
and a bus's resource-based policy decides who may put events on it; "if all the accounts are members
of the same AWS organization, you can run PutPermission once specifying Principal as "*" and
specifying the AWS organization ID in Condition" (aws:PrincipalOrgID).
https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutPermission.html

Patched here: an entry whose EventBusName is the ARN of a bus in another account is delivered to
that bus's rules when its policy allows the caller (Principal "*" or the caller's account, with no
condition or an aws:PrincipalOrgID equal to the caller's organisation); else the call is refused
with AccessDeniedException (the form is this kit's assumption). The event's `account` is the
caller's: a PutEventsRequestEntry has no account field to set.

Also: a rule's target without an input transformer gets the event without its `account` in moto; AWS:
"The following fields appear in all events delivered to an event bus, and comprise the event's
metadata" (version, id, detail-type, source, account, time, region, resources, detail),
https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-events-structure.html; so the default
target input keeps `account`. Patched on the backend and parser classes, so it works in-process and
in server mode.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from moto.core.exceptions import JsonRESTError
from moto.core.utils import unix_time
from moto.events.models import EventsBackend, events_backends
from moto.events.utils import _BASE_EVENT_MESSAGE, EventTemplateParser
from moto.moto_api._internal import mock_random as random
from moto.organizations.models import organizations_backends

_original = EventsBackend.put_events


def _org_of(account: str) -> str | None:
    master = organizations_backends.master_accounts.get(account)
    if master is None:
        return None
    org = organizations_backends[master[0]][master[1]].org
    return org.id if org is not None else None


def _allows(policy: dict[str, Any] | None, caller: str) -> bool:
    for stmt in (policy or {}).get("Statement", []):
        actions = stmt.get("Action")
        if stmt.get("Effect") != "Allow" or "events:PutEvents" not in (actions if isinstance(actions, list) else [actions]):
            continue
        principal = stmt.get("Principal")
        aws = principal.get("AWS") if isinstance(principal, dict) else principal
        names = aws if isinstance(aws, list) else [aws]
        if not any(p in ("*", caller, f"arn:aws:iam::{caller}:root", "arn:aws:iam::*:root") for p in names):
            continue
        wanted = (stmt.get("Condition") or {}).get("StringEquals", {}).get("aws:PrincipalOrgID")
        if wanted is None or wanted == _org_of(caller):
            return True
    return False


def _deliver(self: EventsBackend, entry: dict[str, Any], arn: str) -> dict[str, Any]:
    region, owner, name = arn.split(":")[3], arn.split(":")[4], arn.split("/")[-1]
    target = events_backends[owner][region]
    bus = target.describe_event_bus(name)
    if not _allows(json.loads(bus.policy) if bus.policy else None, self.account_id):
        raise JsonRESTError("AccessDeniedException", f"{self.account_id} is not authorized to put events on {arn}")
    event_id = str(random.uuid4())
    for rule in bus.rules.values():
        msg = copy.deepcopy(_BASE_EVENT_MESSAGE)
        msg.update(
            {
                "id": event_id,
                "detail-type": entry["DetailType"],
                "source": entry["Source"],
                "account": self.account_id,  # the sender's: an entry cannot name another
                "time": entry.get("Time", unix_time()),
                "region": region,
                "resources": entry.get("Resources", []),
                "detail": json.loads(entry["Detail"]),
                "ingestion-time": unix_time(),
            }
        )
        rule.send_to_targets(msg)
    return {"EventId": event_id}


def put_events(self: EventsBackend, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def foreign(e: dict[str, Any]) -> bool:
        bus = str(e.get("EventBusName") or "")
        return bus.startswith("arn:") and bus.split(":")[4] != self.account_id

    if not any(foreign(e) for e in events):
        return _original(self, events)
    return [_deliver(self, e, str(e["EventBusName"])) if foreign(e) else _original(self, [e])[0] for e in events]


def apply() -> None:
    EventsBackend.put_events = put_events  # type: ignore[method-assign]
    template = EventTemplateParser.DEFAULT_EVENT_INPUT_TEMPLATE
    if '"account"' not in template:
        EventTemplateParser.DEFAULT_EVENT_INPUT_TEMPLATE = template.replace('"version": "0", ', '"version": "0", "account": "<account>", ')
