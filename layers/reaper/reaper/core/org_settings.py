"""Modes the organisation's central account sets for an account or an OU, and how they lay over a
stack's own (docs/deploy-organisation.md, "Per-account settings").

Pure: reading a stored setting, layering the settings that reach an account, applying the result to
a stack's Settings. Precedence, least specific first: the stack's own parameters, then each OU
above the account (farthest first), then the account's own central setting. A layer that sets a
mode replaces every mode below it (the mode and the kind modes); its kind modes then replace that
kind's mode. A stack can take central settings (`follow`), take only what lowers a kind to dry-run
(`dry-run-only`), or refuse them (`ignore`).

Nothing unreadable is half-applied: a setting with one bad value is refused whole, and the member
keeps its own settings (reaper.record.org_settings_reader says so).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from reaper.core.model import Mode
from reaper.core.settings import KINDS, Settings

POLICIES = ("follow", "dry-run-only", "ignore")  # the member stack's CentralSettings parameter
ACCOUNT_ID = re.compile(r"^\d{12}$")
# Organizations' id patterns (https://docs.aws.amazon.com/organizations/latest/APIReference/API_ListAccountsForParent.html)
OU_ID = re.compile(r"^(ou-[0-9a-z]{4,32}-[a-z0-9]{8,32}|r-[0-9a-z]{4,32})$")
EFFECTIVE = "effective"  # the sort key of an account's effective item (its partition key is the account id)
MAX_REASON = 500


class ModesJson(TypedDict):
    mode: str | None  # None: the setting says nothing of the stack-wide mode
    kind_modes: dict[str, str]


@dataclass(frozen=True)
class CentralModes:
    """What central settings say about modes: None / absent = they say nothing (the layer below holds)."""

    mode: Mode | None = None
    kind_modes: Mapping[str, Mode] = field(default_factory=dict)

    def empty(self) -> bool:
        return self.mode is None and not self.kind_modes

    def to_json(self) -> ModesJson:
        return {"mode": self.mode.value if self.mode else None, "kind_modes": {k: v.value for k, v in sorted(self.kind_modes.items())}}


def parse_mode(value: Any) -> Mode:
    """Exactly `dry-run` or `enforce`: nothing else is read as a mode (never a guess towards enforce)."""
    if isinstance(value, str) and value in (m.value for m in Mode):
        return Mode(value)
    raise ValueError(f"mode {value!r} is neither dry-run nor enforce")


def parse_modes(mode: Any, kind_modes: Any) -> CentralModes:
    """A stored setting's modes; ValueError (one readable line) for anything but a mode and known kinds."""
    parsed = parse_mode(mode) if mode is not None else None
    if kind_modes is None:
        kind_modes = {}
    if not isinstance(kind_modes, dict):
        raise ValueError(f"kind modes {kind_modes!r} are not a kind -> mode map")
    kinds: dict[str, Mode] = {}
    for kind, value in kind_modes.items():
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r} (kinds: {', '.join(KINDS)})")
        kinds[kind] = parse_mode(value)
    return CentralModes(parsed, kinds)


def parse_kind_modes(pairs: Iterable[str]) -> dict[str, Mode]:
    """`kind=mode` pairs (the CLI's --kind-mode)."""
    out: dict[str, Mode] = {}
    for pair in pairs:
        kind, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--kind-mode {pair!r}: expected kind=mode")
        out.update(parse_modes(None, {kind.strip().lower(): value.strip().lower()}).kind_modes)
    return out


def layered(layers: Iterable[CentralModes]) -> CentralModes:
    """Least specific first: a layer's mode replaces everything below it; its kind modes replace that kind."""
    mode: Mode | None = None
    kinds: dict[str, Mode] = {}
    for layer in layers:
        if layer.mode is not None:
            mode, kinds = layer.mode, {}
        kinds.update(layer.kind_modes)
    return CentralModes(mode, kinds)


def only_dry_run(central: CentralModes) -> CentralModes:
    """What a `dry-run-only` stack takes: the parts that set dry-run, never one that sets enforce."""
    return CentralModes(
        central.mode if central.mode is Mode.DRY_RUN else None,
        {k: m for k, m in central.kind_modes.items() if m is Mode.DRY_RUN},
    )


def apply(own: Settings, central: CentralModes, policy: str) -> Settings:
    """The stack's settings with central modes laid over them, as `policy` allows."""
    if policy == "ignore" or central.empty():
        return own
    taken = only_dry_run(central) if policy == "dry-run-only" else central
    merged = layered([CentralModes(own.mode, dict(own.kind_modes)), taken])
    return own.replace(mode=merged.mode or own.mode, kind_modes=dict(merged.kind_modes))


def describe(settings: Settings) -> str:
    """`enforce; notebook dry-run`: the mode and the kinds that differ from it."""
    others = [f"{k} {m.value}" for k, m in sorted(settings.kind_modes.items()) if m is not settings.mode]
    return "; ".join([f"mode {settings.mode.value}", *others])


def version_of(body: Mapping[str, Any]) -> str:
    """A short digest of what an effective item says (its modes, sources and problems), to tell changes apart."""
    text = json.dumps({k: body.get(k) for k in ("mode", "kind_modes", "sources", "problems")}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Reading:
    """What a member found for its account: `none` (no central setting), `follows` (valid), `invalid`
    (present but not readable as settings), or `unreadable` (the table could not be read)."""

    status: str
    modes: CentralModes = field(default_factory=CentralModes)
    version: str = ""
    detail: str = ""  # what was wrong, or who set it and why


def parse_effective(item: Mapping[str, Any] | None, account: str) -> Reading:
    """An effective item as DynamoDB returned it (GetItem's Item), for `account`."""
    if not item:
        return Reading("none")
    try:
        body = json.loads(str((item.get("body") or {}).get("S")))
        if not isinstance(body, dict):
            raise ValueError("not a JSON object")
    except (ValueError, TypeError) as exc:
        return Reading("invalid", detail=f"the item is not readable JSON ({exc})")
    version = str(body.get("version") or "")
    if body.get("account") != account:
        return Reading("invalid", version=version, detail=f"the item names account {body.get('account')!r}, not this one ({account})")
    if version != version_of(body):
        return Reading("invalid", version=version, detail="the item's version does not match its content")
    if body.get("problems"):
        return Reading("invalid", version=version, detail="; ".join(str(p) for p in body["problems"])[:MAX_REASON])
    try:
        modes = parse_modes(body.get("mode"), body.get("kind_modes"))
    except ValueError as exc:
        return Reading("invalid", version=version, detail=str(exc))
    return Reading("follows", modes, version, sources_line(body.get("sources")))


def sources_line(sources: Any) -> str:
    """`OU ou-ab12-cdef3456 v2 by arn... (why)`, one per source, most specific last."""
    out = []
    for s in sources if isinstance(sources, list) else []:
        if isinstance(s, dict):
            why = f" ({str(s.get('reason'))[:MAX_REASON]})" if s.get("reason") else ""
            out.append(f"{s.get('target')} {s.get('id')} v{s.get('version')} set by {s.get('set_by')} at {s.get('set_at')}{why}")
    return "; ".join(out)


def told_state(reading: Reading, policy: str) -> str:
    """What a member last told about its central settings (kept in its log: one notice per change)."""
    if reading.status == "follows":
        return f"{'refused' if policy == 'ignore' else policy}:{reading.version}"
    if reading.status == "invalid":
        return f"invalid:{reading.version}:{hashlib.sha256(reading.detail.encode()).hexdigest()[:12]}"
    return reading.status  # none, unreadable


def notice_words(reading: Reading, policy: str, own: Settings, now_following: Settings) -> tuple[str, str]:
    """The title and text of the notice a member posts when what it follows changed."""
    kept = f"Kept this stack's own modes: {describe(own)}; nothing was escalated."
    if reading.status == "unreadable":
        return "Central settings could not be read", f"The central settings table could not be read: {reading.detail}. {kept}"
    if reading.status == "invalid":
        return "Central settings refused as invalid", f"The central settings for this account cannot be used: {reading.detail}. {kept}"
    if reading.status == "none":
        return (
            "Central settings removed",
            f"No central setting applies to this account any more. Back to this stack's own modes: {describe(own)}.",
        )
    asked = apply(own, reading.modes, "follow")
    if policy == "ignore":
        return "Central settings refused by this stack", (
            f"Central settings v{reading.version} ask for {describe(asked)} ({reading.detail}). "
            f"This stack refuses central settings (CentralSettings=ignore) and keeps its own: {describe(own)}."
        )
    partial = ""
    if policy == "dry-run-only" and asked != now_following:
        partial = f" This stack takes only dry-run from central settings (CentralSettings=dry-run-only); they asked for {describe(asked)}."
    return (
        "Central settings apply",
        f"Modes now: {describe(now_following)} (this stack's own: {describe(own)}). From: {reading.detail}.{partial}",
    )
