"""FSx for Lustre file systems: delete the finished ones, each only after its data is safe.

Which: Lustre file systems tagged with a dev `ml:stage`, or read by a SageMaker training job
(FileSystemDataSource). Others — HPC clusters, other teams, other FSx types — are never touched.
Signals: the training jobs that use each file system (jobs.py), AWS/FSx client I/O (signals.py),
and the backup or export a first phase started (artifacts.py). The rule is rules.decide; the
actions are in actions.py; `reaper restore fs-…` is restore.py; events are events.py.

Reads per sweep: DescribeFileSystems (tags come with it, so no Resource Groups Tagging API call),
DescribeDataRepositoryAssociations only when a scratch or linked file system is present,
Search over training jobs, 100 a page with their inputs (jobs.py), GetMetricData (3 queries per
candidate, 500 per call), and DescribeBackups / DescribeDataRepositoryTasks for the file systems
between phases (50 ids per call). A backup (phase 1) first reads the file system's own backups
(one DescribeBackups, filtered) to carry on with one an earlier sweep began and could not mark.

This module is the declaration only; the parts it names are imported on first use.
"""

from reaper.core.model import KindAction
from reaper.kinds.base import Action, EventRoute, KindDeclaration, Restorer, standard_parts

_P = "reaper.kinds.fsx"


class ActionName(KindAction):
    """What this kind can do to a resource: the keys of its declared actions, and the cases its
    dispatch (`actions.undo_hint`) matches exhaustively."""

    BACKUP = "backup"
    EXPORT = "export"
    DELETE = "delete"
    DISCARD = "discard"


FS_ID_PATTERN = r"fs-[0-9a-f]{8,}"  # a file system id: what `reaper restore` and the idle check take
AVAILABLE = frozenset({"AVAILABLE"})
# the security groups of a file system are read from its network interfaces for the restore record
_ENI = "ec2:DescribeNetworkInterfaces"
# a sweep's backups, exports and deletes made together (reaper.kinds.fsx.actions.act_many): each begun and gated
# alone, what their records need read once (20: a DescribeBackups filter's values), the records in one write
ACT_BATCH = 20

DECLARATION = KindDeclaration(
    name="fsx",
    doc="FSx for Lustre file systems: deleted after a confirmed backup or export",
    tag_resource_types=(),  # the tags come with DescribeFileSystems
    tag_service="fsx",
    read_permissions=(
        "fsx:DescribeFileSystems",
        "fsx:DescribeDataRepositoryAssociations",
        "fsx:DescribeBackups",
        "fsx:DescribeDataRepositoryTasks",
        "sagemaker:Search",
        "sagemaker:DescribeTrainingJob",  # events.py: the inputs of the job whose end an event reports
        "cloudwatch:GetMetricData",
        "pricing:GetProducts",  # list prices (reaper.aws.pricing)
    ),
    confirm=f"{_P}.actions:confirm",
    change_reads=("sagemaker:DescribeTrainingJob",),  # events.py: the inputs of the job whose end an event reports
    actions={
        ActionName.BACKUP: Action(
            ActionName.BACKUP,
            "began backing up",
            # DescribeBackups: the backup an earlier sweep began and could not mark is carried on (actions.earlier_backup)
            ("fsx:DescribeBackups", "fsx:CreateBackup", "fsx:TagResource", _ENI),
            AVAILABLE,
            f"{_P}.actions:start_backup",
            needs_log=True,
            batch=f"{_P}.actions:act_many",
            batch_size=ACT_BATCH,
        ),
        ActionName.EXPORT: Action(
            ActionName.EXPORT,
            "began exporting",
            ("fsx:CreateDataRepositoryTask", "fsx:TagResource", "fsx:UpdateDataRepositoryAssociation", _ENI),
            AVAILABLE,
            f"{_P}.actions:start_export",
            needs_log=True,
            batch=f"{_P}.actions:act_many",
            batch_size=ACT_BATCH,
        ),
        ActionName.DELETE: Action(
            ActionName.DELETE,
            "deleted",
            ("fsx:DeleteFileSystem", "fsx:DescribeBackups", "fsx:DescribeDataRepositoryTasks", _ENI),
            AVAILABLE,
            f"{_P}.actions:delete_confirmed",
            needs_log=True,
            batch=f"{_P}.actions:act_many",
            batch_size=ACT_BATCH,
            removes_resource=True,
        ),
        ActionName.DISCARD: Action(
            ActionName.DISCARD,
            "deleted, data and all,",
            ("fsx:DeleteFileSystem", _ENI),
            AVAILABLE,
            f"{_P}.actions:discard",
            removes_resource=True,
        ),
    },
    **standard_parts(_P),
    # a batch's gates: one DescribeFileSystems for their state; their tags still one ListTagsForResource each
    read_many=f"{_P}.actions:current_many",
    default_action=ActionName.BACKUP,  # phase 1; kill_decision picks backup, export or discard by the file system's protection
    events=(
        EventRoute("aws.sagemaker", ("SageMaker Training Job State Change",), f"{_P}.events:job_state_changed"),
        EventRoute("mlreaper", ("FSx Idle Window Check",), f"{_P}.events:idle_window_check"),
        # the creation-time notice: CloudTrail's record of the Create call, where the stack's CreationNotices routes it (kinds/creation.py)
        EventRoute("aws.fsx", ("AWS API Call via CloudTrail",), f"{_P}.created:created"),
    ),
    # the one-off idle-window checks: an EventBridge Scheduler schedule, passed the role that may invoke us
    event_permissions=("scheduler:CreateSchedule", "iam:PassRole"),
    restorer=Restorer(
        name_pattern=FS_ID_PATTERN,
        run=f"{_P}.restore:run",
        permissions=(
            "fsx:DescribeFileSystems",
            "fsx:DescribeBackups",
            "fsx:DescribeDataRepositoryTasks",
            "fsx:CreateFileSystemFromBackup",
            "fsx:TagResource",
            "ec2:GetSecurityGroupsForVpc",  # a dependent action of CreateFileSystemFromBackup (reaper.sweep.iam)
        ),
    ),
)
