"""After `sam build`: run the BUILT notebook function (layer + code as Lambda would see them)
against moto with the schedule event, and check it stops the idle notebook.

Catches packaging faults the source tests cannot see (a module or prices.json missing from
the layer, a handler path that does not import).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / ".aws-sam" / "build"
sys.path.insert(0, str(BUILD / "ReaperLayer" / "python"))

os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", AWS_REGION="us-east-1", AWS_DEFAULT_REGION="us-east-1")
os.environ.update(REAPER_MODE="enforce", REAPER_GRACE_MINUTES="0")
for var in ("AWS_ENDPOINT_URL", "AWS_PROFILE", "REAPER_TABLE", "REAPER_QUEUE_URL"):
    os.environ.pop(var, None)

import boto3  # noqa: E402
from moto import mock_aws  # noqa: E402

import reaper  # noqa: E402
from reaper_devkit import seed  # noqa: E402


class Context:
    function_name, memory_limit_in_mb, aws_request_id = "smoke", 512, "1"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:smoke"


def main() -> int:
    assert str(BUILD) in reaper.__file__, f"reaper came from {reaper.__file__}, not the build"
    with mock_aws():
        sm, cw = boto3.client("sagemaker"), boto3.client("cloudwatch")
        seed.notebook(sm, "idle", {"ml:owner": "ana@example.com"})
        seed.activity(cw, "idle", datetime.now(UTC), [0] * 15)
        spec = importlib.util.spec_from_file_location("built_app", BUILD / "NotebookFunction" / "app.py")
        assert spec and spec.loader
        app = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(app)
        event = json.loads((ROOT / "events" / "notebook-schedule.json").read_text())
        result = app.handler(event, Context())
        status = sm.describe_notebook_instance(NotebookInstanceName="idle")["NotebookInstanceStatus"]
    assert result["acted"] == ["idle"] and status == "Stopped", (result, status)
    print(f"built notebook function OK: {result['verdicts']} (reaper from {Path(reaper.__file__).parent})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
