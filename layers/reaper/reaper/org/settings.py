"""The central account's per-account settings (docs/deploy-organisation.md, "Per-account settings").

The settings table (org/central.yaml `OrgSettingsTable`) holds two kinds of item:
- what the admin set: pk `SET`, sk `account#<id>` or `ou#<ou or root id>`, with the modes, a version
  (1, 2, ... per target, written conditionally so two admins cannot overwrite each other unseen),
  who set it, when and why. `reaper org set` writes them; `--clear` deletes one.
- what each account follows: pk `<account id>`, sk `effective`, one JSON body with the layered modes,
  their sources and any problem, written by `reconcile` (the central settings function, on every
  change and hourly, so an account moved into an OU gets its settings within the hour).
A member reads only its own effective item (the table's resource policy, reaper.record.org_settings_reader).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict, final

from botocore.exceptions import ClientError

from reaper.core.errors import UsageError
from reaper.core.org_settings import ACCOUNT_ID, EFFECTIVE, MAX_REASON, OU_ID, CentralModes, layered, parse_modes, version_of
from reaper.core.timeutil import iso
from reaper.record.message import NoticeMessage

SET = "SET"
WRITE_PERMISSIONS = ("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem")  # `reaper org set`
RECONCILE_PERMISSIONS = (
    "dynamodb:Scan",
    "dynamodb:PutItem",
    "dynamodb:DeleteItem",
    "organizations:ListAccountsForParent",
    "organizations:ListOrganizationalUnitsForParent",
)

# (OU or root id) -> [(account id, how many levels below it)]
AccountsUnder = Callable[[str], list[tuple[str, int]]]


@dataclass(frozen=True)
class Setting:
    """One SET item as stored; `modes` is None and `problem` says why when it cannot be read."""

    target: str  # account | ou
    id: str
    version: int
    set_by: str
    set_at: str
    reason: str
    modes: CentralModes | None
    problem: str | None = None

    def source(self) -> SettingSource:
        return {
            "target": self.target,
            "id": self.id,
            "version": self.version,
            "set_by": self.set_by,
            "set_at": self.set_at,
            "reason": self.reason,
        }


class SettingSource(TypedDict):
    """Which setting an effective item layers (an account's or an OU's), its version, who set it, when and why."""

    target: str  # account | ou
    id: str
    version: int
    set_by: str
    set_at: str
    reason: str


@final
class SettingRecord(TypedDict):
    """What `reaper org set` wrote: the setting's source and its modes."""

    target: str
    id: str
    version: int
    mode: str | None
    kind_modes: dict[str, str]
    set_by: str
    set_at: str
    reason: str


class EffectiveBody(TypedDict, total=False):
    """An account's effective item's body (docs/deploy-organisation.md): its layered modes, their sources, any
    problem, and `version` (a digest of the rest, added last: reaper.core.org_settings.version_of)."""

    account: str
    mode: str | None
    kind_modes: dict[str, str]
    sources: list[SettingSource]
    problems: list[str]
    version: str


class Reconciled(TypedDict):
    written: list[str]  # accounts whose effective item changed
    removed: list[str]  # accounts no setting reaches any more
    problems: list[str]


def target_of(account: str | None, ou: str | None) -> tuple[str, str]:
    if bool(account) == bool(ou):
        raise UsageError("give one of --account ID or --ou OU-ID")
    if account:
        if not ACCOUNT_ID.match(account):
            raise UsageError(f"--account {account!r}: a 12-digit account id expected")
        return "account", account
    assert ou is not None
    if not OU_ID.match(ou):
        raise UsageError(f"--ou {ou!r}: an OU id (ou-xxxx-xxxxxxxx) or the root id (r-xxxx) expected")
    return "ou", ou


def read_setting(item: Mapping[str, Any]) -> Setting:
    """A SET item as DynamoDB returned it; a value that does not parse makes the whole setting unusable."""

    def s(name: str) -> str:
        return str((item.get(name) or {}).get("S") or "")

    target, _, ident = s("sk").partition("#")
    try:
        version = int(str((item.get("version") or {}).get("N") or "0"))
    except ValueError:
        version = 0
    base = {
        "target": target,
        "id": ident,
        "version": version,
        "set_by": s("set_by"),
        "set_at": s("set_at"),
        "reason": s("reason")[:MAX_REASON],
    }
    try:
        if target not in ("account", "ou") or not (ACCOUNT_ID if target == "account" else OU_ID).match(ident):
            raise ValueError(f"{s('sk')!r} names no account or OU")
        mode = (item.get("mode") or {}).get("S")
        kinds = json.loads(s("kind_modes") or "{}")
        modes = parse_modes(mode, kinds)
        if modes.empty():
            raise ValueError("it sets no mode and no kind mode")
    except ValueError as exc:
        return Setting(**base, modes=None, problem=str(exc))  # type: ignore[arg-type]
    return Setting(**base, modes=modes)  # type: ignore[arg-type]


def put_setting(
    dynamodb: Any, table: str, target: tuple[str, str], modes: CentralModes, who: str, why: str, now: datetime
) -> SettingRecord:
    """Write (or replace) a target's setting as the next version; refused if another admin wrote it meanwhile."""
    key = {"pk": {"S": SET}, "sk": {"S": f"{target[0]}#{target[1]}"}}
    old = dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
    version = int(old["version"]["N"]) + 1 if old else 1
    item = {
        **key,
        "version": {"N": str(version)},
        "set_by": {"S": who},
        "set_at": {"S": iso(now)},
        "reason": {"S": why[:MAX_REASON]},
        "kind_modes": {"S": json.dumps({k: m.value for k, m in sorted(modes.kind_modes.items())})},
    }
    if modes.mode is not None:
        item["mode"] = {"S": modes.mode.value}
    condition = {"ConditionExpression": "version = :old", "ExpressionAttributeValues": {":old": old["version"]}} if old else {}
    try:
        dynamodb.put_item(TableName=table, Item=item, **(condition or {"ConditionExpression": "attribute_not_exists(pk)"}))
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
            raise UsageError(f"{target[0]} {target[1]}: changed by someone else just now; run the command again") from None
        raise
    return {"target": target[0], "id": target[1], "version": version, **modes.to_json(), "set_by": who, "set_at": iso(now), "reason": why}


def clear_setting(dynamodb: Any, table: str, target: tuple[str, str]) -> bool:
    """Delete a target's setting; False when there was none."""
    key = {"pk": {"S": SET}, "sk": {"S": f"{target[0]}#{target[1]}"}}
    return bool(dynamodb.delete_item(TableName=table, Key=key, ReturnValues="ALL_OLD").get("Attributes"))


def organizations_accounts_under(organizations: Any) -> AccountsUnder:
    """Every active account below an OU or the root, at any depth, with its distance (1 = a direct child)."""

    def under(parent: str) -> list[tuple[str, int]]:
        found: list[tuple[str, int]] = []
        frontier = [(parent, 1)]
        while frontier:
            node, depth = frontier.pop()
            for page in organizations.get_paginator("list_accounts_for_parent").paginate(ParentId=node):
                found += [(a["Id"], depth) for a in page.get("Accounts", []) if a.get("Status", "ACTIVE") == "ACTIVE"]
            for page in organizations.get_paginator("list_organizational_units_for_parent").paginate(ParentId=node):
                frontier += [(ou["Id"], depth + 1) for ou in page.get("OrganizationalUnits", [])]
        return found

    return under


def effective_bodies(settings: Iterable[Setting], accounts_under: AccountsUnder) -> dict[str, EffectiveBody]:
    """{account: the body of its effective item}: the OU settings above it (farthest first), then its own."""
    reach: dict[str, list[tuple[int, Setting]]] = {}
    for s in settings:
        if s.target == "account":
            reach.setdefault(s.id, []).append((0, s))
        elif s.target == "ou":
            for account, depth in accounts_under(s.id):
                reach.setdefault(account, []).append((depth, s))
        # a SET item naming neither is reported by the change notice, and reaches nobody
    bodies: dict[str, EffectiveBody] = {}
    for account, found in reach.items():
        chain = [s for _, s in sorted(found, key=lambda ds: -ds[0])]  # farthest OU first, the account last
        problems = [f"{s.target} {s.id} v{s.version}: {s.problem}" for s in chain if s.modes is None]
        modes = layered(s.modes for s in chain if s.modes is not None) if not problems else CentralModes()
        said = modes.to_json()
        sources = [s.source() for s in chain]
        body: EffectiveBody = {
            "account": account,
            "mode": said["mode"],
            "kind_modes": said["kind_modes"],
            "sources": sources,
            "problems": problems,
        }
        bodies[account] = {**body, "version": version_of(body)}
    return bodies


def reconcile(dynamodb: Any, table: str, accounts_under: AccountsUnder, now: datetime) -> Reconciled:
    """Bring every account's effective item in line with the SET items; returns what changed."""
    items = [i for page in dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True) for i in page.get("Items", [])]
    settings = [read_setting(i) for i in items if i["pk"]["S"] == SET]
    current = {i["pk"]["S"]: i for i in items if i["sk"]["S"] == EFFECTIVE}
    bodies = effective_bodies(settings, accounts_under)
    written, removed = [], []
    for account, body in sorted(bodies.items()):
        if (current.get(account) or {}).get("version", {}).get("S") == body["version"]:
            continue
        dynamodb.put_item(
            TableName=table,
            Item={
                "pk": {"S": account},
                "sk": {"S": EFFECTIVE},
                "body": {"S": json.dumps(body, sort_keys=True)},
                "version": {"S": body["version"]},
                "updated_at": {"S": iso(now)},
            },
        )
        written.append(account)
    for account in sorted(set(current) - set(bodies)):
        dynamodb.delete_item(TableName=table, Key={"pk": {"S": account}, "sk": {"S": EFFECTIVE}})
        removed.append(account)
    return {"written": written, "removed": removed, "problems": [f"{s.target} {s.id}: {s.problem}" for s in settings if s.problem]}


def change_notice(event_name: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, central_account: str) -> NoticeMessage:
    """The notice for one change of a SET item (a DynamoDB stream record's images), for the central
    admin channel (rendered like any notice: reaper.slack.message) and the organisation's log (`as_record()`)."""
    after = read_setting(new) if new else None
    before = read_setting(old) if old else None
    s = after or before
    assert s is not None
    what = f"{'OU' if s.target == 'ou' else 'account'} {s.id}"
    if after is None:
        title, text = f"Central settings cleared for {what}", f"was {_modes(before)}"
    elif after.problem:
        title = f"Central settings for {what} are INVALID and not applied"
        text = f"{after.problem}; the accounts it reaches keep their own modes (and say so)"
    else:
        title, text = f"Central settings for {what}: {_modes(after)}", f"was {_modes(before)}" if before else "new"
    who = after or before
    assert who is not None
    text += f" · v{who.version} by {who.set_by or '?'} at {who.set_at or '?'}" + (f" · why: {who.reason}" if who.reason else "")
    return NoticeMessage(
        kind="org-settings",
        id=f"{s.target} {s.id}",
        account=s.id if s.target == "account" else central_account,
        region="",
        owner=None,
        title=title,
        text=text,
        details={"change": event_name},
    )


def _modes(s: Setting | None) -> str:
    if s is None or s.modes is None:
        return "nothing" if s is None else f"invalid ({s.problem})"
    parts = [f"mode {s.modes.mode.value}"] if s.modes.mode else []
    parts += [f"{k} {m.value}" for k, m in sorted(s.modes.kind_modes.items())]
    return "; ".join(parts)
