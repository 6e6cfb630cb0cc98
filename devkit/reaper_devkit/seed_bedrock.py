"""Bedrock Provisioned Throughput for tests, demos and the bench (moto_ext/bedrock_pt)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reaper_devkit.moto_ext.bedrock_pt import backdate

ACCOUNT = "123456789012"
MODEL = "anthropic.claude-v2"


def provisioned(
    bedrock: Any,
    name: str,
    created: datetime,
    *,
    units: int = 1,
    commitment: str | None = None,
    expires: datetime | None = None,
    tags: dict[str, str] | None = None,
    model: str = MODEL,
) -> str:
    """A Provisioned Throughput InService since `created` (a committed one's term ending at `expires`); its ARN."""
    params: dict[str, Any] = {"modelUnits": units, "provisionedModelName": name, "modelId": model}
    if commitment:
        params["commitmentDuration"] = commitment
    if tags:
        params["tags"] = [{"key": k, "value": v} for k, v in tags.items()]
    arn: str = bedrock.create_provisioned_model_throughput(**params)["provisionedModelArn"]
    backdate(ACCOUNT, bedrock.meta.region_name, name, created, expires)
    return arn


def invocations(cw: Any, arn: str, at: datetime, count: float = 12.0) -> None:
    """`count` invocations of the Provisioned Throughput in the hour of `at`, as AWS/Bedrock publishes them."""
    cw.put_metric_data(
        Namespace="AWS/Bedrock",
        MetricData=[{"MetricName": "Invocations", "Dimensions": [{"Name": "ModelId", "Value": arn}], "Timestamp": at, "Value": count}],
    )


def seen_before(cw: Any, arn: str, now: datetime, days: float = 7.5) -> None:
    """An hour of requests `days` ago: its series is listed by ListMetrics (data within two weeks), and
    the default 7-day window holds none, so it is idle and judged as such (docs/kinds/bedrock-pt.md)."""
    invocations(cw, arn, now - timedelta(days=days), count=3.0)


def exists(bedrock: Any, name: str) -> bool:
    return any(s["provisionedModelName"] == name for s in bedrock.list_provisioned_model_throughputs()["provisionedModelSummaries"])


def fleet(bedrock: Any, cw: Any, now: datetime) -> dict[str, str]:
    """The issue's account: an idle PT without commitment (its series seen 7.5 days ago), an idle committed
    one, one renewing in 5 days, a busy one, a new one, an exempt and a production one. {name: arn}."""
    old = now - timedelta(days=8)
    owner = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
    arns = {
        "pt-idle": provisioned(bedrock, "pt-idle", old, units=2, tags={**owner, "ml:project": "chat"}),
        "pt-committed": provisioned(bedrock, "pt-committed", old, commitment="SixMonths", expires=now + timedelta(days=60), tags=owner),
        "pt-renewing": provisioned(
            bedrock, "pt-renewing", now - timedelta(days=25), commitment="OneMonth", expires=now + timedelta(days=5), tags=owner
        ),
        "pt-busy": provisioned(bedrock, "pt-busy", old, tags=owner),
        "pt-new": provisioned(bedrock, "pt-new", now - timedelta(days=2), tags=owner),
        "pt-exempt": provisioned(bedrock, "pt-exempt", old, tags={**owner, "reaper:exempt": "true"}),
        "pt-prod": provisioned(bedrock, "pt-prod", old, tags={"ml:owner": "ana@example.com", "ml:stage": "prod"}),
    }
    invocations(cw, arns["pt-busy"], now - timedelta(hours=30))
    seen_before(cw, arns["pt-idle"], now)
    return arns
