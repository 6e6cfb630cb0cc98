"""The functions' cold imports load nothing of the CLI or the report's page: matplotlib (an optional
extra, never in the layer), the HTML page and the output formats are for `reaper` on a laptop only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# reaper.report.summary (the savings arithmetic, stdlib only) is shared on purpose: the notifier's daily
# savings metric and digest compute with it, so the dashboard, Slack and `reaper report` agree.
CLI_ONLY = (
    "matplotlib",
    "numpy",
    "reaper.cli.main",
    "reaper.cli.output",
    "reaper.cli.formats",
    "reaper.report.chart",
    "reaper.report.html",
)
LOAD = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("app", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.slow
def test_no_function_imports_the_cli_the_report_or_matplotlib():
    env = {k: v for k, v in os.environ.items() if not k.startswith("REAPER_")}
    env.update(AWS_DEFAULT_REGION="us-east-1", PYTHONPATH=os.pathsep.join([str(ROOT / "layers" / "reaper"), str(ROOT)]))
    apps = sorted(ROOT.glob("functions/*/app.py"))
    assert len(apps) >= 8
    for app in apps:
        done = subprocess.run([sys.executable, "-c", LOAD, str(app)], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        loaded = set(json.loads(done.stdout.splitlines()[-1]))
        assert not {m for m in loaded if m.split(".")[0] in CLI_ONLY or m in CLI_ONLY}, app.parent.name
