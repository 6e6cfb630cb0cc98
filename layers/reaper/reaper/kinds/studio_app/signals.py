"""The activity SageMaker records for each app that may be acted on: one DescribeApp each.

Not described (so no call): apps of types whose activity AWS does not record, apps that are
exempt, snoozed or badly tagged (nothing would be done to them), and apps younger than their idle
window (they cannot have been idle for it). Production apps are described: they are notify-only,
and their owners are told what would be done (the message is posted once a day; the read is one
call per production app per sweep). There is no batch read of app activity.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import is_not_found
from reaper.core.model import Resource
from reaper.core.policy import read_tags, screen
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.studio_app.model import ACTIVITY_TRACKED, KIND, AppActivity, AppFacts


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, AppActivity]:
    sm = clients("sagemaker")
    out: dict[str, AppActivity] = {}
    for r in resources:
        if not _worth_describing(r, settings, now):
            continue
        f = r.facts_as(AppFacts)
        owner = {"SpaceName": f.space} if f.space else {"UserProfileName": f.user_profile}
        try:
            d = sm.describe_app(DomainId=f.domain_id, AppType=f.app_type, AppName=f.app_name, **owner)
        except ClientError as exc:
            if is_not_found(exc):
                continue  # deleted since the listing: no evidence, so it is kept
            raise
        out[r.id] = AppActivity(
            status=d.get("Status", "Unknown"),
            created=d.get("CreationTime"),
            last_user_activity=d.get("LastUserActivityTimestamp"),
            last_health_check=d.get("LastHealthCheckTimestamp"),
        )
    return out


def _worth_describing(r: Resource, settings: Settings, now: datetime) -> bool:
    if not isinstance(r.facts, AppFacts) or r.state != "InService" or r.facts.app_type not in ACTIVITY_TRACKED:
        return False
    view = read_tags(r.tags, settings)
    if screen(view, settings, now) is not None:
        return False
    window = view.idle_minutes or settings.idle_for(KIND)
    return r.created_at is None or as_utc(now) - as_utc(r.created_at) >= timedelta(minutes=window)
