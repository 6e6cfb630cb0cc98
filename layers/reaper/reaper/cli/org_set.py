"""`reaper org set`: the central account sets (or clears) an account's or an OU's modes
(docs/deploy-organisation.md, "Per-account settings"; docs/cli.md).

It writes one SET item in the central settings table, as the next version, with who, when and why.
The central settings function (org/central.yaml) takes the change from the table's stream: it posts
it, records it in the organisation's log and writes every reached account's effective item, which the
members read at the start of their next invocation.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict, final

from reaper.cli.formats import to_json_lines
from reaper.core.errors import ConfigError, UsageError
from reaper.core.model import Mode

if TYPE_CHECKING:  # imported when the command runs: `reaper --help` loads no pydantic or botocore
    from reaper.org.settings import SettingRecord
    from reaper.record.runtime import Runtime


def add_parser(sub: Any, command: Callable[[Any, str, str], argparse.ArgumentParser]) -> None:
    """`reaper org` and its verb `set`, each made by the CLI's `command` (its description, examples and
    global options after it)."""
    org = command(sub, "org", "the organisation's central account: per-account and per-OU settings")
    verbs = org.add_subparsers(dest="org_command", required=True)
    st = command(verbs, "org set", "set (or --clear) an account's or an OU's mode and kind modes, without a redeploy")
    target = st.add_mutually_exclusive_group(required=True)
    target.add_argument("--account", help="a member account id (12 digits); beats any OU setting")
    target.add_argument("--ou", help="an OU id (ou-xxxx-xxxxxxxx) or the root id (r-xxxx): every account below it")
    st.add_argument("--mode", choices=[m.value for m in Mode], help="the mode for every kind (replaces the modes below it)")
    st.add_argument("--kind-mode", action="append", default=[], metavar="KIND=MODE", help="one kind's mode (repeatable)")
    st.add_argument("--clear", action="store_true", help="delete this account's or OU's setting (its accounts go back to the layer below)")
    st.add_argument("--reason", required=True, help="why: kept with the setting, posted and logged")
    st.add_argument("--settings-table", help="the central settings table (default: REAPER_ORG_SETTINGS_TABLE)")
    st.add_argument("--json", action="store_true", help="same as --output json")


@final
class Cleared(TypedDict):
    target: str
    id: str
    cleared: bool  # False: there was no setting to clear
    reason: str


def run(args: argparse.Namespace, rt: Runtime, now: datetime, output: str) -> SettingRecord | Cleared:
    from reaper.core.org_settings import CentralModes, parse_kind_modes
    from reaper.core.settings import table_name_problem
    from reaper.org import settings

    table = args.settings_table or rt.settings.org_settings_table
    if not table:
        raise ConfigError("no central settings table: set REAPER_ORG_SETTINGS_TABLE or pass --settings-table (org/central.yaml output)")
    problem = table_name_problem(table)
    if problem:
        raise UsageError(f"--settings-table {table!r}: {problem}")
    target = settings.target_of(args.account, args.ou)
    why = " ".join(str(args.reason).split())
    if not why:
        raise UsageError("--reason: say why (it is posted and kept with the setting)")
    dynamodb = rt.clients()("dynamodb")
    if args.clear:
        if args.mode or args.kind_mode:
            raise UsageError("--clear takes no --mode or --kind-mode")
        found = settings.clear_setting(dynamodb, table, target)
        result: SettingRecord | Cleared = {"target": target[0], "id": target[1], "cleared": found, "reason": why}
    else:
        try:
            modes = CentralModes(Mode(args.mode) if args.mode else None, parse_kind_modes(args.kind_mode))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if modes.empty():
            raise UsageError("give --mode and/or --kind-mode KIND=MODE (or --clear)")
        who = str(rt.clients()("sts").get_caller_identity().get("Arn") or "?")
        result = settings.put_setting(dynamodb, table, target, modes, who, why, now)
    for line in to_json_lines([result]) if output == "json" else [_line(result)]:
        print(line)
    return result


def _line(r: SettingRecord | Cleared) -> str:
    if "cleared" in r:
        state = "cleared" if r["cleared"] else "had no setting; nothing cleared"
        return f"{r['target']} {r['id']}: {state}. The central settings function posts it and updates its accounts."
    kinds = ", ".join(f"{k} {m}" for k, m in r["kind_modes"].items())
    parts = [f"mode {r['mode']}" if r.get("mode") else "", kinds]
    return (
        f"{r['target']} {r['id']}: {'; '.join(p for p in parts if p)} (v{r['version']}). "
        "The central settings function posts it and updates its accounts; members follow from their next run."
    )
