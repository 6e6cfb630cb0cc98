"""The notebook activity agent (agent/activity_agent.py) as the tests run it: its environment for a dry
run, and the module loaded from its file."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from tests.conftest import ROOT

AGENT = ROOT / "agent" / "activity_agent.py"


def agent_env(tmp_path: Path, url: str, **extra: str) -> dict[str, str]:
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"ResourceName": "nb-1", "ResourceArn": "arn:aws:sagemaker:eu-west-1:1:notebook-instance/nb-1"}))
    state = tmp_path / "state"
    state.mkdir(mode=0o700, exist_ok=True)
    return {
        "MLREAPER_JUPYTER_URL": url,
        "MLREAPER_DRY": "1",
        "MLREAPER_METADATA": str(meta),
        "MLREAPER_STATE_DIR": str(state),
        "MLREAPER_CPU_PERCENT": "101",
        "PATH": "/usr/bin:/bin",
        **extra,
    }


def load_agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("activity_agent", AGENT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
