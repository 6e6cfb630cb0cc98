"""mlreaper activity agent: runs every 5 minutes on a SageMaker notebook instance (cron) and
publishes MLReaper/NotebookActivity = 1 if anything was active in the period, else 0.

Active means any of: a busy kernel; kernel or terminal activity since the last run; GPU use
or CPU use above the thresholds. If the Jupyter server cannot be read, nothing is published:
no data means unknown to the reaper, never idle.

Standard library only, plus boto3 when the notebook has it (else the AWS CLI): nothing is
installed at start, so image updates and notebooks without internet access do not break it.
Embedded in template.yaml by scripts/embed_agent.py; a test keeps the two the same.
"""

import json
import os
import ssl
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timezone

PERIOD = 300
JUPYTER = os.environ.get("MLREAPER_JUPYTER_URL", "https://localhost:8443")
CPU_PERCENT = float(os.environ.get("MLREAPER_CPU_PERCENT", "10"))
GPU_PERCENT = float(os.environ.get("MLREAPER_GPU_PERCENT", "5"))
STATE = os.environ.get("MLREAPER_STATE", "/home/ec2-user/.mlreaper/cpu-state.json")
METADATA = os.environ.get("MLREAPER_METADATA", "/opt/ml/metadata/resource-metadata.json")


def _get(path):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with urllib.request.urlopen(JUPYTER + path, timeout=10, context=ctx) as resp:
        return json.loads(resp.read().decode())


def _recent(stamp, now):
    if not stamp:
        return False
    try:
        seen = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return False
    return (now - seen).total_seconds() <= PERIOD


def jupyter_active(now):
    """True/False from the Jupyter server; None when it cannot be read."""
    try:
        kernels = _get("/api/kernels")
        terminals = _get("/api/terminals")
    except Exception as exc:  # noqa: BLE001 - any failure means "cannot tell"
        print(f"jupyter unreadable: {exc}", file=sys.stderr)
        return None
    for k in kernels:
        if k.get("execution_state") == "busy" or _recent(k.get("last_activity"), now):
            return True
    return any(_recent(t.get("last_activity"), now) for t in terminals)


def gpu_busy():
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False  # no GPU or no driver
    values = [float(v) for v in out.split() if v.strip().replace(".", "", 1).isdigit()]
    return any(v > GPU_PERCENT for v in values)


def cpu_busy():
    """Average CPU use since the last run (from /proc/stat), compared with the threshold."""
    try:
        with open("/proc/stat") as f:
            fields = [float(x) for x in f.readline().split()[1:]]
    except OSError:
        return False
    idle, total = fields[3] + (fields[4] if len(fields) > 4 else 0), sum(fields)
    previous = None
    try:
        with open(STATE) as f:
            previous = json.load(f)
    except (OSError, ValueError):
        pass
    try:
        os.makedirs(os.path.dirname(STATE), exist_ok=True)
        with open(STATE, "w") as f:
            json.dump({"idle": idle, "total": total}, f)
    except OSError:
        pass
    if not previous or total <= previous["total"]:
        return False
    busy = 1 - (idle - previous["idle"]) / (total - previous["total"])
    return busy * 100 > CPU_PERCENT


def notebook_identity():
    with open(METADATA) as f:
        meta = json.load(f)
    region = meta["ResourceArn"].split(":")[3]
    return meta["ResourceName"], region


def publish(name, region, value):
    if os.environ.get("MLREAPER_DRY"):
        print(json.dumps({"NotebookInstanceName": name, "region": region, "value": value}))
        return
    datum = {"MetricName": "NotebookActivity", "Value": value, "Unit": "Count",
             "Dimensions": [{"Name": "NotebookInstanceName", "Value": name}]}
    try:
        import boto3
    except ImportError:
        subprocess.run(["aws", "cloudwatch", "put-metric-data", "--region", region, "--namespace", "MLReaper",
                        "--metric-data", json.dumps([datum])], check=True, timeout=60)
        return
    boto3.client("cloudwatch", region_name=region).put_metric_data(Namespace="MLReaper", MetricData=[datum])


def main():
    now = datetime.now(timezone.utc)
    name, region = notebook_identity()
    jupyter = jupyter_active(now)
    if jupyter is None:
        return 0  # unknown: publish nothing
    gpu, cpu = gpu_busy(), cpu_busy()  # both every run: the CPU sample must stay fresh
    active = jupyter or gpu or cpu
    publish(name, region, 1 if active else 0)
    return 0


if __name__ == "__main__":
    time.sleep(int(os.environ.get("MLREAPER_JITTER", "0")))
    sys.exit(main())
