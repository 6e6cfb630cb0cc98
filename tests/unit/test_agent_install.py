"""The on-start script, run against a temporary root: who owns what it installs, with which
modes, which user cron runs the agent as, and with which interpreter and flags."""

from __future__ import annotations

import base64
import shlex
import stat
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import agent_onstart
from tests.helpers.agent_onstart import install, on_start_script

AGENT_SOURCE = (ROOT / "agent" / "activity_agent.py").read_text()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.mark.parametrize("channel", [None, "logs"], ids=["default-channel", "logs"])
def test_installs_root_owned_code_and_a_cron_entry_for_the_unprivileged_user(tmp_path, channel):
    # Given a fresh notebook root filesystem / When the on-start script runs (AgentChannel default or logs)
    done = install(tmp_path, channel=channel)
    root = done.root

    # Then it says so and exits 0
    assert done.result.returncode == 0, done.result.stderr
    assert "mlreaper agent installed" in done.result.stdout

    # the agent user is a system user without a login shell or a home under /home
    useradd = next(c for c in done.calls if c[0] == "useradd")
    assert useradd[-1] == "mlreaper-agent"
    assert {"--system", "--no-create-home"} <= set(useradd)
    assert useradd[useradd.index("--shell") + 1] == "/sbin/nologin"
    assert useradd[useradd.index("--home-dir") + 1] == "/var/lib/mlreaper-agent"

    # code: root-owned, read-only for everyone else; state: the agent's own, private
    owners = done.chowns()
    assert owners["/opt/mlreaper"] == "root:root" and mode(root / "opt/mlreaper") == 0o755
    assert owners["/opt/mlreaper/agent.py"] == "root:root" and mode(root / "opt/mlreaper/agent.py") == 0o644
    assert owners["/var/lib/mlreaper-agent"] == "mlreaper-agent:mlreaper-agent"
    assert mode(root / "var/lib/mlreaper-agent") == 0o700
    assert owners["/var/log/mlreaper-agent"] == "mlreaper-agent:mlreaper-agent"
    assert mode(root / "var/log/mlreaper-agent") == 0o755
    # (written to a temporary name in /etc/cron.d, chowned, then renamed into place)
    cron_owner = [o for p, o in owners.items() if p.startswith("/etc/cron.d/.mlreaper-agent.")]
    assert cron_owner == ["root:root"] and mode(root / "etc/cron.d/mlreaper-agent") == 0o644
    assert not (root / "opt/mlreaper/agent.py").is_symlink()
    # decoded from the embedded base64 of its gzip: byte for byte the repository's agent
    assert (root / "opt/mlreaper/agent.py").read_text() == AGENT_SOURCE

    # the cron entry: every 5 minutes, as mlreaper-agent, system python in isolated mode, root-owned script
    lines = done.cron_lines()
    assert "PATH=/usr/bin:/bin" in lines
    job = next(ln for ln in lines if ln.startswith("*/5 "))
    fields = shlex.split(job)
    assert fields[:6] == ["*/5", "*", "*", "*", "*", "mlreaper-agent"]
    command = [f for f in fields[6:] if "=" not in f or f.startswith((">", "/"))]
    assert command[:4] == ["/usr/bin/python3", "-I", "-S", "/opt/mlreaper/agent.py"]
    assert "MLREAPER_CPU_PERCENT=10" in fields and "MLREAPER_GPU_PERCENT=5" in fields
    # the channel (default: the contract's metric) and the stack's log group, from root's cron entry
    assert f"MLREAPER_CHANNEL={channel or 'metric'}" in fields
    assert "MLREAPER_LOG_GROUP=/mlreaper/mlreaper-activity-agent" in fields
    assert "/home/" not in job and "anaconda" not in job and "PYTHONPATH" not in job
    assert job.endswith(">> /var/log/mlreaper-agent/agent.log 2>&1")
    assert not list((root / "etc/cron.d").glob(".mlreaper-agent.*")), "no temporary file left in cron.d"


def test_runs_again_on_every_start_without_trouble(tmp_path):
    # SageMaker runs on-start at every start; the second run finds the user and the paths
    install(tmp_path)
    again = install(tmp_path)
    assert again.result.returncode == 0 and "mlreaper agent installed" in again.result.stdout
    assert [c for c in again.calls if c[0] == "useradd"] == [c for c in install(tmp_path).calls if c[0] == "useradd"]
    assert len(again.cron_lines()) == 3


def test_without_a_root_owned_python_the_notebook_starts_without_the_agent(tmp_path):
    # Given /usr/bin/python3 owned by the notebook user (and no other candidate)
    done = install(tmp_path, user_owned="*/usr/bin/python3")
    # Then no cron entry and no agent user, a message in the lifecycle log, and exit 0 (the notebook starts)
    assert done.result.returncode == 0
    assert "NOT installed" in done.result.stdout and "not root-only" in done.result.stdout
    assert not (done.root / "etc/cron.d/mlreaper-agent").exists()
    assert not any(c[0] == "useradd" for c in done.calls)


def test_a_python_older_than_3_7_is_not_used(tmp_path):
    old = tmp_path / "python2"
    old.write_text("#!/bin/sh\nexit 1\n")  # what the version check sees from a python < 3.7
    old.chmod(0o755)
    done = install(tmp_path, python=str(old))
    assert done.result.returncode == 0 and "no root-owned python3 >= 3.7" in done.result.stdout
    assert not (done.root / "etc/cron.d/mlreaper-agent").exists()


def test_without_cron_the_notebook_starts_without_the_agent(tmp_path):
    (tmp_path / "root/etc").mkdir(parents=True)
    done = install(tmp_path, cron_d=False)
    assert done.result.returncode == 0 and "cron is not installed" in done.result.stdout
    assert not any(c[0] == "useradd" for c in done.calls)


def test_a_failure_half_way_removes_the_cron_entry_and_still_exits_0(tmp_path):
    install(tmp_path)  # a previous start installed it
    # Given /var/lib now writable by others (fresh_dir refuses to work under it)
    done = install(tmp_path, user_owned="*/var/lib")
    assert done.result.returncode == 0 and "NOT installed" in done.result.stdout
    assert not (done.root / "etc/cron.d/mlreaper-agent").exists()


@pytest.mark.parametrize("channel", ["metric", "logs"])
def test_the_script_fits_the_lifecycle_configuration_limit(channel):
    # "Length Constraints: Maximum length of 16384" for the base64 Content:
    # https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_NotebookInstanceLifecycleHook.html
    # with the longest values the parameters allow (a lifecycle configuration name has up to 63 characters)
    script = on_start_script(cpu="100.000", gpu="100.000", channel=channel, config="n" * 63)
    assert len(base64.b64encode(script.encode())) <= 16384
    # and the agent is embedded compressed: the whole script is smaller than the agent's own text
    assert len(script) < len(AGENT_SOURCE)


def test_a_damaged_embedded_agent_is_not_installed_and_the_notebook_still_starts(tmp_path, monkeypatch):
    # Given the embedded agent corrupted in transit (one base64 character changed in the middle)
    script = on_start_script()
    start = script.index("<<'MLREAPER_AGENT'") + 200
    damaged = script[:start] + ("A" if script[start] != "A" else "B") + script[start + 1 :]
    monkeypatch.setattr(agent_onstart, "on_start_script", lambda **_: damaged)
    # When the on-start script runs
    done = install(tmp_path)
    # Then gunzip's check fails the install (pipefail): no cron entry, and the notebook starts (exit 0)
    assert done.result.returncode == 0 and "NOT installed" in done.result.stdout
    assert not (done.root / "etc/cron.d/mlreaper-agent").exists()


def test_the_agent_runs_on_the_system_python_of_amazon_linux_2():
    import ast

    ast.parse(AGENT_SOURCE, feature_version=(3, 7))  # AL2's /usr/bin/python3 is 3.7
    assert "\nMLREAPER_AGENT\n" not in AGENT_SOURCE, "would end the on-start heredoc early"
