"""The `reaper` command line on the storage kind, in-process under moto: `reaper plan --kind storage` says what
would be done to each finding with its monthly cost (or "unpriced"), a stopped GPU box's volumes are reported
and never changed, and `sweep --json` carries the contract's fields."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.cli.main import main
from reaper_devkit import seed_fsx, seed_storage
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import bedrock_imported
from reaper_devkit.template import function_actions

REQUIRED = {"kind", "id", "arn", "region", "verdict", "action", "reason", "executed", "hourly_usd", "owner"}


@pytest.fixture
def logged(table: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("REAPER_TABLE", table)
    return table


@pytest.fixture
def seeded(aws: Any) -> dict[str, str]:
    ec2, fsx, now = aws.client("ec2"), aws.client("fsx"), datetime.now(UTC)
    subnet, group = seed_fsx.network(ec2)
    box = seed_storage.stopped_gpu_box(ec2, now - timedelta(weeks=5), now=now)
    recent_box = seed_storage.stopped_gpu_box(ec2, now - timedelta(days=3), now=now)
    return {
        "volume": seed_storage.volume(ec2, now - timedelta(weeks=6), tags=seed_storage.ML),
        "backup": seed_storage.reaper_backup(fsx, subnet, group, now - timedelta(days=40))[0],
        "box": box,
        "recent-box": recent_box,
    }


def rows(out: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in (json.loads(line) for line in out.splitlines() if line.strip())}


def test_plan_says_what_would_be_done_with_the_monthly_cost_or_unpriced(aws, seeded, logged, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_STORAGE_BACKUP_RETENTION_DAYS", "30")
    assert main(["plan", "--kind", "storage"]) == 0
    out = capsys.readouterr().out
    assert seeded["volume"] in out and "would snapshot" in out
    assert seeded["backup"] in out and "would delete-backup" in out
    # no storage price in the shipped copy: each row's $/h is "?" and the totals leave them out, saying so (never $0 for them)
    lines = {i: next(line for line in out.splitlines() if i in line) for i in (seeded["volume"], seeded["backup"])}
    assert all(line.rstrip().endswith("?") for line in lines.values()), lines
    assert "unpriced (?): no list price for them (never $0), left out of every total" in out


def test_a_stopped_gpu_boxs_volumes_are_reported_with_their_cost_and_never_changed(aws, seeded, logged, capsys):
    ec2 = aws.client("ec2")
    [root] = [m["Ebs"]["VolumeId"] for r in ec2.describe_instances(InstanceIds=[seeded["box"]])["Reservations"] for i in r["Instances"]
              for m in i["BlockDeviceMappings"]]  # fmt: skip
    with recording() as calls:
        assert main(["sweep", "--kind", "storage", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
    got = rows(capsys.readouterr().out)
    row = got[root]
    assert set(row) >= REQUIRED and row["verdict"] == "keep" and row["executed"] is False
    assert seeded["box"] in row["reason"] and "stopped since" in row["reason"] and "unpriced" in row["reason"]
    # the box stopped three days ago is not reported; nothing on either box was changed
    recent = [m["Ebs"]["VolumeId"] for r in ec2.describe_instances(InstanceIds=[seeded["recent-box"]])["Reservations"]
              for i in r["Instances"] for m in i["BlockDeviceMappings"]]  # fmt: skip
    assert not set(recent) & set(got)
    assert seed_storage.volume_state(ec2, root) == "in-use"
    changed = [p for op, p in calls.made if op in ("CreateSnapshot", "DeleteVolume") and p.get("VolumeId") in {root, *recent}]
    assert changed == []


def test_a_stopped_box_that_does_not_say_since_when_is_counted_by_reaper_coverage(aws, logged, capsys):
    # Given a GPU box stopped with an empty StateTransitionReason (EC2 allows it)
    ec2, now = aws.client("ec2"), datetime.now(UTC)
    seed_storage.stopped_gpu_box(ec2, None, now=now)
    # When `reaper coverage --kind storage` runs
    assert main(["coverage", "--kind", "storage", "--json"]) == 0
    # Then its volume is counted as unknown under stop-time-unknown, not judged and not dropped
    [line] = [r for r in (json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()) if r["type"] == "coverage"]
    assert (line["kind"], line["resources"], line["unknown"]) == ("storage", 1, 1)
    assert [r["code"] for r in line["reasons"]] == ["stop-time-unknown"]


def test_imported_bedrock_models_are_reported_with_their_cost_and_never_changed(aws, logged, capsys):
    # Given an imported model made 90 days ago and one made 3 days ago
    now = datetime.now(UTC)
    old = bedrock_imported.imported_model("llama-ft-old", now - timedelta(days=90), {"ml:owner": "ana@example.com"})
    bedrock_imported.imported_model("llama-ft-new", now - timedelta(days=3))
    # When an enforcing sweep runs through the CLI
    with recording() as calls:
        assert main(["sweep", "--kind", "storage", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
    got = rows(capsys.readouterr().out)
    # Then the old one is reported, kept, unpriced (never $0), with its owner; the new one is not listed
    row = got["llama-ft-old"]
    assert row["arn"] == old and row["verdict"] == "keep" and row["executed"] is False and row["owner"] == "ana@example.com"
    assert "Bedrock imported model" in row["reason"] and "unpriced" in row["reason"] and row["hourly_usd"] is None
    assert "llama-ft-new" not in got
    # and nothing in Bedrock was changed; every call is one the function's role grants
    assert not {a for a in calls.actions if a.startswith("bedrock:") and not a.startswith("bedrock:List")}
    assert calls.actions <= function_actions("StorageFunction")
