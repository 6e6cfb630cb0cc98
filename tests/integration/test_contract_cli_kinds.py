"""The command line's contract for every kind, in-process under moto: `sweep --json` prints one object per
resource with the contract's fields and types; a dry-run sweep and `plan` change nothing; `plan` is a
table naming every resource; an enforce sweep exits 0 when nothing failed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from reaper.cli.main import main
from tests.helpers.contract_kits import KITS, NAMES, tags_of

TYPES: dict[str, Any] = {
    "kind": str,
    "id": str,
    "arn": str,
    "region": str,
    "verdict": str,
    "action": (str, type(None)),
    "reason": str,
    "executed": bool,
    "hourly_usd": (int, float, type(None)),
    "owner": (str, type(None)),
}
VERDICTS = {"act", "warn", "keep", "exempt", "error"}


def rows(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("kind", sorted(KITS))
def test_sweep_json_has_the_contract_fields_for_every_kind_and_dry_run_changes_nothing(aws, capsys, kind):
    # Given two reapable resources of the kind
    kit = KITS[kind]
    arns = kit.seed(aws, datetime.now(UTC))
    tags_before = {n: tags_of(aws, a) for n, a in arns.items()}
    # When the command line sweeps the kind in dry-run
    code = main(["sweep", "--kind", kind, "--mode", "dry-run", "--json"])
    out = rows(capsys.readouterr().out)
    # Then it exits 0 and prints one object per resource with every contract field, of the contract's type
    assert code == 0
    mine = {r["id"]: r for r in out if r["kind"] == kind and r["id"] in {kit.id_of(a) for a in arns.values()}}
    assert set(mine) == {kit.id_of(a) for a in arns.values()}, out
    for r in out:
        wrong = {k: r.get(k) for k, t in TYPES.items() if k not in r or not isinstance(r[k], t)}
        assert wrong == {} and r["verdict"] in VERDICTS and r["region"] == "us-east-1", r
    for arn in arns.values():
        r = mine[kit.id_of(arn)]
        assert r["arn"] == arn and r["verdict"] == "act" and r["executed"] is False and r["action"], r
    # and nothing in AWS changed, not even a tag
    assert not any(kit.changed(aws, arns, n) for n in NAMES)
    assert {n: tags_of(aws, a) for n, a in arns.items()} == tags_before


@pytest.mark.parametrize("kind", sorted(KITS))
def test_plan_is_a_table_naming_every_resource_and_changes_nothing(aws, capsys, kind, monkeypatch):
    # Given two reapable resources, and a stack configured to enforce with no grace
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    kit = KITS[kind]
    arns = kit.seed(aws, datetime.now(UTC))
    # When `plan` runs
    code = main(["plan", "--kind", kind])
    out = capsys.readouterr().out
    # Then it is a table (not JSON) that names each resource, and it is still a dry run
    assert code == 0 and not out.lstrip().startswith("{")
    for arn in arns.values():
        assert kit.id_of(arn)[:20] in out, out
    assert not any(kit.changed(aws, arns, n) for n in NAMES)
