"""`reaper sweep --kind ec2` on a seeded account: the issue's done-when, through the real CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from reaper.cli.main import main
from reaper_devkit import seed_ec2
from tests.helpers.ec2_fleet import build

pytestmark = pytest.mark.usefixtures("fresh_ec2_catalog")

REQUIRED = {"kind", "id", "arn", "region", "verdict", "action", "reason", "executed", "hourly_usd", "owner"}


def rows(out: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in (json.loads(line) for line in out.splitlines() if line.strip())}


def test_enforce_without_grace_stops_exactly_the_idle_unmanaged_ebs_backed_gpu_instances(aws, cw, capsys):
    ec2 = aws.client("ec2")
    fleet = build(ec2, cw, datetime.now(UTC))
    assert main(["sweep", "--kind", "ec2", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
    out = rows(capsys.readouterr().out)
    assert set(out) == set(fleet.ids.values())  # every GPU instance, no CPU decoy
    for name, iid in fleet.ids.items():
        verdict, words = fleet.expected[name]
        row = out[iid]
        assert set(row) >= REQUIRED and row["kind"] == "ec2" and row["arn"].endswith(f":instance/{iid}")
        assert row["verdict"] == verdict and words in row["reason"], (name, row["reason"])
        assert row["executed"] is (verdict == "act"), name
        assert seed_ec2.state(ec2, iid) == ("stopped" if verdict == "act" else "running"), name
    assert seed_ec2.state(ec2, fleet.decoy) == "running"


def test_plan_prices_the_listed_types_and_changes_nothing(aws, cw, capsys):
    ec2 = aws.client("ec2")
    now = datetime.now(UTC)
    iid = seed_ec2.instance(ec2, "p4d.24xlarge", {"ml:owner": "ana@example.com", "reaper:disposable": "true"}, now=now)
    seed_ec2.metrics(cw, iid, now)
    assert main(["sweep", "--kind", "ec2", "--json"]) == 0
    row = rows(capsys.readouterr().out)[iid]
    assert row["verdict"] == "act" and row["executed"] is False and row["hourly_usd"] == pytest.approx(32.7726)
    assert seed_ec2.state(ec2, iid) == "running"
