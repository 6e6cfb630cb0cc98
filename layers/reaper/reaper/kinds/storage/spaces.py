"""SageMaker Studio spaces whose storage nobody uses: reported once with their monthly cost, never changed.

A space keeps an EBS volume (`SpaceSettings.SpaceStorageSettings.EbsStorageSettings.EbsVolumeSizeInGb`) that is billed
per GB-month while the space exists, whether or not an app runs in it. Deleting the space deletes that volume and every
file on it, so the reaper only says so: how big, what it costs, who owns it, and the command to delete it oneself.

Reads per sweep and region (docs/kinds/storage.md): ListDomains (none: nothing else is read), ListSpaces and ListApps
for the whole region, 100 a page (ListApps with no filter lists every domain's apps: one listing rather than one per
domain), DescribeSpace only for a space whose ListSpaces summary does not give its storage size, and the tags of
domains, spaces and user profiles from the Resource Groups Tagging API (100 a page).

What AWS says of a space's use (docs/aws-assumptions.md, "Studio spaces left behind"):
  * an app not `Deleted` in ListApps: the space is in use;
  * a `Deleted` app ListApps still lists was shut down within the last 24 hours: AWS deletes an app's metadata 24
    hours after it was shut down (DescribeApp, CreationTime), so a space with none listed ran nothing in that window;
  * older: CloudTrail's `CreateApp` events of the last 90 days (kinds/storage/app_starts.py, one paged LookupEvents
    per sweep and region, read only when a space has no app listed): a space whose app started within StorageIdleWeeks
    is in use; one with none is reported with its last start. Where CloudTrail could not say (refused, failed, or the
    window reaches past what was read), the last use is unknown and the finding says so. DescribeApp's
    `LastUserActivityTimestamp` follows the health checks (docs/aws-assumptions.md, row SP-4) and is gone with the app. The space's own
    `CreationTime` and `LastModifiedTime` must both be StorageIdleWeeks old.

Protection: the space's tags, with its domain's `reaper:exempt`, `reaper:snooze-until` and production `ml:stage`
(a production domain's spaces are production's); the owner is the space's `ml:owner` tag, else its owner user
profile's.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from reaper.aws import pricing
from reaper.aws.clients import Clients
from reaper.aws.faults import is_not_found
from reaper.aws.tagging import tags_by_arn
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.kinds.base import inherit_protection
from reaper.kinds.storage import app_starts
from reaper.kinds.storage.model import KIND, SpaceFacts

PAGE = 100  # ListDomains, ListSpaces, ListApps: MaxResults 1-100 (API_ListSpaces, API_ListApps)
TAG_TYPES = ("sagemaker:domain", "sagemaker:space", "sagemaker:user-profile")
SPACE_PRICE_ROW = "ebs"  # pricing.STUDIO_SPACE_GB_MONTH's row
OWNER_KEY, STAGE_KEY = "ml:owner", "ml:stage"


def studio_spaces(clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
    """Every Studio space of the region, with its apps, size, owner and tags (the rule judges them)."""
    sm = clients("sagemaker")
    domains = _pages(sm, "list_domains", "Domains")
    spaces = _pages(sm, "list_spaces", "Spaces") if domains else []
    if not spaces:
        return []
    apps, recent = apps_by_space(_pages(sm, "list_apps", "Apps"))
    listed = apps.keys() | recent.keys()
    appless = any((str(s["DomainId"]), str(s["SpaceName"])) not in listed for s in spaces)
    starts = app_starts.read(clients("cloudtrail"), now) if appless else app_starts.AppStarts()
    tags = tags_by_arn(clients, list(TAG_TYPES))
    prefix = str(domains[0]["DomainArn"]).split("domain/", 1)[0]
    domain_tags = {str(d["DomainId"]): tags.get(str(d["DomainArn"]), {}) for d in domains}
    out = []
    for s in spaces:
        key = (str(s["DomainId"]), str(s["SpaceName"]))
        size = size_of(s.get("SpaceSettingsSummary"))
        if size is None:
            described = _describe(sm, *key)
            if described is None:  # deleted since it was listed
                continue
            size = size_of(described.get("SpaceSettings"))
        facts = _facts(s, size, apps.get(key, ()), recent.get(key, ()), starts)
        own = tags.get(f"{prefix}space/{key[0]}/{key[1]}", {})
        profile = tags.get(f"{prefix}user-profile/{key[0]}/{facts.owner_profile}", {}) if facts.owner_profile else {}
        merged = with_owner(inherit_protection(own, domain_tags.get(key[0], {}), settings), profile)
        out.append(_resource(s, facts, merged, prefix, clients))
    return out


def _resource(s: Mapping[str, Any], facts: SpaceFacts, tags: dict[str, str], prefix: str, clients: Clients) -> Resource:
    size = f"{facts.size_gib:,} GiB of EBS storage" if facts.size_gib else "EBS storage of a size AWS does not say"
    price = (
        clients.pricer.storage_hourly(pricing.STUDIO_SPACE_GB_MONTH, clients.region, SPACE_PRICE_ROW, facts.size_gib)
        if facts.size_gib
        else None
    )
    created, changed = s.get("CreationTime"), s.get("LastModifiedTime")
    return Resource(
        kind=KIND,
        id=f"{facts.domain_id}/{facts.space_name}",
        arn=f"{prefix}space/{facts.domain_id}/{facts.space_name}",
        region=clients.region,
        state=str(s.get("Status") or "Unknown"),
        tags=tags,
        instance_type=f"Studio space ({size})",
        price=price,  # the shipped copy has no Studio space storage row: unpriced, never $0
        created_at=created if isinstance(created, datetime) else None,
        changed_at=changed if isinstance(changed, datetime) else None,
        facts=facts,
    )


def _facts(
    s: Mapping[str, Any], size: int | None, apps: tuple[str, ...], recent: tuple[str, ...], starts: app_starts.AppStarts
) -> SpaceFacts:
    key = (str(s["DomainId"]), str(s["SpaceName"]))
    owner = (s.get("OwnershipSettingsSummary") or {}).get("OwnerUserProfileName")
    sharing = str((s.get("SpaceSharingSettingsSummary") or {}).get("SharingType") or "")
    return SpaceFacts(
        domain_id=key[0],
        space_name=key[1],
        owner_profile=str(owner) if owner else None,
        shared=sharing == "Shared" or (not sharing and not owner),
        size_gib=size,
        apps=apps,
        recent_apps=recent,
        last_start=starts.last.get(key),
        starts_since=starts.since,
        starts_unread=starts.unread,
    )


def size_of(settings: Mapping[str, Any] | None) -> int | None:
    """`SpaceStorageSettings.EbsStorageSettings.EbsVolumeSizeInGb` of a space's settings (or their ListSpaces summary)."""
    size = (((settings or {}).get("SpaceStorageSettings") or {}).get("EbsStorageSettings") or {}).get("EbsVolumeSizeInGb")
    return int(size) if isinstance(size, int) and size > 0 else None


def apps_by_space(apps: list[dict[str, Any]]) -> tuple[dict[tuple[str, str], tuple[str, ...]], dict[tuple[str, str], tuple[str, ...]]]:
    """({(domain, space): its apps not Deleted}, {(domain, space): its Deleted apps ListApps still lists})."""
    live: dict[tuple[str, str], list[str]] = {}
    gone: dict[tuple[str, str], list[str]] = {}
    for a in apps:
        if not a.get("SpaceName"):
            continue  # a user profile's own app (classic Studio, Canvas): no space's
        key = (str(a["DomainId"]), str(a["SpaceName"]))
        status = str(a.get("Status") or "Unknown")
        (gone if status == "Deleted" else live).setdefault(key, []).append(f"{a.get('AppType')}/{a.get('AppName')} ({status})")
    return {k: tuple(v) for k, v in live.items()}, {k: tuple(v) for k, v in gone.items()}


def with_owner(own: dict[str, str], profile: dict[str, str]) -> dict[str, str]:
    """The space's tags, with `ml:owner` from its owner user profile when the space has none."""
    if any(k.strip().lower() == OWNER_KEY for k in own):
        return own
    found = next((v for k, v in profile.items() if k.strip().lower() == OWNER_KEY and v.strip()), None)
    return {**own, OWNER_KEY: found} if found else own


def _describe(sm: Any, domain_id: str, space: str) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = sm.describe_space(DomainId=domain_id, SpaceName=space)
    except ClientError as exc:
        if is_not_found(exc):  # ResourceNotFound
            return None
        raise
    return found


def _pages(sm: Any, operation: str, key: str) -> list[dict[str, Any]]:
    return [item for page in sm.get_paginator(operation).paginate(PaginationConfig={"PageSize": PAGE}) for item in page.get(key, [])]
