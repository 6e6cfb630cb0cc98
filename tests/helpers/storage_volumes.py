"""The storage kind's batch tests' world: unattached ML volumes, a sweep, and what AWS and the log hold of them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

from reaper_devkit import seed_storage
from tests.conftest import TABLE, event

THROTTLED = {"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}


def volumes(ec2: Any, n: int) -> list[str]:
    """n ML volumes attached to nothing for six weeks: each one a phase-1 snapshot."""
    made = datetime.now(UTC) - timedelta(weeks=6)
    return [seed_storage.volume(ec2, made, tags={**seed_storage.ML, "Name": f"scratch-{i}"}) for i in range(n)]


def sweep(app: Any, lambda_context: Any, event_id: str | None = None) -> dict[str, Any]:
    """One scheduled sweep, its own delivery unless `event_id` repeats one."""
    result: dict[str, Any] = app.handler(event("storage-schedule.json", id=event_id or str(uuid4())), lambda_context)
    return result


def snapshots_of(ec2: Any, vol: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ec2.describe_snapshots(OwnerIds=["self"], Filters=[{"Name": "volume-id", "Values": [vol]}])["Snapshots"]
    return found


def marker(ec2: Any, vol: str) -> str | None:
    tags = {t["Key"]: t["Value"] for t in ec2.describe_volumes(VolumeIds=[vol])["Volumes"][0].get("Tags", [])}
    return tags.get("reaper:snapshot-id")


def records(aws: Any, vol: str) -> list[dict[str, Any]]:
    """Every restore record of the volume the action log holds (latest_restore reads only the newest)."""
    page = aws.client("dynamodb").query(
        TableName=TABLE, KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": {"S": f"RESTORE#storage#{vol}"}}
    )
    return list(page.get("Items", []))
