"""`reaper restore NAME`: start a tracking server the reaper stopped (StartMlflowTrackingServer).

Its experiments, runs and models were never removed: a stop keeps them, and the start serves them again.
A server someone deleted since, or started already, is not touched (docs/kinds/mlflow.md).
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from reaper.core.errors import NoRestoreRecord, RestoreError
from reaper.core.timeutil import iso
from reaper.kinds.base import Say
from reaper.kinds.mlflow import RUNNING
from reaper.kinds.mlflow.discover import describe
from reaper.kinds.mlflow.model import KIND, RestoreRecord
from reaper.record.runtime import Runtime


def run(rt: Runtime, name: str, now: datetime, say: Say) -> str:
    name = name.strip()
    assert rt.log is not None  # reaper.restore.run.restore refuses without the action log
    found = rt.log.latest_restore(KIND, name)
    if found is None:
        raise NoRestoreRecord(f"no restore record for MLflow tracking server {name}: the reaper never stopped it")
    record = cast(RestoreRecord, found)
    sm = rt.clients(record.get("region") or rt.home_region)("sagemaker")
    now_desc = describe(sm, name)
    if now_desc is None:
        raise RestoreError(f"MLflow tracking server {name} is gone (deleted since the reaper stopped it): nothing to start")
    status = str(now_desc.get("TrackingServerStatus"))
    if status in RUNNING or status == "Starting":
        return f"{name} is {status} already: nothing to start"
    if status != "Stopped":
        raise RestoreError(f"MLflow tracking server {name} is {status}: it can be started only when Stopped; try again later")
    say(f"starting MLflow tracking server {name} ({record.get('size') or 'size unknown'})")
    sm.start_mlflow_tracking_server(TrackingServerName=name)
    rt.log.put_restore(KIND, name, {**record, "status": "restored", "restored_at": iso(now)}, now)
    return (
        f"{name} starting: its experiments, runs and models are as they were. It bills again from now; tag "
        f"{rt.settings.tag('kill-after')}=YYYY-MM-DD to have it stopped again on a date"
    )
