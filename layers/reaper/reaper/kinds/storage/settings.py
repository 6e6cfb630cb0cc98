"""The storage kind's own settings (docs/kinds/storage.md), read from their REAPER_* variables (reaper.core.settings).

The field names are the ones the shared Settings had, so a bad value is refused in the same line as before
(it names the variable and the field: docs/configuration.md, "Environment variables")."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from reaper.core.settings import KindSettings


class StorageSettings(KindSettings):
    ENV_VARS: ClassVar[dict[str, str]] = {
        "REAPER_STORAGE_BACKUP_RETENTION_DAYS": "storage_backup_retention_days",
        "REAPER_STORAGE_IDLE_WEEKS": "storage_idle_weeks",
    }

    # StorageBackupRetentionDays: the reaper's own FSx backups are deleted this many days after they were made
    # (None, the default: kept for ever; a backup tagged reaper:keep=true always is)
    storage_backup_retention_days: int | None = Field(default=None, ge=1, le=3_650)
    # StorageIdleWeeks: an ML volume (tag key ml:*) unattached and made at least this many weeks ago is snapshotted,
    # then deleted; a stopped GPU box's volumes, an imported model or a Studio space that old are reported
    storage_idle_weeks: int = Field(default=4, ge=1, le=104)
