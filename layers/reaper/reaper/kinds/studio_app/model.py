"""Plain data for the studio-app kind: what discovery knows of an app or a domain, and the app's activity."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

KIND = "studio-app"

# App types that run on a billed instance. JupyterServer apps of classic Studio run on the free
# "system" instance unless given another one; other types (Canvas, RStudio, TensorBoard, MLflow)
# are not this kind's.
BILLABLE_TYPES = frozenset({"JupyterLab", "CodeEditor", "KernelGateway", "JupyterServer"})
FREE_INSTANCE = "system"
# App types whose user activity SageMaker records (DescribeApp LastUserActivityTimestamp): the ones
# its built-in idle shutdown covers.
# https://docs.aws.amazon.com/sagemaker/latest/dg/studio-updated-idle-shutdown.html
ACTIVITY_TRACKED = frozenset({"JupyterLab", "CodeEditor"})
# DefaultUserSettings blocks that carry AppLifecycleManagement.IdleSettings
IDLE_SETTING_BLOCKS = {"JupyterLab": "JupyterLabAppSettings", "CodeEditor": "CodeEditorAppSettings"}


@dataclass(frozen=True)
class AppFacts:
    domain_id: str
    app_type: str
    app_name: str
    user_profile: str | None  # classic Studio: the app belongs to a user profile
    space: str | None  # JupyterLab and Code Editor: the app runs in a space
    space_owner: str | None = None  # the user profile owning a private space

    @property
    def owner_name(self) -> str:
        return self.space or self.user_profile or ""

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
    previous: dict[str, Any]  # the DefaultUserSettings blocks as they were (to turn a change back)

    @property
    def off(self) -> tuple[str, ...]:
        return tuple(s.app_type for s in self.idle if not s.enabled)


@dataclass(frozen=True)
class AppActivity:
    """What DescribeApp says of an app's use, read just for apps that may be acted on."""

    status: str
    created: datetime | None
    last_user_activity: datetime | None
    last_health_check: datetime | None
