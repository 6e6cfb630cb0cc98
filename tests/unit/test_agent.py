"""The activity agent that the lifecycle configuration installs: run for real against a fake
Jupyter server, with publishing replaced by printing (MLREAPER_DRY)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import embed_agent  # noqa: E402

AGENT = ROOT / "agent" / "activity_agent.py"


def test_template_embeds_the_agent_as_it_is_in_the_repo():
    _, _, embedded = embed_agent.embedded((ROOT / "template.yaml").read_text())
    assert embedded == AGENT.read_text(), "run scripts/embed_agent.py after editing agent/activity_agent.py"


def test_agent_cannot_break_cloudformation_sub():
    assert "${" not in AGENT.read_text()


@pytest.fixture
def jupyter() -> Iterator[dict[str, Any]]:
    state: dict[str, Any] = {"kernels": [], "terminals": []}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            key = self.path.rsplit("/", 1)[-1]
            body = json.dumps(state.get(key, [])).encode()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()


def agent_env(tmp_path: Path, url: str, **extra: str) -> dict[str, str]:
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"ResourceName": "nb-1", "ResourceArn": "arn:aws:sagemaker:eu-west-1:1:notebook-instance/nb-1"}))
    state = tmp_path / "state"
    state.mkdir(mode=0o700, exist_ok=True)
    return {"MLREAPER_JUPYTER_URL": url, "MLREAPER_DRY": "1", "MLREAPER_METADATA": str(meta),
            "MLREAPER_STATE_DIR": str(state), "MLREAPER_CPU_PERCENT": "101", "PATH": "/usr/bin:/bin", **extra}


def run_agent(tmp_path: Path, url: str, **extra: str) -> list[dict[str, Any]]:
    """The agent as cron runs it: isolated mode, no site-packages (-I -S)."""
    out = subprocess.run([sys.executable, "-I", "-S", str(AGENT)], env=agent_env(tmp_path, url, **extra),
                         capture_output=True, text=True, timeout=60, check=True)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def stamp(minutes_ago: int) -> str:
    return (datetime.now(UTC) - timedelta(minutes=minutes_ago)).isoformat().replace("+00:00", "Z")


def test_busy_kernel_is_active(jupyter, tmp_path):
    jupyter["kernels"] = [{"execution_state": "busy", "last_activity": stamp(50)}]
    assert run_agent(tmp_path, jupyter["url"]) == [{"NotebookInstanceName": "nb-1", "region": "eu-west-1", "value": 1}]


def test_recent_kernel_or_terminal_activity_is_active(jupyter, tmp_path):
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(2)}]
    assert run_agent(tmp_path, jupyter["url"])[0]["value"] == 1
    jupyter["kernels"] = []
    jupyter["terminals"] = [{"name": "1", "last_activity": stamp(1)}]
    assert run_agent(tmp_path, jupyter["url"])[0]["value"] == 1


def test_nothing_recent_is_idle(jupyter, tmp_path):
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(40)}]
    jupyter["terminals"] = [{"name": "1", "last_activity": stamp(90)}]
    assert run_agent(tmp_path, jupyter["url"])[0]["value"] == 0


def test_unreadable_jupyter_publishes_nothing(tmp_path):
    assert run_agent(tmp_path, "http://127.0.0.1:9") == []
