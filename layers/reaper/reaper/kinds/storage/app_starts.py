"""When each Studio space's apps last started: CloudTrail's `CreateApp` management events (docs/kinds/storage.md).

ListApps forgets a shut-down app after 24 hours, so a space used last week and shut down since looks unused. CloudTrail
records every `CreateApp` call as a management event and LookupEvents reads the region's last 90 days with no trail set
up (docs/aws-assumptions.md, "Studio spaces: when their apps last started"). One paged lookup per sweep and region
serves every space: LookupEvents takes one lookup attribute, so it filters `EventName=CreateApp` and each event's
`requestParameters` (its domain and space) say whose it is. An app started with a user profile and no space (classic
Studio, Canvas) is no space's. A call CloudTrail records with an error still counts: someone tried to use the space.

The lookup itself (paging, the 90 days, the page limit, a refused lookup) is reaper.aws.cloudtrail's. When it stops
short, the read covers the time back to the oldest event read; when it fails or is refused, or an event cannot be
read, it covers nothing and the spaces' last use is unknown (coverage `space-last-use-unknown`), never taken as idle.
https://docs.aws.amazon.com/awscloudtrail/latest/APIReference/API_LookupEvents.html
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reaper.aws import cloudtrail
from reaper.core.timeutil import as_utc

EVENT = "CreateApp"

Key = tuple[str, str]  # (domain id, space name)


@dataclass(frozen=True)
class AppStarts:
    """The newest `CreateApp` read for each space, and how far back the read reaches (None: it was not read)."""

    last: dict[Key, datetime] = field(default_factory=dict)
    since: datetime | None = None
    unread: str | None = None  # why nothing is known: "CloudTrail LookupEvents failed (AccessDeniedException)"


def _param(params: dict[str, object], name: str) -> str | None:
    # CloudTrail writes SageMaker's request parameters in camelCase ("domainId"); the API's own case is taken too
    value = params.get(name[0].lower() + name[1:], params.get(name))
    return value if isinstance(value, str) and value else None


def space_of(event: cloudtrail.Event) -> tuple[Key | None, bool]:
    """(the (domain, space) a CreateApp event started an app in, or None; whether the event could be read)."""
    params = cloudtrail.request_parameters(event)
    if params is None:
        return None, False
    domain, space = _param(params, "DomainId"), _param(params, "SpaceName")
    if domain is None:
        return None, False
    return ((domain, space) if space else None), True  # a user profile's own app: no space's


def read(trail: Any, now: datetime) -> AppStarts:
    """One paged lookup of the region's CreateApp events of the last 90 days, newest first."""
    last: dict[Key, datetime] = {}
    oldest = now
    lookup = cloudtrail.Lookup(trail, EVENT, now - cloudtrail.KEPT, now)
    try:
        for event in lookup:
            key, readable = space_of(event)
            when = event.get("EventTime")
            if not readable or not isinstance(when, datetime):
                return AppStarts(unread="a CloudTrail CreateApp event could not be read")
            when = as_utc(when)
            oldest = min(oldest, when)
            if key is not None and (key not in last or when > last[key]):
                last[key] = when
    except cloudtrail.TrailUnreadable as exc:
        return AppStarts(unread=str(exc))
    if lookup.whole:
        return AppStarts(last, lookup.start)
    return AppStarts(last, oldest)  # stopped short: what is older than the oldest event read is unknown
