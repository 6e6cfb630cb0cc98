"""Demo scene: endpoints of every type and state; after the sweep, the deleted ones come back."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import boto3

from reaper.core.errors import ReaperError
from reaper.kinds.endpoint import restore as endpoint_restore
from reaper.record.runtime import Runtime
from reaper.restore import run as restore
from reaper_devkit import seed_endpoint as se
from reaper_devkit.moto_ext.sagemaker_inference import script_status

KIND = "endpoint"
DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "chat"}


def seed(session: boto3.session.Session, now: datetime) -> dict[str, str]:
    sm, cw, aas = session.client("sagemaker"), session.client("cloudwatch"), session.client("application-autoscaling")
    se.classic(sm, "ep-llm-dev", DEV, instance_type="ml.p3.2xlarge")
    se.autoscale(aas, "ep-llm-dev", minimum=1, maximum=2)
    se.components(sm, "ep-chat-dev-ic", {"ep-chat-llama": 2, "ep-chat-embed": 1}, DEV, instance_type="ml.g4dn.xlarge")
    se.asynchronous(sm, "ep-batch-dev-async", DEV, instance_type="ml.m5.xlarge")
    se.classic(sm, "ep-search-dev", DEV, instance_type="ml.g4dn.xlarge")
    se.invocations(cw, "ep-search-dev", now, [0, 14, 9])
    se.classic(sm, "ep-fresh-dev", DEV, instance_type="ml.g4dn.xlarge")
    se.classic(sm, "ep-ranker-prod", {"ml:owner": "U024BE7LH", "ml:stage": "prod"}, instance_type="ml.g4dn.xlarge")
    se.classic(sm, "ep-exempt-dev", {**DEV, "reaper:exempt": "true"}, instance_type="ml.m5.large")
    se.classic(sm, "ep-orphan-dev", DEV, instance_type="ml.m5.large")
    sm.delete_model(ModelName="ep-orphan-dev-model-alltraffic")
    for name in ("ep-llm-dev", "ep-chat-dev-ic", "ep-batch-dev-async", "ep-search-dev", "ep-ranker-prod", "ep-exempt-dev", "ep-orphan-dev"):
        se.age(name, now, 190)
    se.age("ep-fresh-dev", now, 25)
    return {
        "ep-llm-dev": "deleted after its restore record (GPU, 0 invocations in 3 h); comes back with `reaper restore`",
        "ep-chat-dev-ic": "inference components to 0 copies; managed scaling releases the instances",
        "ep-batch-dev-async": "async: autoscaling minimum 0 and a wake-on-backlog policy",
        "ep-search-dev": "kept: 23 invocations in the last 2 h",
        "ep-fresh-dev": "kept: InService for 25 min only, no data is not yet evidence",
        "ep-ranker-prod": "exempt: production is notify-only",
        "ep-exempt-dev": "exempt: tagged reaper:exempt=true",
        "ep-orphan-dev": "error: its model was deleted, so it could not come back: refused",
    }


def after_sweep(rt: Runtime, session: boto3.session.Session, now: datetime, say: Callable[[str], None]) -> None:
    sm = session.client("sagemaker")
    script_status("ep-llm-dev", ["Creating", "Creating", "Creating", "InService"])  # AWS takes minutes; here, seconds
    saved = endpoint_restore.sleep
    endpoint_restore.sleep = lambda _s: __import__("time").sleep(0.3)
    try:
        for name in ("ep-llm-dev", "ep-chat-dev-ic"):
            say(f"$ reaper restore {name}")
            try:
                say(restore.restore(rt, name, datetime.now(UTC), lambda line: say(f"  … {line}")))
            except ReaperError as exc:
                say(f"reaper: {exc}")
    finally:
        endpoint_restore.sleep = saved
    desc = sm.describe_endpoint(EndpointName="ep-llm-dev")
    tags = {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=desc["EndpointArn"])["Tags"]}
    say(f"ep-llm-dev is {desc['EndpointStatus']} with config {desc['EndpointConfigName']} and tags {tags}")
