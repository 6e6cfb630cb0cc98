"""What a sweep would take on AWS, and what the reaper itself costs to run, from a sweep's call counts.

Latencies are stated, not measured: 100 ms per list/describe/search call, 300 ms per GetMetricData
and FilterLogEvents (they scan data), calls made one after another as the code makes them. Prices are
public list prices, us-east-1, x86, without free tiers, as of 2026-12:
  CloudWatch  https://aws.amazon.com/cloudwatch/pricing/
              custom metric $0.30 per metric-month (first 10,000), PutMetricData $0.01 per 1,000
              requests, GetMetricData $0.01 per 1,000 metrics requested, other API calls $0.01 per 1,000.
              Logs (Standard class): ingestion $0.50 per GB, storage $0.03 per GB-month; the Logs tab
              prices no request, so PutLogEvents and FilterLogEvents cost nothing beyond the bytes.
  Lambda      https://aws.amazon.com/lambda/pricing/  $0.0000166667 per GB-second, $0.20 per 1M requests.
  DynamoDB    https://aws.amazon.com/dynamodb/pricing/on-demand/  $0.625 per 1M write request units,
              $0.125 per 1M read request units.
  SQS         https://aws.amazon.com/sqs/pricing/  $0.40 per 1M standard requests.
SageMaker, EC2, FSx and Resource Groups Tagging read APIs have no per-request charge; nor has
sagemaker:CreatePresignedNotebookInstanceUrl, assumed: https://aws.amazon.com/sagemaker/pricing/ prices
instances, storage and data processing, no API request (not checked against the page's text).

JupyterReads (docs/jupyter-reads.md) reads each notebook's Jupyter server from the function: one
CreatePresignedNotebookInstanceUrl, the hop, three GETs. Stated like the other latencies: 100 ms per
HTTP request (a new connection each: the reader keeps none), the readings WORKERS at a time, all of
them within BUDGET (reaper.kinds.notebook.notebook_jupyter), so a sweep's reading phase lasts
ceil(reads / WORKERS) x (the reading's calls and requests at their latencies), and never longer than
BUDGET: however slow the servers (each request may take REQUEST_TIMEOUT), the phase costs the function
at most BUDGET seconds a sweep. Lambda bills the wall time, so that phase is GB-s like the rest.
The bytes the readings receive are measured, not priced (see jupyter_data_bound).
"""

from __future__ import annotations

import math
from typing import Any

from reaper.kinds.notebook import notebook_jupyter

JUPYTER_BUDGET_S = notebook_jupyter.BUDGET  # seconds for every Jupyter reading of a sweep
JUPYTER_WORKERS = notebook_jupyter.WORKERS  # readings at a time
PRESIGN = notebook_jupyter.PERMISSION  # sagemaker:CreatePresignedNotebookInstanceUrl

LATENCY_S = {"cloudwatch:GetMetricData": 0.3, "logs:FilterLogEvents": 0.3}
DEFAULT_LATENCY_S = 0.1
JUPYTER_HTTP_S = 0.1  # stated: one HTTP request of a Jupyter reading (the hop, a redirect, an API GET)
CONCURRENT = {PRESIGN}  # made inside the Jupyter reading phase, WORKERS at a time: timed by jupyter_phase_seconds
EGRESS_GB = 0.09  # EC2 data transfer out to the internet, first 10 TB a month: only the bound of jupyter_data_bound

CW_METRIC_MONTH = 0.30
CW_PUT_PER_1000 = 0.01
CW_GET_METRICS_PER_1000 = 0.01
CW_API_PER_1000 = 0.01  # ListMetrics and other CloudWatch API requests
LOGS_INGEST_GB = 0.50
LOGS_STORE_GB_MONTH = 0.03
LAMBDA_GB_S = 0.0000166667
LAMBDA_REQUEST = 0.20 / 1_000_000
DDB_WRITE = 0.625 / 1_000_000
DDB_READ = 0.125 / 1_000_000
SQS_REQUEST = 0.40 / 1_000_000

MEMORY_GB = 0.5  # template.yaml Globals MemorySize 512
TIMEOUT_S = 300  # template.yaml Globals Timeout
HOURS_PER_MONTH = 730
# template.yaml schedule defaults (sweeps a month = 30 days / rate)
SWEEPS_PER_MONTH = {
    "notebook": 30 * 24 * 4,
    "endpoint": 30 * 24 * 4,
    "studio-app": 30 * 24 * 4,
    "ec2": 30 * 24 * 4,
    "training-job": 30 * 24 * 12,
    "fsx": 30 * 24,
    "capacity": 30 * 24,  # CapacitySchedule: rate(1 hour)
    "bedrock-pt": 30 * 4,  # BedrockPtSchedule rate(6 hours)
    "mlflow": 30 * 4,  # MlflowSchedule rate(6 hours)
    "storage": 30 * 4,  # StorageSchedule rate(6 hours)
}
AGENT_PUTS_PER_MONTH = 30 * 24 * 12  # the notebook agent sends a sample every 5 minutes (CONTRACT.md)
# One sample as Logs counts it: the message in UTF-8 plus 26 bytes per event (the size PutLogEvents
# batches are measured in: https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutLogEvents.html).
# {"notebook": NAME, "active": 0} is 92 bytes for the longest name (63 characters): 118, rounded up.
AGENT_SAMPLE_BYTES = 120
AGENT_LOG_RETENTION_DAYS = 14  # template.yaml NotebookActivityLogGroup (a week's idle window, and a margin)
GB = 1024**3


def projected_seconds(calls: dict[str, int]) -> float:
    """The sweep's calls one after another; those of the concurrent Jupyter phase are timed apart."""
    return sum(n * LATENCY_S.get(op, DEFAULT_LATENCY_S) for op, n in calls.items() if op not in CONCURRENT)


def jupyter_reading_seconds(calls_per_reading: float, requests_per_reading: float) -> float:
    """One notebook's Jupyter reading on AWS: its SageMaker calls and its HTTP requests, one after another."""
    return calls_per_reading * DEFAULT_LATENCY_S + requests_per_reading * JUPYTER_HTTP_S


def jupyter_phase_seconds(reads: int, reading_s: float) -> float:
    """A sweep's Jupyter reading phase: `reads` readings, WORKERS at a time, cut at BUDGET (the rest are not reached)."""
    return min(JUPYTER_BUDGET_S, math.ceil(reads / JUPYTER_WORKERS) * reading_s) if reads else 0.0


def jupyter_reach(reading_s: float) -> int:
    """How many notebooks one sweep reads before BUDGET at `reading_s` each (more are `jupyter-not-reached`)."""
    return int(JUPYTER_BUDGET_S // reading_s) * JUPYTER_WORKERS if reading_s > 0 else 0


def jupyter_data_bound(reads: int, bytes_per_reading: float, kind: str = "notebook") -> dict[str, float]:
    """The readings' bytes a month (received by the function) and what they would cost at the internet
    egress rate: a bound shown beside the bill, not a line of it (the functions run outside any VPC, and the
    price pages cited above name no charge for what a function receives from SageMaker's notebook proxy)."""
    gb = reads * SWEEPS_PER_MONTH[kind] * bytes_per_reading / GB
    return {"gb_month": round(gb, 3), "usd_at_egress_rate": round(gb * EGRESS_GB, 4)}


# template.yaml schedule defaults, in minutes: a full sweep that comes while a chain of parts is still
# going on defers to it (reaper.sweep.chain), so a chain longer than this delays the next full sweep
SWEEP_INTERVAL_MIN = {"notebook": 15, "endpoint": 15, "studio-app": 15, "ec2": 15, "training-job": 5, "fsx": 60}
CONTINUATION_DELAY_S = 60  # reaper.record.chain_record.DELAY: the next part is invoked a minute after one ends


def parts(projected_s: float, n: int, target_n: int = 10_000, per_part: float = TIMEOUT_S / 2) -> dict[str, Any]:
    """A sweep of `target_n` (scaled linearly from `n`) in parts of at most `per_part` seconds (half the
    timeout: a margin for the stated latencies): how many invocations, and when the last one starts (each
    part then a minute's wait)."""
    at_target = projected_s * target_n / max(n, 1)
    count = max(1, math.ceil(at_target / per_part))
    last_starts_s = (count - 1) * (per_part + CONTINUATION_DELAY_S)
    return {
        "n": target_n,
        "projected_s": round(at_target, 1),
        "parts": count,
        "last_part_starts_min": round(last_starts_s / 60, 1),
        "chain_min": round((last_starts_s + min(per_part, at_target - (count - 1) * per_part)) / 60, 1),
    }


def fits_interval(kind: str, plan: dict[str, Any]) -> bool:
    """Is the whole chain done before the next full sweep is due? When not, nothing is lost: that
    sweep defers to the chain (reaper.sweep.chain) and full sweeps come every chain-plus-interval."""
    return bool(plan["chain_min"] < SWEEP_INTERVAL_MIN.get(kind, 15))


def monthly_bill(
    kind: str,
    n: int,
    calls: dict[str, int],
    metric_queries: int,
    verdicts: dict[str, int],
    agent_channel: str = "metric",
    agents: int | None = None,
    jupyter_seconds: float = 0.0,
) -> dict[str, float]:
    """The reaper's own bill per month for `n` resources of `kind`, in USD, by line.

    Per sweep: GetMetricData by metrics requested, other CloudWatch calls by request, Lambda by the
    projected duration. The action log and queue: each act/warn/error outcome claims its message
    (one conditional write), records itself (one write) and is queued (one SQS request per 10);
    acted resources leave, so only findings are counted, per sweep, as an upper bound. A change in
    enforce also writes its record ahead (two writes, pipeline._write_ahead), once per change, not per
    sweep: a stopped resource is no finding in the sweeps after it, so the bound above covers it.
    Notebooks: `agents` of the `n` run the activity agent (default: all); `jupyter_seconds` is a sweep's
    Jupyter reading phase (JupyterReads, jupyter_phase_seconds), billed as Lambda GB-s on its own line.
    """
    sweeps = SWEEPS_PER_MONTH[kind]
    seconds = projected_seconds(calls)
    findings = sum(verdicts.get(v, 0) for v in ("act", "warn", "error"))
    other_cw = sum(c for op, c in calls.items() if op.startswith("cloudwatch:") and op != "cloudwatch:GetMetricData")
    bill = {
        "getmetricdata": sweeps * metric_queries * CW_GET_METRICS_PER_1000 / 1000,
        "cloudwatch_api": sweeps * other_cw * CW_API_PER_1000 / 1000,
        "lambda": sweeps * (seconds * MEMORY_GB * LAMBDA_GB_S + LAMBDA_REQUEST),
        "dynamodb": sweeps * findings * 2 * DDB_WRITE,
        "sqs": sweeps * (findings / 10) * SQS_REQUEST,
    }
    if kind == "notebook" and agent_channel == "logs":  # AgentChannel=logs: a CloudWatch Logs sample every 5 min
        ingested = (n if agents is None else agents) * AGENT_PUTS_PER_MONTH * AGENT_SAMPLE_BYTES
        bill["agent_logs_ingestion"] = ingested / GB * LOGS_INGEST_GB
        bill["agent_logs_storage"] = ingested * AGENT_LOG_RETENTION_DAYS / 30 / GB * LOGS_STORE_GB_MONTH
    elif kind == "notebook":  # AgentChannel=metric (the default, the contract): one custom metric, a put every 5 min
        bill.update(agent_metric_bill(n if agents is None else agents))
    if jupyter_seconds:
        bill["jupyter_reads_lambda"] = sweeps * jupyter_seconds * MEMORY_GB * LAMBDA_GB_S
    bill["total"] = sum(bill.values())
    return {k: round(v, 4) for k, v in bill.items()}


def agent_metric_bill(n: int) -> dict[str, float]:
    """What the agent costs per month for `n` notebooks publishing the contract's custom metric
    (AgentChannel=metric; with logs, each notebook still running an agent installed before, until its next start)."""
    return {"agent_metric": n * CW_METRIC_MONTH, "agent_puts": round(n * AGENT_PUTS_PER_MONTH * CW_PUT_PER_1000 / 1000, 4)}


def per_thousand(bill: dict[str, float], n: int) -> dict[str, float]:
    return {k: round(v * 1000 / max(n, 1), 2) for k, v in bill.items()}


def idle_spend_found(outcomes: list[Any]) -> float:
    """Monthly list-price cost of what the sweep found reapable (act), if it ran all month: what the
    kind saves at most per sweep's findings (actual savings depend on how long each would have idled)."""
    hourly = sum(o.resource.hourly_usd or 0.0 for o in outcomes if o.verdict.value == "act")
    return round(hourly * HOURS_PER_MONTH, 2)
