"""Every MLflow tracking server in the region: listed (100 a page), tags in bulk, each described once.

ListMlflowTrackingServers' summaries carry status, IsActive and times but neither size nor tags
(https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_TrackingServerSummary.html): tags come
from the Resource Groups Tagging API (100 a call), the size from DescribeMlflowTrackingServer, one per
server, and only for a running server (the one a price matters for).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from reaper.aws import pricing
from reaper.aws.clients import Clients
from reaper.aws.faults import is_not_found
from reaper.aws.tagging import tags_by_arn
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.kinds.mlflow import DECLARATION, RUNNING
from reaper.kinds.mlflow.model import KIND, PRICE_SECTION, ServerFacts


def describe(sm: Any, name: str) -> dict[str, Any] | None:
    """DescribeMlflowTrackingServer, or None when there is none of that name."""
    try:
        found: dict[str, Any] = sm.describe_mlflow_tracking_server(TrackingServerName=name)
    except ClientError as exc:
        if is_not_found(exc):
            return None
        raise
    return found


def discover(clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
    sm = clients("sagemaker")
    tags = tags_by_arn(clients, list(DECLARATION.tag_resource_types))
    out: list[Resource] = []
    for page in sm.get_paginator("list_mlflow_tracking_servers").paginate(PaginationConfig={"PageSize": 100}):
        for s in page.get("TrackingServerSummaries", []):
            status = str(s.get("TrackingServerStatus", "unknown"))
            desc = describe(sm, s["TrackingServerName"]) if status in RUNNING else None
            out.append(to_resource(clients.region, {**s, **(desc or {})}, tags.get(s["TrackingServerArn"], {})))
    return out


def discover_named(clients: Clients, settings: Settings, now: datetime, names: frozenset[str]) -> list[Resource]:
    """Just the named servers (an event's, a button's): one Describe and one ListTags each."""
    sm = clients("sagemaker")
    out: list[Resource] = []
    for name in sorted(names):
        desc = describe(sm, name)
        if desc is not None:
            arn = desc["TrackingServerArn"]
            found = {t["Key"]: t["Value"] for page in sm.get_paginator("list_tags").paginate(ResourceArn=arn) for t in page.get("Tags", [])}
            out.append(to_resource(clients.region, desc, found))
    return out


def to_resource(region: str, s: dict[str, Any], tags: dict[str, str]) -> Resource:
    size = s.get("TrackingServerSize")
    return Resource(
        kind=KIND,
        id=str(s["TrackingServerName"]),
        arn=str(s["TrackingServerArn"]),
        region=region,
        state=str(s.get("TrackingServerStatus", "unknown")),
        tags=tags,
        instance_type=size,
        # the shipped price list has no tracking-server rows today: unpriced, never $0 (docs/kinds/mlflow.md)
        price=pricing.shipped(PRICE_SECTION, region, size) if size else None,
        created_at=s.get("CreationTime"),
        changed_at=s.get("LastModifiedTime"),
        facts=ServerFacts(
            name=str(s["TrackingServerName"]),
            size=size,
            is_active=s.get("IsActive"),
            mlflow_version=s.get("MlflowVersion"),
            url=s.get("TrackingServerUrl"),
            created_at=s.get("CreationTime"),
            last_modified=s.get("LastModifiedTime"),
        ),
    )
