"""The storage decision, pure: (backup or volume, signal, tags, settings, now) -> Decision.

A reaper-made FSx backup is deleted only when the admin set a retention (StorageBackupRetentionDays),
it is older than that, its file system is gone, and it is not tagged `reaper:keep=true`.
An ML volume attached to nothing, made at least StorageIdleWeeks ago, is deleted in two phases:
  phase 1  snapshot it (after the usual warning and grace);
  phase 2  delete it, once that snapshot is `completed` and the grace has passed since it began.
A stopped box's volume is only reported. Anything else keeps it, with the reason.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reaper.core.model import HOURS_PER_MONTH, Decision, Resource, Verdict
from reaper.core.policy import TagView, is_production
from reaper.core.settings import Settings
from reaper.core.timeutil import human_duration, iso
from reaper.kinds.storage import ActionName
from reaper.kinds.storage.model import (
    KIND,
    SNAPSHOT_TAG,
    BackupFacts,
    ImportedModelFacts,
    OwnSnapshotFacts,
    SnapshotState,
    SpaceFacts,
    StorageSignal,
    VolumeFacts,
)
from reaper.kinds.storage.settings import StorageSettings


def monthly(resource: Resource) -> str:
    """What it costs a month, or that the price list has no price for it (never $0)."""
    if resource.price is None:
        return "unpriced (no storage price in the shipped copy of AWS's price list)"
    return f"${resource.price.usd * HOURS_PER_MONTH:,.2f}/month ({resource.price.label})"


def _evidence(resource: Resource, **more: Any) -> dict[str, Any]:
    usd = None if resource.price is None else round(resource.price.usd * HOURS_PER_MONTH, 2)
    return {"what": resource.instance_type, "monthly_usd": usd, "price_source": resource.price.label if resource.price else None, **more}


def decide(resource: Resource, signal: StorageSignal | None, view: TagView, settings: Settings, now: datetime) -> Decision:
    if isinstance(resource.facts, BackupFacts):
        return decide_backup(resource, resource.facts, view, settings, now)
    if isinstance(resource.facts, ImportedModelFacts):
        return _imported_model(resource, now)
    if isinstance(resource.facts, SpaceFacts):
        return decide_space(resource, resource.facts, view, settings, now)
    if isinstance(resource.facts, OwnSnapshotFacts):
        return decide_own_snapshot(resource, resource.facts, (signal or StorageSignal()).recorded, now)
    facts = resource.facts_as(VolumeFacts)
    if facts.instance_id is not None:
        return _stopped_box(resource, facts, now)
    return decide_volume(resource, facts, (signal or StorageSignal()).snapshot, settings, now)


def decide_backup(resource: Resource, facts: BackupFacts, view: TagView, settings: Settings, now: datetime) -> Decision:
    age = now - resource.created_at if resource.created_at else None
    evidence = _evidence(resource, source_fs=facts.source_fs, age_days=None if age is None else round(age / timedelta(days=1), 1))

    def keep(reason: str) -> Decision:
        return Decision(Verdict.KEEP, f"{reason} ({monthly(resource)})", evidence=evidence)

    if resource.state != "AVAILABLE":
        return keep(f"{resource.state}: only AVAILABLE backups are candidates")
    if facts.source_exists:
        return keep(f"its file system {facts.source_fs} still exists: the fsx kind's backup, kept")
    if view.keep:
        return keep(f"tagged {settings.tag('keep')}=true: never deleted by a retention")
    retention = settings.of(StorageSettings).storage_backup_retention_days
    if retention is None:
        return keep("the reaper's backup of a deleted file system, kept: StorageBackupRetentionDays is not set (the default keeps them)")
    if age is None or age < timedelta(days=retention):
        made = "at an unknown time" if age is None else f"{human_duration(age)} ago"
        return keep(f"made {made}, within the retention of {retention} d")
    return Decision(
        Verdict.ACT,
        f"the reaper's backup of {facts.source_fs} (deleted), made {human_duration(age)} ago, past the retention of {retention} d "
        f"({monthly(resource)}); once deleted, `reaper restore {facts.source_fs}` can no longer bring that file system back — "
        f"tag {settings.tag('keep')}=true to keep it",
        action=ActionName.DELETE_BACKUP,
        evidence={**evidence, "retention_days": retention},
    )


def decide_volume(resource: Resource, facts: VolumeFacts, snap: SnapshotState | None, settings: Settings, now: datetime) -> Decision:
    evidence = _evidence(resource, availability_zone=facts.availability_zone, snapshot_id=facts.snapshot_id)
    if resource.state != "available":
        return Decision(Verdict.KEEP, f"{resource.state}: only volumes attached to nothing are candidates", evidence=evidence)
    weeks = settings.of(StorageSettings).storage_idle_weeks
    if facts.snapshot_id is None:
        if resource.created_at is not None and now - resource.created_at < timedelta(weeks=weeks):
            return Decision(
                Verdict.KEEP,
                f"made {human_duration(now - resource.created_at)} ago, within StorageIdleWeeks ({weeks} weeks)",
                evidence=evidence,
            )
        return _phase_one(resource, settings, evidence, "")
    if snap is None:
        return Decision(Verdict.KEEP, f"snapshot {facts.snapshot_id} was not read: nothing is deleted", evidence=evidence)
    if not snap.found:
        return _phase_one(resource, settings, evidence, f"snapshot {snap.id} no longer exists, so a new one is needed; ")
    if snap.running:
        progress = f" {snap.progress}" if snap.progress else ""
        return Decision(
            Verdict.KEEP,
            f"in progress: snapshot {snap.id} {snap.state}{progress}; the volume is deleted at a later sweep once it is completed",
            evidence={**evidence, "in_progress": True},
        )
    if not snap.done:
        return Decision(
            Verdict.ERROR,
            f"snapshot {snap.id} is {snap.state}{': ' + snap.message if snap.message else ''}: nothing is deleted and the reaper will "
            f"not retry on its own. Remove tag {settings.tag(SNAPSHOT_TAG)} to try again",
            action=ActionName.DELETE_VOLUME,
            evidence=evidence,
            notify_key=f"snapshot-failed:{snap.id}",
        )
    return _phase_two(resource, settings, now, evidence, snap)


def _phase_one(resource: Resource, settings: Settings, evidence: dict[str, Any], note: str) -> Decision:
    return Decision(
        Verdict.ACT,
        f"an ML volume attached to nothing ({resource.instance_type}, {monthly(resource)}); {note}it is snapshotted first and deleted "
        f"at a later sweep once the snapshot is completed — `reaper restore {resource.id}` makes it again from the snapshot",
        action=ActionName.SNAPSHOT,
        evidence=evidence,
    )


def _phase_two(resource: Resource, settings: Settings, now: datetime, evidence: dict[str, Any], snap: SnapshotState) -> Decision:
    grace = timedelta(minutes=settings.grace_for(KIND))
    due = (snap.started_at or now) + grace
    if now < due:
        return Decision(
            Verdict.KEEP,
            f"snapshot {snap.id} is completed; the volume is deleted after {iso(due)}, once the grace since the snapshot has passed",
            evidence=evidence,
        )
    return Decision(
        Verdict.ACT,
        f"an ML volume attached to nothing ({resource.instance_type}, {monthly(resource)}); snapshot {snap.id} is completed, so it is "
        f"deleted — `reaper restore {resource.id}` makes it again from the snapshot",
        action=ActionName.DELETE_VOLUME,
        evidence=evidence,
        skip_grace=True,  # the owner was warned before phase 1, and the grace has passed since the snapshot began
    )


def _stopped_box(resource: Resource, facts: VolumeFacts, now: datetime) -> Decision:
    since = facts.stopped_since
    if since is None:
        return Decision(
            Verdict.KEEP,
            f"a volume of GPU instance {facts.instance_id}, stopped, but EC2 does not say since when: unknown ({monthly(resource)})",
            evidence=_evidence(resource, instance_id=facts.instance_id),
            unknown="stop-time-unknown",
        )
    stopped = f"stopped since {iso(since)} ({human_duration(now - since)})"
    return Decision(
        Verdict.KEEP,
        f"a volume of GPU instance {facts.instance_id}, {stopped}: {resource.instance_type}, {monthly(resource)}. The reaper never "
        f"changes a stopped box's disks; snapshot them and terminate the instance if it is done with",
        evidence=_evidence(resource, instance_id=facts.instance_id, stopped_since=iso(since)),
        notify=True,
        notify_key=f"stopped-box:{facts.instance_id}",
    )


def decide_own_snapshot(resource: Resource, facts: OwnSnapshotFacts, recorded: bool | None, now: datetime) -> Decision:
    """A snapshot the reaper made, past the carry-on day, that no volume marks: kept always (the reaper never deletes a
    snapshot); said once to its owner when no restore record names it either (docs/kinds/storage.md, *Snapshots left
    unrecorded*), for nothing else would ever say it again."""
    begun = f"begun {human_duration(now - facts.started_at)} ago" if facts.started_at else "begun at a time EC2 does not say"
    evidence = _evidence(resource, source_volume=facts.source_volume, size_gib=facts.size_gib, recorded=recorded)
    if recorded is None:
        return Decision(
            Verdict.KEEP,
            f"the reaper's snapshot of {facts.source_volume}, {begun}: no action log to say whether its restore record names it",
            evidence=evidence,
        )
    if recorded:
        return Decision(
            Verdict.KEEP,
            f"the reaper's snapshot of {facts.source_volume}, {begun}: its restore record names it (`reaper restore "
            f"{facts.source_volume}`) ({monthly(resource)})",
            evidence=evidence,
        )
    return Decision(
        Verdict.KEEP,
        f"the reaper's snapshot of {facts.source_volume} ({resource.instance_type}, {resource.state}), {begun}, is recorded "
        f"nowhere: no restore record and no volume's {SNAPSHOT_TAG} tag names it, so no sweep carries it on or deletes it, "
        f"and it is billed until someone does ({monthly(resource)}). The reaper never deletes a snapshot: "
        f"`aws ec2 delete-snapshot --snapshot-id {resource.id} --region {resource.region}` if it is not wanted",
        evidence=evidence,
        notify=True,
        notify_key="unrecorded-snapshot",  # once per snapshot (the key is the snapshot's ARN and this)
    )


def _imported_model(resource: Resource, now: datetime) -> Decision:
    """Reported, never changed: an imported model cannot be brought back once deleted (only imported again)."""
    made = f"imported {human_duration(now - resource.created_at)} ago" if resource.created_at else "imported"
    return Decision(
        Verdict.KEEP,
        f"a Bedrock imported model, {made}: stored and billed per month until deleted ({monthly(resource)}). The reaper "
        f"never deletes it (only a new import brings it back); delete it in the Bedrock console if it is done with",
        evidence=_evidence(resource, model=resource.id),
        notify=True,
        notify_key="imported-model",
    )


APP_RECORD_KEPT = timedelta(hours=24)  # AWS deletes a shut-down app's metadata after 24 h (API_DescribeApp, CreationTime)


def decide_space(resource: Resource, facts: SpaceFacts, view: TagView, settings: Settings, now: datetime) -> Decision:
    """A Studio space: in use while an app is not Deleted, or one ran in the 24 h ListApps remembers, or CloudTrail
    recorded an app start within StorageIdleWeeks; reported (never changed) when none did and the space was made and
    last changed StorageIdleWeeks ago. Where CloudTrail could not say, its last use is unknown and the finding says so.
    A production space (its own stage or its domain's) is not reported: the finding is only a report, and production's."""
    evidence = _evidence(
        resource, domain=facts.domain_id, space=facts.space_name, size_gib=facts.size_gib, owner_profile=facts.owner_profile
    )
    if is_production(view, settings):
        return Decision(Verdict.KEEP, "a production space: its storage is not reported", evidence=evidence)
    if resource.state != "InService":
        return Decision(Verdict.KEEP, f"space {resource.state}: only InService spaces are reported", evidence=evidence)
    if facts.apps:
        return Decision(Verdict.KEEP, f"in use: {', '.join(facts.apps)}", evidence=evidence)
    if facts.recent_apps:
        return Decision(
            Verdict.KEEP,
            f"an app ran in the last 24 h: {', '.join(facts.recent_apps)} (AWS lists a shut-down app for 24 h)",
            evidence=evidence,
        )
    weeks = settings.of(StorageSettings).storage_idle_weeks
    idle = timedelta(weeks=weeks)
    if facts.last_start is not None and now - facts.last_start < idle:
        return Decision(
            Verdict.KEEP,
            f"in use: an app started in it {human_duration(now - facts.last_start)} ago ({iso(facts.last_start)}, CloudTrail "
            f"CreateApp), within StorageIdleWeeks ({weeks} weeks)",
            evidence={**evidence, "last_start": iso(facts.last_start)},
        )
    dated = [t for t in (resource.created_at, resource.changed_at) if t is not None]
    if not dated or now - max(dated) < idle:
        when = f"made or changed {human_duration(now - max(dated))} ago" if dated else "AWS does not say when it was made"
        return Decision(Verdict.KEEP, f"{when}, within StorageIdleWeeks ({weeks} weeks)", evidence=evidence)
    if facts.starts_since is not None and now - facts.starts_since >= idle:
        return _space_unused(resource, facts, settings, now, evidence)
    return _space_last_use_unknown(resource, facts, settings, now, evidence)


def _space_delete_hint(resource: Resource, facts: SpaceFacts) -> str:
    return (
        f"made {_date(resource.created_at)}, last changed {_date(resource.changed_at)}. The reaper never deletes a space. "
        f"Deleting it deletes its EBS volume and every file on it, which cannot be brought back: copy what matters first, "
        f"then `aws sagemaker delete-space --domain-id {facts.domain_id} --space-name {facts.space_name} --region {resource.region}`"
    )


def _space_unused(resource: Resource, facts: SpaceFacts, settings: Settings, now: datetime, evidence: dict[str, Any]) -> Decision:
    """CloudTrail's CreateApp events reach back past StorageIdleWeeks and none started an app in the space since."""
    weeks, since = settings.of(StorageSettings).storage_idle_weeks, facts.starts_since or now
    window = iso(now - timedelta(weeks=weeks))
    last = (
        f"its last app start was {iso(facts.last_start)} ({human_duration(now - facts.last_start)} ago)"
        if facts.last_start is not None
        else f"CloudTrail records none since {iso(since)}"
    )
    return Decision(
        Verdict.KEEP,
        f"a Studio space with no app started in {weeks} weeks (CloudTrail, since {window}): {resource.instance_type}, "
        f"{monthly(resource)}; owner {facts.owner_profile or 'none (a shared space)'}; {last}; {_space_delete_hint(resource, facts)}",
        evidence={
            **evidence,
            "no_app_since": window,
            "last_start": iso(facts.last_start) if facts.last_start else None,
            "cloudtrail_since": iso(since),
        },
        notify=True,
        notify_key="studio-space",  # once per space (the key is the space's ARN and this)
    )


def _space_last_use_unknown(resource: Resource, facts: SpaceFacts, settings: Settings, now: datetime, evidence: dict[str, Any]) -> Decision:
    """CloudTrail could not say (refused, failed, unreadable, or the window reaches past what it read): today's rule."""
    seen = iso(now - APP_RECORD_KEPT)
    why = facts.starts_unread or (
        f"CloudTrail's CreateApp events read reach back to {iso(facts.starts_since)} only, not StorageIdleWeeks "
        f"({settings.of(StorageSettings).storage_idle_weeks} weeks)"
        if facts.starts_since is not None
        else "CloudTrail was not read"
    )
    return Decision(
        Verdict.KEEP,
        f"a Studio space with no app running: {resource.instance_type}, {monthly(resource)}; owner "
        f"{facts.owner_profile or 'none (a shared space)'}. No app run seen since {seen} (ListApps keeps a shut-down app 24 h; "
        f"{why}, so its last use is unknown); {_space_delete_hint(resource, facts)}",
        evidence={**evidence, "no_app_since": seen, "last_use": None, "cloudtrail": why},
        notify=True,
        notify_key="studio-space",  # once per space (the key is the space's ARN and this)
        unknown="space-last-use-unknown",
    )


def _date(at: datetime | None) -> str:
    return iso(at) if at is not None else "(AWS does not say)"


def kill_decision(
    resource: Resource, signal: StorageSignal | None, view: TagView, settings: Settings, now: datetime, reason: str
) -> Decision | None:
    """Past its kill date: phase 1 for an unattached volume not yet snapshotted; nothing else (a backup's end is its retention)."""
    facts = resource.facts
    if not isinstance(facts, VolumeFacts) or facts.instance_id is not None or facts.snapshot_id is not None:
        return None
    if resource.state != "available":
        return None
    return _phase_one(resource, settings, {}, f"{reason}; ")
