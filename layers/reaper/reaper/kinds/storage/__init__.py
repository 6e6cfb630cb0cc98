"""Storage left behind: the reaper's own FSx backups past the admin's retention, and ML volumes nobody attaches.

Which (docs/kinds/storage.md):
  * FSx backups the reaper made (tagged `reaper:source-fs` by the fsx kind when it backed a file system
    up before deleting it), once their file system is gone: kept for ever by default; deleted
    `StorageBackupRetentionDays` days after they were made when the admin sets it, unless tagged
    `reaper:keep=true`. What other people or AWS's automatic backups made is never listed.
  * EBS volumes tagged with an `ml:` key that are `available` (attached to nothing) and were made at
    least `StorageIdleWeeks` weeks ago: snapshotted first (the snapshot records the volume's zone,
    type, size, IOPS, throughput and tags), deleted at a later sweep only once that snapshot is
    `completed` and the grace has passed since; `reaper restore vol-…` makes the volume again from it.
  * Volumes of GPU/accelerator instances stopped for `StorageIdleWeeks` weeks: reported with their
    monthly cost, never changed (a stopped box's volumes are its disks: deleting one would break it).
  * Bedrock imported models made `StorageIdleWeeks` weeks ago or more: reported with their monthly cost,
    never changed (a deleted one comes back only by importing it again).
  * The reaper's own EBS snapshots (tag `reaper:source-volume`) begun more than a day ago that no listed volume's
    `reaper:snapshot-id` nor their volume's restore record names (a record refused, the volume then protected, attached
    or deleted): reported once with their cost and the delete-snapshot line, never deleted.
  * SageMaker Studio spaces with no app running, none in the last 24 hours and none started within
    `StorageIdleWeeks` (CloudTrail's CreateApp events; unknown where CloudTrail cannot say), made and last changed
    that long ago or more: reported once with their storage's monthly cost, never changed (deleting a space deletes
    its EBS volume: kinds/storage/spaces.py).

Reads per sweep: DescribeBackups (one filtered listing; its answer holds the tags), DescribeFileSystems
(which backed-up file systems still exist), DescribeVolumes (ML volumes, unattached; tags come with it),
DescribeSnapshots once (the account's own tagged `reaper:source-volume`, 1,000 a page: the phase-1 snapshots' states and
those left unrecorded), DescribeSnapshots by id only for a marked volume's snapshot that listing did not hold, one
action-log Query per snapshot left unmarked past its day,
DescribeInstances (stopped instances), DescribeInstanceTypes (the types found stopped), ListImportedModels and
one ListTagsForResource per imported model; ListDomains, ListSpaces, ListApps (100 a page), DescribeSpace only for a space
whose summary lacks its size, and GetResources for the tags of domains, spaces and user profiles.

This module is the declaration only; the parts it names are imported on first use.
"""

from reaper.core.model import KindAction
from reaper.kinds.base import Action, KindDeclaration, Restorer, standard_parts

_P = "reaper.kinds.storage"


class ActionName(KindAction):
    """What this kind can do to a resource: the keys of its declared actions, and the cases its
    dispatch (`actions.undo_hint`) matches exhaustively."""

    DELETE_BACKUP = "delete-backup"
    SNAPSHOT = "snapshot"
    DELETE_VOLUME = "delete-volume"


VOLUME_ID_PATTERN = r"vol-[0-9a-f]{8,17}"  # what `reaper restore` takes for this kind
AVAILABLE_BACKUP = frozenset({"AVAILABLE"})
AVAILABLE_VOLUME = frozenset({"available"})  # attached to nothing: the only state DeleteVolume takes
# a sweep's snapshots and volume deletes made together (reaper.kinds.storage.actions.act_many): each begun and gated
# alone (the gates' state and tags from one DescribeVolumes), the earlier snapshots or the snapshots to re-read in one
# DescribeSnapshots, the records in one write, each change its own call (docs/kinds/storage.md, *Many at a time*)
ACT_BATCH = 20

DECLARATION = KindDeclaration(
    name="storage",
    doc="Storage left behind: the reaper's own FSx backups past a retention (opt-in), unattached ML volumes snapshotted then deleted",
    tag_resource_types=(),  # DescribeBackups and DescribeVolumes return the tags
    tag_service="ec2",  # reaper:warned-at on a volume; on a backup through fsx:TagResource (read_permissions, actions)
    read_many=f"{_P}.actions:current_many",  # a batch's gates: one DescribeVolumes, the tags in its answer (reaper.sweep.batch)
    read_permissions=(
        "fsx:DescribeBackups",
        "fsx:DescribeFileSystems",
        "fsx:ListTagsForResource",  # a backup's protection, read again just before it is deleted
        "fsx:TagResource",  # reaper:warned-at on a backup
        "fsx:UntagResource",
        "ec2:DescribeVolumes",
        "ec2:DescribeSnapshots",
        "ec2:DescribeInstances",
        "ec2:DescribeInstanceTypes",
        "bedrock:ListImportedModels",
        "bedrock:ListTagsForResource",  # an imported model's tags (the Tagging API does not list them)
        "sts:GetCallerIdentity",  # the account a volume's ARN names, only where REAPER_ACCOUNT_ID is not set (the CLI)
        "sagemaker:ListDomains",  # Studio spaces (kinds/storage/spaces.py): reported, never changed
        "sagemaker:ListSpaces",
        "sagemaker:DescribeSpace",  # only a space whose ListSpaces summary does not give its storage size
        "sagemaker:ListApps",
        "tag:GetResources",  # the tags of domains, spaces and user profiles, in bulk
        "cloudtrail:LookupEvents",  # CreateApp events: when a space's apps last started (kinds/storage/app_starts.py)
    ),
    confirm=f"{_P}.actions:confirm",
    change_reads=("fsx:ListTagsForResource",),  # a backup's protection, re-read just before it is deleted
    actions={
        ActionName.DELETE_BACKUP: Action(
            ActionName.DELETE_BACKUP,
            "deleted",
            ("fsx:DescribeBackups", "fsx:DeleteBackup"),
            AVAILABLE_BACKUP,
            f"{_P}.actions:delete_backup",
            removes_resource=True,
        ),
        ActionName.SNAPSHOT: Action(
            ActionName.SNAPSHOT,
            "began snapshotting",
            ("ec2:DescribeSnapshots", "ec2:CreateSnapshot", "ec2:CreateTags"),
            AVAILABLE_VOLUME,
            f"{_P}.actions:snapshot",
            needs_log=True,
            batch=f"{_P}.actions:act_many",
            batch_size=ACT_BATCH,
        ),
        ActionName.DELETE_VOLUME: Action(
            ActionName.DELETE_VOLUME,
            "deleted",
            ("ec2:DescribeSnapshots", "ec2:DeleteVolume"),
            AVAILABLE_VOLUME,
            f"{_P}.actions:delete_volume",
            needs_log=True,
            removes_resource=True,
            batch=f"{_P}.actions:act_many",
            batch_size=ACT_BATCH,
        ),
    },
    **standard_parts(_P),
    default_action=ActionName.SNAPSHOT,  # a kill date on a volume: phase 1; kill_decision picks, backups never
    restorer=Restorer(
        name_pattern=VOLUME_ID_PATTERN,
        run=f"{_P}.restore:run",
        permissions=(
            "ec2:DescribeSnapshots",
            "ec2:DescribeVolumes",
            "ec2:CreateVolume",
            "ec2:CreateTags",  # CreateVolume with TagSpecifications (tag-on-create)
        ),
    ),
)
