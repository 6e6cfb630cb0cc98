"""GpuSsmReads through the ec2 function against moto: one nvidia-smi sample for GPU boxes with no GPU metric,
sent only where an SSM Agent is online and never to exempt or production boxes, and no SSM call at all when off."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from reaper.kinds.ec2.ssm import COMMAND
from reaper_devkit import seed_ec2
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import ssm_commands
from reaper_devkit.template import function_actions
from tests.conftest import REGION, drain, event, load_function

pytestmark = pytest.mark.usefixtures("fresh_ec2_catalog")

OWNER = {"ml:owner": "ana@example.com"}
IDLE_SAMPLE = "0, 431\n0, 2\n"  # two GPUs at 0 %: a model loaded on the first, nothing running
BUSY_SAMPLE = "0, 431\n87, 20112\n"


@pytest.fixture
def ssm_on(deployed_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("REAPER_GPU_SSM_READS", "on")
    return deployed_env


def gpu_box(ec2: Any, cw: Any, ssm_backend: Any, *, sample: str | None, tags: dict[str, str] | None = None, **metrics: Any) -> str:
    """A GPU box (EBS only, no instance store) that publishes CPU and network but no GPU series; `sample` is what nvidia-smi prints
    on it (None: no SSM Agent)."""
    now = datetime.now(UTC)
    iid = seed_ec2.instance(ec2, "g5g.xlarge", {**OWNER, **(tags or {})}, now=now)
    seed_ec2.metrics(cw, iid, now, gpu=None, **metrics)
    if sample is not None:
        ssm_commands.register(ssm_backend, iid)
        ssm_commands.stdout(ssm_backend, iid, sample)
    return iid


def sweep(aws: Any, env: dict[str, str], lambda_context: Any) -> tuple[dict[str, Any], dict[str, dict[str, Any]], Any]:
    with recording() as calls:
        result = load_function("ec2").handler(event("ec2-schedule.json"), lambda_context)
    return result, {m["id"]: m for m in drain(aws, env["REAPER_QUEUE_URL"])}, calls


def plan(capsys: Any) -> tuple[dict[str, dict[str, Any]], Any]:
    """`reaper sweep --kind ec2 --json` (dry-run): every verdict, keeps included, and the calls it made."""
    from reaper.cli.main import main

    capsys.readouterr()
    with recording() as calls:
        assert main(["sweep", "--kind", "ec2", "--region", REGION, "--mode", "dry-run", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    return {r["id"]: r for r in rows}, calls


def sent_to(calls: Any) -> list[str]:
    return [i for op, params in calls.made if op == "SendCommand" for i in params["InstanceIds"]]


def test_idle_sample_with_idle_cpu_and_network_would_stop_it(aws, ec2, cw, ssm_kit, ssm_on, lambda_context):
    # Given a GPU box without a GPU metric, its SSM Agent online, every GPU at 0 % and CPU/network idle
    box = gpu_box(ec2, cw, ssm_kit, sample=IDLE_SAMPLE)
    # When the dry-run sweep runs with GpuSsmReads on
    result, by_id, calls = sweep(aws, ssm_on, lambda_context)
    # Then it would stop it, on the sample and the window's CPU and network, and stopped nothing
    assert by_id[box]["verdict"] == "act" and by_id[box]["executed"] is False
    assert "nvidia-smi reads 0 % on all 2 GPU(s)" in by_id[box]["reason"]
    assert result["acted"] == [] and seed_ec2.state(ec2, box) == "running"
    # exactly the one read-only command, to that box, and every call granted to the function with the opt-in
    assert ssm_kit._reaper_ssm.commands == [[COMMAND]] and sent_to(calls) == [box]
    assert calls.actions <= function_actions("Ec2Function", {"GpuSsmReadsOn"})
    assert calls.calls["ssm:ListCommandInvocations"] == 1


def test_busy_sample_keeps_it(aws, ec2, cw, ssm_kit, ssm_on, capsys):
    box = gpu_box(ec2, cw, ssm_kit, sample=BUSY_SAMPLE)
    by_id, _ = plan(capsys)
    assert by_id[box]["verdict"] == "keep" and "busiest GPU at 87 %" in by_id[box]["reason"]


def test_no_online_agent_is_unknown_and_no_command_is_sent(aws, ec2, cw, ssm_kit, ssm_on, capsys):
    # Given one box without SSM Agent and one whose agent lost its connection
    absent = gpu_box(ec2, cw, ssm_kit, sample=None)
    lost = gpu_box(ec2, cw, ssm_kit, sample=None)
    ssm_commands.register(ssm_kit, lost, ping="ConnectionLost")
    by_id, calls = plan(capsys)
    # Then both are kept as unknown, named no-ssm-agent, and no command went anywhere
    for box in (absent, lost):
        assert by_id[box]["verdict"] == "keep" and "no online SSM Agent" in by_id[box]["reason"]
    assert calls.calls["ssm:DescribeInstanceInformation"] == 1 and calls.calls["ssm:SendCommand"] == 0


def test_no_ssm_agent_is_named_by_coverage(aws, ec2, cw, ssm_kit, ssm_on, monkeypatch, capsys):
    from reaper.cli.main import main

    gpu_box(ec2, cw, ssm_kit, sample=None)
    assert main(["coverage", "--kind", "ec2", "--region", REGION]) == 0
    assert "no-ssm-agent" in capsys.readouterr().out


def test_an_idle_sample_with_a_cpu_gap_is_only_a_sample(aws, ec2, cw, ssm_kit, ssm_on, capsys):
    box = gpu_box(ec2, cw, ssm_kit, sample=IDLE_SAMPLE, cpu=[1.0] * 5 + [None] + [1.0] * 30)
    by_id, _ = plan(capsys)
    assert by_id[box]["verdict"] == "keep" and "one nvidia-smi sample alone" in by_id[box]["reason"]


def test_exempt_and_production_boxes_are_never_sent_the_command(aws, ec2, cw, ssm_kit, ssm_on, lambda_context, capsys):
    # Given three idle GPU boxes with online agents: one exempt, one production, one plain
    exempt = gpu_box(ec2, cw, ssm_kit, sample=IDLE_SAMPLE, tags={"reaper:exempt": "true"})
    prod = gpu_box(ec2, cw, ssm_kit, sample=IDLE_SAMPLE, tags={"ml:stage": "prod"})
    plain = gpu_box(ec2, cw, ssm_kit, sample=IDLE_SAMPLE)
    _, by_id, calls = sweep(aws, ssm_on, lambda_context)
    # Then the command reached the plain box only (the recorded calls, and what SSM ran)
    assert sent_to(calls) == [plain] and ssm_kit._reaper_ssm.sent == [[plain]]
    assert by_id[plain]["verdict"] == "act"
    # and the CLI's sweep, the same code path, sends to the plain box only too
    planned, cli_calls = plan(capsys)
    assert sent_to(cli_calls) == [plain]
    assert planned[exempt]["verdict"] == "exempt" and planned[prod]["executed"] is False


def test_off_makes_no_ssm_call_at_all(aws, ec2, cw, ssm_kit, deployed_env, lambda_context, capsys):
    box = gpu_box(ec2, cw, ssm_kit, sample=IDLE_SAMPLE)
    _, _, calls = sweep(aws, deployed_env, lambda_context)
    assert not {a for a in calls.actions if a.startswith("ssm:")}
    assert calls.actions <= function_actions("Ec2Function")
    by_id, cli_calls = plan(capsys)
    assert not {a for a in cli_calls.actions if a.startswith("ssm:")}
    assert by_id[box]["verdict"] == "keep" and "nvidia_gpu" in by_id[box]["reason"]


def test_enforce_stops_an_idle_sampled_box_and_not_a_busy_one(aws, ec2, cw, ssm_kit, ssm_on, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    idle = gpu_box(ec2, cw, ssm_kit, sample=IDLE_SAMPLE)
    busy = gpu_box(ec2, cw, ssm_kit, sample=BUSY_SAMPLE)
    result, _, _ = sweep(aws, ssm_on, lambda_context)
    assert result["acted"] == [idle]
    assert seed_ec2.state(ec2, idle) == "stopped" and seed_ec2.state(ec2, busy) == "running"
