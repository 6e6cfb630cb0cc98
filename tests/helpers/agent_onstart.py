"""The notebook lifecycle configuration's on-start script as CloudFormation renders it, and a way
to run it against a temporary root with the commands that need root replaced by recorders."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from reaper_devkit.template import load

# Commands the script runs that change users or ownership, or ask the real system: each fake
# appends its argv to calls.log. `stat` answers "0 755" (root-owned) unless the path matches a
# glob in FAKE_USER_OWNED, then "1000 755" (owned by ec2-user).
FAKES = {
    "useradd": "",
    "chown": "",
    "id": 'if [ "$1" = -u ] && [ -f "$FAKE_DIR/user-added" ]; then echo 990; exit 0; fi; exit 1',
    "stat": ('p="${@: -1}"; for g in $FAKE_USER_OWNED; do case "$p" in $g) echo "1000 755"; exit 0;; esac; done; echo "0 755"'),
}


def on_start_script(cpu: str = "10", gpu: str = "5", channel: str | None = None, config: str | None = None) -> str:
    """OnStart content with !Sub applied as CloudFormation would (the stack's parameter values;
    channel and lifecycle configuration name: the template's defaults unless given)."""
    t = load()
    hook = t["Resources"]["NotebookActivityAgent"]["Properties"]["OnStart"]
    assert len(hook) == 1
    text, variables = hook[0]["Content"]["Fn::Base64"]["Sub"]
    values = {
        **variables,
        "AgentCpuPercent": cpu,
        "AgentGpuPercent": gpu,
        "AgentChannel": channel or t["Parameters"]["AgentChannel"]["Default"],
        "AgentLifecycleConfigName": config or t["Parameters"]["AgentLifecycleConfigName"]["Default"],
    }
    for name, value in values.items():
        text = text.replace("${" + name + "}", value)
    assert "${" not in text, "the script uses ${...} that CloudFormation would read as a variable"
    return str(text)


@dataclass
class Installed:
    root: Path
    result: subprocess.CompletedProcess[str]
    calls: list[list[str]]

    def cron_lines(self) -> list[str]:
        path = self.root / "etc/cron.d/mlreaper-agent"
        return [ln for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")]

    def chowns(self) -> dict[str, str]:
        """path (relative to the root) -> owner given to chown."""
        out = {}
        for argv in self.calls:
            if argv[0] == "chown":
                out["/" + os.path.relpath(argv[-1], self.root)] = argv[-2]
        return out


def install(tmp_path: Path, user_owned: str = "", python: str | None = None, cron_d: bool = True, channel: str | None = None) -> Installed:
    """Run the on-start script with MLREAPER_ROOT=tmp_path/root; the interpreter candidates are links to
    this test's python (or `python`), so the script's version check really runs."""
    root, fakes = tmp_path / "root", tmp_path / "fakes"
    for d in ("opt", "var/lib", "var/log", "usr/bin", *(["etc/cron.d"] if cron_d else [])):
        (root / d).mkdir(parents=True, exist_ok=True)
    link = root / "usr/bin/python3"
    if not link.exists():
        link.symlink_to(python or sys.executable)
    fakes.mkdir(exist_ok=True)
    for name, body in FAKES.items():
        fake = fakes / name
        record = f'printf "%s\\0" {name} "$@" >> "$FAKE_DIR/calls.log"; printf "\\n" >> "$FAKE_DIR/calls.log"'
        extra = ' && touch "$FAKE_DIR/user-added"' if name == "useradd" else ""
        fake.write_text(f"#!/bin/bash\n{record}{extra}\n{body}\n")
        fake.chmod(0o755)
    env = {
        "MLREAPER_ROOT": str(root),
        "PATH": f"{fakes}:/usr/sbin:/usr/bin:/sbin:/bin",
        "FAKE_DIR": str(fakes),
        "FAKE_USER_OWNED": user_owned,
    }
    result = subprocess.run(
        ["/bin/bash", "-c", on_start_script(channel=channel)], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    log = fakes / "calls.log"
    calls = [line.strip("\0").split("\0") for line in log.read_text().splitlines() if line] if log.exists() else []
    return Installed(root, result, calls)
