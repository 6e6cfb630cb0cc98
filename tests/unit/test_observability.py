"""The core's `reaper` logger: powertools' JSON lines in Lambda, plain lines elsewhere (the CLI, the demo)."""

import json
import os
import subprocess
import sys

CODE = (
    "import logging, reaper.core.observability as o; o.logger.setLevel('INFO');logging.getLogger('reaper').warning('core says %s', 'hello')"
)


def _run(lambda_name: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AWS_LAMBDA_FUNCTION_NAME"}
    if lambda_name:
        env["AWS_LAMBDA_FUNCTION_NAME"] = lambda_name
    return subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True, timeout=60)


def test_in_lambda_the_core_logs_one_json_line_with_the_service():
    out = _run("mlreaper-notebook").stdout.strip().splitlines()
    line = json.loads(out[-1])
    assert line["message"] == "core says hello"
    assert line["service"] == os.environ.get("POWERTOOLS_SERVICE_NAME", "mlreaper")
    assert line["level"] == "WARNING"


def test_outside_lambda_importing_the_functions_adds_no_json_handler_to_the_core():
    done = _run(None)
    assert "core says hello" not in done.stdout  # no JSON copy on stdout (the CLI's tables live there)
    assert "core says hello" in done.stderr  # Python's last-resort handler: a plain line on stderr
