"""The `reaper` command for endpoints: a real process against a seeded moto server, and in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from reaper.cli.main import main
from reaper_devkit import seed_endpoint as se
from reaper_devkit.local_aws import local_account, session

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
TABLE = "mlreaper-cli-log"


def rows(out: str) -> dict[str, dict]:
    return {r["id"]: r for r in (json.loads(line) for line in out.splitlines() if line.strip())}


@pytest.mark.slow
def test_enforce_sweep_then_restore_against_a_moto_server():
    # Given a seeded local moto server and the installed command
    with local_account():
        s = session()
        sm, cw = s.client("sagemaker"), s.client("cloudwatch")
        now = datetime.now(UTC)
        se.classic(sm, "llm-dev", {**DEV, "ml:project": "chat"}, instance_type="ml.g4dn.xlarge")
        se.age("llm-dev", now, 200)
        se.classic(sm, "busy", DEV)
        se.age("busy", now, 200)
        se.invocations(cw, "busy", now, [0, 12])
        se.classic(sm, "young", DEV)
        se.age("young", now, 20)
        se.components(sm, "ic-dev", {"ic-a": 2}, DEV)
        se.age("ic-dev", now, 200)
        se.classic(sm, "prod", {"ml:stage": "prod"})
        se.age("prod", now, 200)
        se.classic(sm, "exempt", {**DEV, "reaper:exempt": "true"})
        se.age("exempt", now, 200)
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("REAPER_")}, "REAPER_TABLE": TABLE}
        reaper = [sys.executable, "-m", "reaper"]

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*reaper, *args], env=env, capture_output=True, text=True, timeout=180)

        assert run("init", "--table", TABLE).returncode == 0
        # When the enforce sweep runs with no grace
        swept = run("sweep", "--kind", "endpoint", "--mode", "enforce", "--grace-minutes", "0", "--json")
        left = {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]}
        # And then `reaper restore llm-dev`
        restored = run("restore", "llm-dev")
        back = sm.describe_endpoint(EndpointName="llm-dev")
        back_tags = {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=back["EndpointArn"])["Tags"]}
        copies = sm.describe_inference_component(InferenceComponentName="ic-a")["RuntimeConfig"]["DesiredCopyCount"]
    # Then exactly the idle dev endpoints went to zero, the rest are kept with their reasons
    assert swept.returncode == 0, swept.stderr
    out = rows(swept.stdout)
    assert {k: (v["verdict"], v["executed"]) for k, v in out.items()} == {
        "llm-dev": ("act", True),
        "ic-dev": ("act", True),
        "busy": ("keep", False),
        "young": ("keep", False),
        "prod": ("exempt", False),
        "exempt": ("exempt", False),
    }
    assert "12 invocations" in out["busy"]["reason"] and "no data is not yet evidence" in out["young"]["reason"]
    assert out["llm-dev"]["hourly_usd"] == 0.7364 and out["llm-dev"]["instance_type"] == "ml.g4dn.xlarge"
    assert left == {"busy", "young", "ic-dev", "prod", "exempt"} and copies == 0
    # And the restore brought the deleted endpoint back with the same config and tags
    assert restored.returncode == 0, restored.stderr
    assert "restored endpoint llm-dev" in restored.stdout
    assert back["EndpointConfigName"] == "llm-dev-config" and back_tags == {**DEV, "ml:project": "chat"}


def test_plan_shows_what_would_happen_to_endpoints(aws, sm, capsys):
    now = datetime.now(UTC)
    se.classic(sm, "llm-dev", DEV)
    se.age("llm-dev", now, 200)
    se.asynchronous(sm, "batch-dev", DEV)
    se.age("batch-dev", now, 200)
    assert main(["plan", "--kind", "endpoint"]) == 0
    out = capsys.readouterr().out
    assert "would delete" in out and "would scale-to-zero" in out and "0 invocations in" in out and "0 requests processed" in out


def test_a_refused_delete_exits_1_and_prints_every_endpoint(aws, sm, table, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", table)
    now = datetime.now(UTC)
    se.classic(sm, "orphan", DEV)
    se.age("orphan", now, 200)
    sm.delete_model(ModelName="orphan-model-alltraffic")
    se.classic(sm, "fine", DEV)
    se.age("fine", now, 20)
    assert main(["sweep", "--kind", "endpoint", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 1
    out = rows(capsys.readouterr().out)
    assert out["orphan"]["verdict"] == "error" and "could not be brought back" in out["orphan"]["reason"]
    assert out["fine"]["verdict"] == "keep"
    assert {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]} == {"orphan", "fine"}
