"""The three ways a notebook user got root through the old agent, repeated against the new one:
a .pth file in a user-writable site-packages, a user-writable agent path, and a planted symlink
for the state file. Each first shows the attack works without the defence (so the test can see
it), then that it fails against what the on-start script installs."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.conftest import ROOT
from tests.helpers.activity_agent import agent_env
from tests.helpers.agent_onstart import install

AGENT = ROOT / "agent" / "activity_agent.py"
PAYLOAD = "import os; open(os.environ['MARKER'], 'a').write('ran as uid %d\\n' % os.getuid())"


def cron_command(tmp_path: Path) -> list[str]:
    """The interpreter and its flags exactly as the installed cron entry runs them."""
    done = install(tmp_path / "install")
    job = next(ln for ln in done.cron_lines() if ln.startswith("*/5 "))
    words = shlex.split(job)[6:]
    start = next(i for i, w in enumerate(words) if w.startswith("/"))
    end = words.index(">>")
    return words[start:end]


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)


def test_a_pth_file_in_a_user_writable_site_packages_is_not_run(tmp_path):
    # Given an interpreter whose site-packages the user can write (a venv, like JupyterSystemEnv)
    # with a .pth file that runs code, and a user site-packages with another
    env_dir = tmp_path / "userenv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], {}).stdout.strip())
    (site / "zz_evil.pth").write_text(PAYLOAD + "\n")
    userbase = tmp_path / "home"
    user_site = userbase / Path(sysconfig.get_path("purelib", "posix_user", {"userbase": str(userbase)})).relative_to(userbase)
    user_site.mkdir(parents=True)
    (user_site / "zz_evil.pth").write_text(PAYLOAD + "\n")
    # and a PYTHONPATH with a module that shadows the standard library
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "json.py").write_text(PAYLOAD + "\n")
    marker = tmp_path / "marker"
    hostile = {
        "MARKER": str(marker),
        "PYTHONUSERBASE": str(userbase),
        "HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(shadow),
        "PYTHONSTARTUP": str(shadow / "json.py"),
    }

    # The attack works on a plain run of that interpreter (so the test can see it)
    run([str(python), "-c", "pass"], hostile)
    assert marker.exists() and marker.read_text().count("ran as uid") >= 2
    marker.unlink()

    # When the agent runs with the cron entry's flags, even on that interpreter
    flags = cron_command(tmp_path)[1:-1]
    assert flags == ["-I", "-S"]
    env = {**agent_env(tmp_path, "http://127.0.0.1:9"), **hostile}
    out = run([str(python), *flags, str(AGENT)], env)

    # Then nothing of the user's ran, and the agent did its job (Jupyter unreadable: publishes nothing)
    assert out.returncode == 0, out.stderr
    assert "jupyter unreadable" in out.stderr
    assert not marker.exists()


def test_a_user_writable_agent_path_is_replaced_by_root_owned_code(tmp_path):
    # Given the notebook user planted the agent's paths before the on-start script ran:
    # /opt/mlreaper and the state directory as symlinks into their home
    base = tmp_path / "install"
    root, home = base / "root", tmp_path / "home-ec2-user"
    home.mkdir()
    evil = home / "agent.py"
    evil.write_text(PAYLOAD + "\n")
    (root / "opt").mkdir(parents=True)
    (root / "var/lib").mkdir(parents=True)
    (root / "opt/mlreaper").symlink_to(home)
    (root / "var/lib/mlreaper-agent").symlink_to(home)

    # When the on-start script runs
    done = install(base)
    assert done.result.returncode == 0, done.result.stdout + done.result.stderr

    # Then the paths are new root-created directories, not the user's, and the user's file is untouched
    for path in ("opt/mlreaper", "var/lib/mlreaper-agent"):
        assert not (root / path).is_symlink() and (root / path).is_dir()
    assert evil.read_text() == PAYLOAD + "\n"
    assert sorted(p.name for p in home.iterdir()) == ["agent.py"]
    assert AGENT.read_text() in (root / "opt/mlreaper/agent.py").read_text()
    assert done.chowns()["/opt/mlreaper/agent.py"] == "root:root"
    # and the cron entry runs the root-owned copy, nothing under /home
    job = next(ln for ln in done.cron_lines() if ln.startswith("*/5 "))
    assert " /opt/mlreaper/agent.py " in job and "/home" not in job


def test_the_script_directory_is_not_on_the_import_path(tmp_path):
    # Given a module next to the agent that shadows the standard library
    app = tmp_path / "app"
    app.mkdir()
    (app / "agent.py").write_text(AGENT.read_text())
    (app / "json.py").write_text(PAYLOAD + "\n")
    marker = tmp_path / "marker"
    env = {**agent_env(tmp_path, "http://127.0.0.1:9"), "MARKER": str(marker)}
    # The shadow is imported without isolation (so the test can see it) ...
    run([sys.executable, str(app / "agent.py")], env)
    assert marker.exists()
    marker.unlink()
    # ... and not with the cron entry's flags
    out = run([sys.executable, *cron_command(tmp_path)[1:-1], str(app / "agent.py")], env)
    assert out.returncode == 0, out.stderr
    assert not marker.exists()


def victim(tmp_path: Path) -> Path:
    secret = tmp_path / "root-only"
    secret.write_text("root:$6$hash:19000:0:99999:7:::\n")
    secret.chmod(0o600)
    return secret


def state_run(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = agent_env(tmp_path, "http://127.0.0.1:9")
    return run([sys.executable, "-I", "-S", "-c", _STATE_ONLY, str(AGENT)], env)


# the agent's CPU sampler alone (the Jupyter server is irrelevant to the state file)
_STATE_ONLY = (
    "import importlib.util, sys; s = importlib.util.spec_from_file_location('a', sys.argv[1]); "
    "a = importlib.util.module_from_spec(s); s.loader.exec_module(a); print(a.cpu_busy())"
)


def test_a_planted_symlink_for_the_state_file_is_replaced_not_written_through(tmp_path):
    # Given cpu-state.json in the state directory is a symlink to a root-only file
    secret = victim(tmp_path)
    before = secret.read_text()
    agent_env(tmp_path, "http://127.0.0.1:9")
    link = tmp_path / "state" / "cpu-state.json"
    link.symlink_to(secret)

    # When the agent samples the CPU
    out = state_run(tmp_path)

    # Then the target is unchanged, and the link itself was replaced by the agent's own file
    assert out.returncode == 0, out.stderr
    assert secret.read_text() == before
    assert not link.is_symlink() and set(json.loads(link.read_text())) == {"idle", "total"}
    assert oct(link.stat().st_mode & 0o777) == oct(0o600)


def test_a_state_directory_others_can_write_or_that_is_a_symlink_is_refused(tmp_path):
    secret = victim(tmp_path)
    before = secret.read_text()
    agent_env(tmp_path, "http://127.0.0.1:9")
    state = tmp_path / "state"

    # Given a state directory others can write (a user could swap files in it)
    state.chmod(0o777)
    out = state_run(tmp_path)
    # Then CPU use is unknown (the agent publishes nothing rather than a guess) and nothing is written
    assert out.stdout.strip() == "None" and "unsafe state dir" in out.stderr
    assert list(state.iterdir()) == []

    # Given the state directory itself is a symlink (to a directory holding the root-only file)
    state.rmdir()
    state.symlink_to(tmp_path)
    out = state_run(tmp_path)
    assert out.stdout.strip() == "None" and "cpu use unknown" in out.stderr
    assert secret.read_text() == before
    assert not (tmp_path / "cpu-state.json").exists()
