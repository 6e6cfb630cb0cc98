"""Every Provisioned Throughput in the region, with its tags.

ListProvisionedModelThroughputs returns everything the decision needs (units, status, commitment
and its expiry, model): no Get per resource. Tags come from bedrock:ListTagsForResource, one call
per Provisioned Throughput: the Resource Groups Tagging API's list of supported services does not
name Bedrock Provisioned Throughput (docs/aws-assumptions.md), and an account holds few of them
(each model unit is a quota AWS grants on request).

Price: AWS's Price List holds no entry the reaper can read for a model-unit hour (docs/prices.md), so a
Provisioned Throughput is unpriced unless the admin sets BedrockModelUnitHourlyUsd, an explicit override
whose figures say they are the admin's (Price source "admin override (BedrockModelUnitHourlyUsd)").
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict, cast

from reaper.aws.clients import Clients
from reaper.core.model import Resource
from reaper.core.price import ADMIN_OVERRIDE, Price
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.bedrock_pt.model import KIND, PtFacts
from reaper.kinds.bedrock_pt.settings import BedrockPtSettings

OVERRIDE_SOURCE = f"{ADMIN_OVERRIDE} (BedrockModelUnitHourlyUsd)"


class ProvisionedModelSummary(TypedDict, total=False):
    """The members read of
    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_ProvisionedModelSummary.html"""

    provisionedModelName: str
    provisionedModelArn: str
    modelArn: str
    foundationModelArn: str
    modelUnits: int
    desiredModelUnits: int
    status: str
    commitmentDuration: str
    commitmentExpirationTime: datetime
    creationTime: datetime
    lastModifiedTime: datetime


def discover(clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
    bedrock = clients("bedrock")
    found = [
        summary
        for page in bedrock.get_paginator("list_provisioned_model_throughputs").paginate(PaginationConfig={"PageSize": 1000})
        for summary in cast(list[ProvisionedModelSummary], page.get("provisionedModelSummaries", []))
    ]
    return [to_resource(clients.region, s, tags_of(bedrock, s["provisionedModelArn"]), settings) for s in found]


def tags_of(bedrock: Any, arn: str) -> dict[str, str]:
    return {t["key"]: t.get("value", "") for t in bedrock.list_tags_for_resource(resourceARN=arn).get("tags", [])}


def to_resource(region: str, s: ProvisionedModelSummary, tags: dict[str, str], settings: Settings) -> Resource:
    units = int(s.get("modelUnits") or 0)
    price = settings.of(BedrockPtSettings).model_unit_hourly_usd
    created = as_utc(s["creationTime"])
    expires = s.get("commitmentExpirationTime")
    return Resource(
        kind=KIND,
        id=str(s["provisionedModelName"]),
        arn=str(s["provisionedModelArn"]),
        region=region,
        state=str(s.get("status", "unknown")),
        tags=tags,
        instance_type=str(s.get("foundationModelArn", "")).rsplit("/", 1)[-1] or None,
        instance_count=units,
        price=Price(round(units * price, 4), OVERRIDE_SOURCE) if price > 0 and units > 0 else None,
        created_at=created,
        changed_at=as_utc(s["lastModifiedTime"]) if s.get("lastModifiedTime") else created,
        facts=PtFacts(
            name=str(s["provisionedModelName"]),
            model_arn=str(s.get("modelArn", "")),
            foundation_model_arn=str(s.get("foundationModelArn", "")),
            model_units=units,
            desired_model_units=int(s.get("desiredModelUnits") or units),
            commitment=s.get("commitmentDuration") or None,
            commitment_expires=as_utc(expires) if isinstance(expires, datetime) else None,
            created_at=created,
            last_modified=as_utc(s["lastModifiedTime"]) if s.get("lastModifiedTime") else created,
            unit_hourly_usd=price,
        ),
    )
