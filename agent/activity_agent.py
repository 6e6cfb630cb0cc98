"""mlreaper activity agent (README: threat model, AgentChannel). Cron runs it every 5 min as mlreaper-agent
(python3 -I -S, stdlib, 3.7+): 1 if anything was active, else 0; nothing when unknown. MLREAPER_CHANNEL
"metric" (default, the contract): PutMetricData MLReaper/NotebookActivity; "logs": one Logs event.
"""

import contextlib
import hashlib
import hmac
import json
import os
import ssl
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timezone

PERIOD = 300
ENV = os.environ.get  # set only by the root-owned cron entry (and by tests)
JUPYTER = ENV("MLREAPER_JUPYTER_URL", "https://localhost:8443")
CPU_PERCENT = float(ENV("MLREAPER_CPU_PERCENT", "10"))
GPU_PERCENT = float(ENV("MLREAPER_GPU_PERCENT", "5"))
STATE_DIR = ENV("MLREAPER_STATE_DIR", "/var/lib/mlreaper-agent")
STATE_FILE = "cpu-state.json"
METADATA = ENV("MLREAPER_METADATA", "/opt/ml/metadata/resource-metadata.json")
IMDS = ENV("MLREAPER_IMDS_URL", "http://169.254.169.254")
CHANNEL = ENV("MLREAPER_CHANNEL", "metric")
NAMESPACE = "MLReaper"
CLOUDWATCH = ENV("MLREAPER_CLOUDWATCH_URL", "")  # default: https://monitoring.REGION.amazonaws.com/
LOG_GROUP = ENV("MLREAPER_LOG_GROUP", "/mlreaper/mlreaper-activity-agent")
LOGS = ENV("MLREAPER_LOGS_URL", "")
NVIDIA_SMI = "/usr/bin/nvidia-smi"
MAX_BODY = 4 << 20


def _http(url, method="GET", data=None, headers=None, context=None):
    req = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    with urllib.request.urlopen(req, timeout=10, context=context) as resp:
        body = resp.read(MAX_BODY + 1)
    if len(body) > MAX_BODY:
        raise ValueError("answer larger than %d bytes from %s" % (MAX_BODY, url))
    return body


def _get(path):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the notebook's own self-signed certificate on localhost
    return json.loads(_http(JUPYTER + path, context=ctx).decode())


def _recent(stamp, now):
    if not isinstance(stamp, str):
        return False
    try:
        seen = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return False
    return (now - seen).total_seconds() <= PERIOD


def jupyter_active(now):
    """True/False from the Jupyter server (no token on localhost); None when unreadable."""
    try:
        kernels = _get("/api/kernels")
        terminals = _get("/api/terminals")
        for k in kernels:
            if k.get("execution_state") == "busy" or _recent(k.get("last_activity"), now):
                return True
        return any(_recent(t.get("last_activity"), now) for t in terminals)
    except Exception as exc:  # noqa: BLE001 - any failure means "cannot tell"
        print("jupyter unreadable: %s" % exc, file=sys.stderr)
        return None


def gpu_busy():
    try:
        out = subprocess.run(
            [NVIDIA_SMI, "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            universal_newlines=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False  # no GPU or no driver
    values = [float(v) for v in out.split() if v.strip().replace(".", "", 1).isdigit()]
    return any(v > GPU_PERCENT for v in values)


def open_state_dir(path=None):
    """The state directory's fd; OSError if it is a symlink, not ours, or open to others."""
    fd = os.open(path or STATE_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o077:
        os.close(fd)
        raise PermissionError("unsafe state dir %s (uid %d, mode %o)" % (path or STATE_DIR, st.st_uid, st.st_mode & 0o777))
    return fd


def read_state(dir_fd):
    try:
        fd = os.open(STATE_FILE, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    with os.fdopen(fd) as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise PermissionError("%s is not a regular file" % STATE_FILE)
        return json.loads(f.read(4096))


def write_state(dir_fd, data):
    """New file renamed over the old: a planted symlink is replaced, never followed."""
    tmp = ".%s.%d.tmp" % (STATE_FILE, os.getpid())
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp, dir_fd=dir_fd)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, STATE_FILE, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


def cpu_busy():
    """Average CPU use since the last run (/proc/stat) against the threshold; None if unknown."""
    try:
        with open("/proc/stat") as f:
            fields = [float(x) for x in f.readline().split()[1:]]
        idle, total = fields[3] + (fields[4] if len(fields) > 4 else 0), sum(fields)
        dir_fd = open_state_dir()
        try:
            try:
                previous = read_state(dir_fd)
            except (OSError, ValueError):
                previous = None  # a symlink, torn or foreign file: start a new sample over it
            write_state(dir_fd, {"idle": idle, "total": total})
        finally:
            os.close(dir_fd)
    except (OSError, ValueError, IndexError) as exc:
        print("cpu use unknown: %s" % exc, file=sys.stderr)
        return None
    try:
        busy = 1 - (idle - float(previous["idle"])) / (total - float(previous["total"]))
    except (TypeError, KeyError, ValueError, ZeroDivisionError):
        return False  # first sample after start (or a sample we cannot use)
    return total - float(previous["total"]) > 0 and busy * 100 > CPU_PERCENT


def notebook_identity():
    with open(METADATA) as f:
        meta = json.load(f)
    arn = meta["ResourceArn"].split(":")
    return meta["ResourceName"], arn[3], arn[1]


def credentials():
    """The instance role's credentials from IMDSv2; they serve any local user."""
    token = _http(IMDS + "/latest/api/token", "PUT", b"", {"X-aws-ec2-metadata-token-ttl-seconds": "300"})
    h = {"X-aws-ec2-metadata-token": token.decode()}
    base = IMDS + "/latest/meta-data/iam/security-credentials/"
    role = _http(base, headers=h).decode().split()[0]
    c = json.loads(_http(base + role, headers=h).decode())
    return c["AccessKeyId"], c["SecretAccessKey"], c.get("Token")


def sign(url, body, region, creds, amz_date, target=None, service="logs"):
    """AWS Signature Version 4 headers for a POST: JSON to Logs (target), or a form to CloudWatch."""
    key_id, secret, token = creds
    u = urllib.parse.urlsplit(url)
    headers = {"host": u.netloc, "x-amz-date": amz_date}
    if target:
        headers.update({"content-type": "application/x-amz-json-1.1", "x-amz-target": target})
    else:
        headers["content-type"] = "application/x-www-form-urlencoded; charset=utf-8"
    if token:
        headers["x-amz-security-token"] = token
    names = sorted(headers)
    canonical = "\n".join(
        [
            "POST",
            u.path or "/",
            u.query,
            "".join(n + ":" + headers[n].strip() + "\n" for n in names),
            ";".join(names),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = "/".join([amz_date[:8], region, service, "aws4_request"])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for part in scope.split("/"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
        key_id,
        scope,
        ";".join(names),
        signature,
    )
    return headers


def logs_call(url, op, payload, region, creds, now):
    body = json.dumps(payload).encode()
    headers = sign(url, body, region, creds, now.strftime("%Y%m%dT%H%M%SZ"), "Logs_20140328." + op)
    try:
        return json.loads(_http(url, "POST", body, headers) or b"{}")
    except urllib.error.HTTPError as exc:
        raise RuntimeError("%s: HTTP %s %s" % (op, exc.code, exc.read(300).decode("utf-8", "replace"))) from None


def endpoint(service, region, partition):
    return "https://%s.%s.%s/" % (service, region, "amazonaws.com.cn" if partition == "aws-cn" else "amazonaws.com")


def publish(name, region, partition, value, now):
    if ENV("MLREAPER_DRY"):
        print(json.dumps({"NotebookInstanceName": name, "region": region, "value": value}))
    elif CHANNEL == "logs":
        send_sample(name, region, partition, value, now)
    else:
        put_metric(name, region, partition, value, now)


def put_metric(name, region, partition, value, now):
    """The contract's metric: MLReaper/NotebookActivity, NotebookInstanceName=name, 1 or 0."""
    body = urllib.parse.urlencode(
        [
            ("Action", "PutMetricData"),
            ("Version", "2010-08-01"),
            ("Namespace", NAMESPACE),
            ("MetricData.member.1.MetricName", "NotebookActivity"),
            ("MetricData.member.1.Value", str(value)),
            ("MetricData.member.1.Unit", "Count"),
            ("MetricData.member.1.Dimensions.member.1.Name", "NotebookInstanceName"),
            ("MetricData.member.1.Dimensions.member.1.Value", name),
        ]
    ).encode()
    url = CLOUDWATCH or endpoint("monitoring", region, partition)
    headers = sign(url, body, region, credentials(), now.strftime("%Y%m%dT%H%M%SZ"), service="monitoring")
    try:
        _http(url, "POST", body, headers)
    except urllib.error.HTTPError as exc:  # AccessDenied etc.: say which, in the log
        raise RuntimeError("PutMetricData failed: HTTP %s %s" % (exc.code, exc.read(600).decode("utf-8", "replace"))) from None


def send_sample(name, region, partition, value, now):
    """AgentChannel=logs: one event {"notebook": name, "active": value} in stream `name` of LOG_GROUP."""
    url = LOGS or endpoint("logs", region, partition)
    creds = credentials()
    sample = {"timestamp": int(now.timestamp() * 1000), "message": json.dumps({"notebook": name, "active": value})}
    put = {"logGroupName": LOG_GROUP, "logStreamName": name, "logEvents": [sample]}
    try:
        answer = logs_call(url, "PutLogEvents", put, region, creds, now)
    except RuntimeError as exc:
        if "ResourceNotFoundException" not in str(exc):
            raise
        try:  # a new stream (or no log group: said here)
            logs_call(url, "CreateLogStream", {"logGroupName": LOG_GROUP, "logStreamName": name}, region, creds, now)
        except RuntimeError as again:
            if "ResourceAlreadyExistsException" not in str(again):
                raise
        answer = logs_call(url, "PutLogEvents", put, region, creds, now)
    if answer.get("rejectedLogEventsInfo"):
        raise RuntimeError("PutLogEvents: sample rejected %s" % answer["rejectedLogEventsInfo"])


def main():
    now = datetime.now(timezone.utc)
    name, region, partition = notebook_identity()
    jupyter = jupyter_active(now)
    if jupyter is None:
        return 0  # unknown: publish nothing
    gpu, cpu = gpu_busy(), cpu_busy()  # both every run: the CPU sample must stay fresh
    if jupyter or gpu or cpu:
        value = 1
    elif cpu is None:
        print("not published: idle by Jupyter and GPU, CPU unknown", file=sys.stderr)
        return 0
    else:
        value = 0
    try:
        publish(name, region, partition, value, now)
    except (RuntimeError, OSError, ValueError, KeyError) as exc:  # logged, not fatal: no sample = unknown
        where = LOG_GROUP if CHANNEL == "logs" else NAMESPACE + "/NotebookActivity"
        print("sample not sent to %s: %s" % (where, exc), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    time.sleep(int(ENV("MLREAPER_JITTER", "0")))
    sys.exit(main())
