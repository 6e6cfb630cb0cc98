"""The functions' own output stays quiet when there is nothing to say: an invocation that adds no
metric (an event about a notebook with nothing wrong) prints no powertools "No application metrics"
warning. Run in a fresh interpreter: the warning filter is process state, as in a Lambda sandbox."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INVOKE = """
import sys
from moto import mock_aws
with mock_aws():
    from tests.conftest import LambdaContext, event, load_function
    app = load_function(sys.argv[1])
    print("RESULT", app.handler(event(sys.argv[2]), LambdaContext()))
"""


@pytest.mark.slow
@pytest.mark.parametrize("event", ["notebook-state-inservice.json", "notebook-cloudtrail-start.json", "notebook-schedule.json"])
def test_an_invocation_with_no_metric_logs_no_empty_metrics_warning(event):
    # Given a function's cold start in a fresh interpreter, against an empty account
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REAPER_", "PYTHONWARNINGS"))}
    env.update(AWS_DEFAULT_REGION="us-east-1", AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "layers" / "reaper"), str(ROOT / "devkit"), str(ROOT)])
    # When it handles an event that adds no metric
    done = subprocess.run([sys.executable, "-c", INVOKE, "notebook", event], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    # Then it succeeds and its output holds no warning at all
    assert done.returncode == 0 and "RESULT" in done.stdout, done.stderr[-2000:]
    assert "No application metrics" not in done.stdout + done.stderr
    assert "Warning" not in done.stderr, done.stderr[-2000:]
