"""Plain data for the studio-app kind: what discovery knows of an app or a domain, and the app's activity."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from reaper.core.timeutil import as_utc
from reaper.kinds.studio_app.shapes import AppSettings, BlockName

KIND = "studio-app"

# App types that run on a billed instance. JupyterServer apps of classic Studio run on the free
# "system" instance unless given another one; Canvas apps bill their workspace instance while they
# run; other types (RStudio, TensorBoard, MLflow) are not this kind's.
BILLABLE_TYPES = frozenset({"JupyterLab", "CodeEditor", "KernelGateway", "JupyterServer", "Canvas"})
FREE_INSTANCE = "system"
CANVAS = "Canvas"
# App types SageMaker's built-in idle shutdown covers. AWS records no user activity for them that
# the reaper can read: DescribeApp's LastUserActivityTimestamp follows the health checks.
# https://docs.aws.amazon.com/sagemaker/latest/dg/studio-updated-idle-shutdown.html
# https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeApp.html
IDLE_SHUTDOWN_TYPES = frozenset({"JupyterLab", "CodeEditor"})
# Canvas publishes how long each user's app has been inactive (seconds), per domain and user profile.
# https://aws.amazon.com/blogs/machine-learning/optimizing-costs-for-amazon-sagemaker-canvas-with-automatic-shutdown-of-idle-apps/
CANVAS_NAMESPACE = "/aws/sagemaker/Canvas/AppActivity"
CANVAS_METRIC = "TimeSinceLastActive"
# Reason codes of apps the reaper keeps because it cannot judge them (grouped by `reaper coverage`)
# Each blind spot JupyterReads can read (a JupyterLab app, or a classic JupyterServer app, in an IAM-mode domain, with a user
# profile to sign in as: AppFacts.jupyter_readable) has a code of its own, so that `reaper coverage` counts what turning
# JupyterReads on would reach; the other code of the pair is what it cannot read (Code Editor, KernelGateway, SSO domains).
NO_ACTIVITY_SIGNAL = "no-activity-signal"  # idle shutdown off in its domain: Code Editor, or JupyterLab JupyterReads cannot open
JUPYTERLAB_NO_SIGNAL = "jupyterlab-no-activity-signal"  # idle shutdown off in its domain: JupyterLab JupyterReads can read
IDLE_SHUTDOWN_ON = "idle-shutdown-on"  # SageMaker itself stops it when idle
# SageMaker's idle shutdown should have stopped it, it still runs past its timeout plus IDLE_SHUTDOWN_MARGIN, and nothing
# verified it is in use: "covered by AWS, unverified" (Code Editor or an SSO domain / a JupyterLab app JupyterReads can read)
IDLE_SHUTDOWN_UNVERIFIED = "idle-shutdown-unverified"
JUPYTERLAB_IDLE_SHUTDOWN_UNVERIFIED = "jupyterlab-idle-shutdown-unverified"
UNSUPPORTED_IMAGE = "idle-shutdown-unsupported-image"  # a custom image: whether it supports idle shutdown cannot be read
JUPYTERLAB_UNSUPPORTED_IMAGE = "jupyterlab-unsupported-image"  # the same, a JupyterLab app JupyterReads can read
OLD_IMAGE = "idle-shutdown-old-image"  # SageMaker Distribution older than 2.0, or a version the app does not say
JUPYTERLAB_OLD_IMAGE = "jupyterlab-old-image"  # the same, a JupyterLab app JupyterReads can read
SHARED_IDLE_OFF = "shared-space-idle-shutdown-off"  # a shared space: its domain's DefaultSpaceSettings do not turn idle shutdown on
JUPYTERLAB_SHARED_IDLE_OFF = "jupyterlab-shared-space-idle-shutdown-off"  # the same, a JupyterLab app JupyterReads can read
CLASSIC_NO_SIGNAL = "classic-no-activity-signal"  # classic Studio apps: AWS records no activity
CLASSIC_SERVER_NO_SIGNAL = "classic-jupyterserver-no-activity-signal"  # a billed classic JupyterServer app JupyterReads can read
PROFILE_IDLE_OFF = "profile-idle-shutdown-off"  # its domain has idle shutdown on, its user profile turned it off
JUPYTERLAB_PROFILE_IDLE_OFF = "jupyterlab-profile-idle-shutdown-off"  # the same, a JupyterLab app JupyterReads can read
NOT_READ = "not-read"  # its user profile's idle settings were not read this sweep (DescribeUserProfile failed)
NO_CANVAS_METRIC = "no-canvas-metric"  # Canvas app with no TimeSinceLastActive data
CLASSIC_SERVER = "JupyterServer"  # Studio Classic's Jupyter server (billed when not on the "system" instance)
# DefaultUserSettings blocks that carry AppLifecycleManagement.IdleSettings (they apply to private spaces only)
IDLE_SETTING_BLOCKS: dict[str, BlockName] = {"JupyterLab": "JupyterLabAppSettings", "CodeEditor": "CodeEditorAppSettings"}
# DefaultSpaceSettings blocks that do (shared spaces only): DefaultSpaceSettings has no CodeEditorAppSettings
# https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DefaultSpaceSettings.html
SPACE_IDLE_SETTING_BLOCKS: dict[str, BlockName] = {"JupyterLab": "JupyterLabAppSettings"}
SMD_FIRST_WITH_IDLE_SHUTDOWN = 2  # idle shutdown needs SageMaker Distribution 2.0 or newer (studio-updated-idle-shutdown.html)
# Trust, then verify (docs/kinds/studio-app.md): an app idle shutdown covers is looked at again once it has run longer
# than its timeout plus this margin (two default sweeps; the shutdown's own check and the app's deletion take minutes).
IDLE_SHUTDOWN_MARGIN = timedelta(minutes=30)


@dataclass(frozen=True)
class AppFacts:
    domain_id: str
    app_type: str
    app_name: str
    user_profile: str | None  # classic Studio: the app belongs to a user profile
    space: str | None  # JupyterLab and Code Editor: the app runs in a space
    space_owner: str | None = None  # the user profile owning a private space
    idle_shutdown_minutes: int | None = None  # built-in idle shutdown for this app type, domain and user profile (None: off or unread)
    custom_image: str | None = None  # the app's image when it is not SageMaker Distribution
    smd_version: str | None = None  # its SageMaker Distribution version (ResourceSpec.SageMakerImageVersionAlias), when it says
    shared: bool = False  # it runs in a shared space (SpaceSharingSettings.SharingType Shared): DefaultSpaceSettings apply
    auth_mode: str | None = None  # the domain's AuthMode: "IAM" or "SSO" (CreatePresignedDomainUrl needs IAM)
    profile_idle_off: bool = False  # its user profile turned idle shutdown off, where its domain has it on
    profile_timeout: bool = False  # idle_shutdown_minutes is its user profile's own timeout
    profile_unread: str | None = None  # DescribeUserProfile failed (its error code): whether idle shutdown applies is unknown

    @property
    def old_image(self) -> bool:
        """A JupyterLab or Code Editor app on SageMaker Distribution older than 2.0, or whose version the app does not say:
        built-in idle shutdown is not known to run on it."""
        if self.app_type not in IDLE_SHUTDOWN_TYPES or self.custom_image is not None:
            return False
        major = (self.smd_version or "").split(".", 1)[0]
        return not (major.isdigit() and int(major) >= SMD_FIRST_WITH_IDLE_SHUTDOWN)

    @property
    def covered_by_aws(self) -> bool:
        """SageMaker's built-in idle shutdown should stop it: a JupyterLab or Code Editor app with a timeout from its
        domain, shared space or user profile, on SageMaker Distribution 2.0+ (what the rules call `idle-shutdown-on`)."""
        return (
            self.app_type in IDLE_SHUTDOWN_TYPES
            and bool(self.idle_shutdown_minutes)
            and self.custom_image is None
            and not self.old_image
            and self.profile_unread is None
        )

    @property
    def verifiable(self) -> bool:
        """A covered app whose Jupyter server JupyterReads can read (JupyterLab, IAM domain, a profile to sign in as)."""
        return self.covered_by_aws and self.app_type == "JupyterLab" and self.auth_mode == "IAM" and bool(self.sign_in_as)

    def verify_from(self, created_at: datetime | None) -> datetime | None:
        """When a covered app still running is past due: created + its timeout + IDLE_SHUTDOWN_MARGIN (None: not covered)."""
        if not self.covered_by_aws or created_at is None or not self.idle_shutdown_minutes:
            return None
        return as_utc(created_at) + timedelta(minutes=self.idle_shutdown_minutes) + IDLE_SHUTDOWN_MARGIN

    @property
    def owner_name(self) -> str:
        return self.space or self.user_profile or ""

    @property
    def sign_in_as(self) -> str | None:
        """The user profile a presigned URL signs in as: the space's owner, or the classic app's own profile."""
        return self.space_owner if self.space else self.user_profile

    @property
    def jupyter_readable(self) -> bool:
        """Whether JupyterReads reads this app's Jupyter server: a JupyterLab app nothing else judges (idle
        shutdown off in its domain, user profile or shared space's settings, or its profile unread, or a custom or
        older image), or a classic
        JupyterServer app; in an IAM-mode domain, with a user profile to sign in as."""
        uncovered_lab = self.app_type == "JupyterLab" and (
            self.custom_image is not None or self.old_image or self.idle_shutdown_minutes is None
        )
        classic = self.app_type == CLASSIC_SERVER and not self.space
        return (uncovered_lab or classic) and self.auth_mode == "IAM" and bool(self.sign_in_as)

    @property
    def where(self) -> str:
        return f"space {self.space}" if self.space else f"user profile {self.user_profile}"


@dataclass(frozen=True)
class IdleSetting:
    """One app type's built-in idle shutdown, as a domain's DefaultUserSettings say."""

    app_type: str
    enabled: bool
    timeout_minutes: int | None


@dataclass(frozen=True)
class DomainFacts:
    """A domain, reported for its built-in idle shutdown (JupyterLab and Code Editor)."""

    domain_id: str
    domain_name: str
    idle: tuple[IdleSetting, ...]
    previous: dict[BlockName, AppSettings]  # the DefaultUserSettings blocks as they were (to turn a change back)
    shared_idle: tuple[IdleSetting, ...] = ()  # DefaultSpaceSettings (shared spaces): JupyterLab only
    previous_shared: dict[BlockName, AppSettings] = field(default_factory=dict)  # the DefaultSpaceSettings blocks as they were

    @property
    def off(self) -> tuple[str, ...]:
        """App types whose idle shutdown is off in DefaultUserSettings (private spaces)."""
        return tuple(s.app_type for s in self.idle if not s.enabled)

    @property
    def shared_off(self) -> tuple[str, ...]:
        """App types whose idle shutdown is off in DefaultSpaceSettings (shared spaces)."""
        return tuple(s.app_type for s in self.shared_idle if not s.enabled)


@dataclass(frozen=True)
class AppActivity:
    """What CloudWatch says of a Canvas app's use: seconds since its user was last active."""

    inactive_seconds: float
    at: datetime  # the newest datapoint
