"""LookupEvents calls of the two CloudTrail readings (the MLflow UI opens, the Studio spaces' app starts) against the
kit's LookupEvents (moto_ext/cloudtrail_lookup), for 0, 1, 120 and 2,100 events, and with an unreadable CreateApp
event first or last: what one shared reader (reaper/aws/cloudtrail.py) must keep the same (docs/safety.md).

    PYTHONPATH=layers/reaper:devkit python -m bench.cloudtrail_reader
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3
from moto import mock_aws

from reaper.kinds.mlflow import ui_opens
from reaper.kinds.storage import app_starts
from reaper_devkit.moto_ext import cloudtrail_lookup as kit

OPEN = "CreatePresignedMlflowTrackingServerUrl"
CASES = ("ui opens", "app starts", "app starts, bad event last", "app starts, bad event first")


def _seed(case: str, n: int, now: datetime) -> None:
    for i in range(n):
        if case == "ui opens":
            kit.record(OPEN, {"trackingServerName": "ts"}, now - timedelta(seconds=i + 1))
        else:
            kit.record("CreateApp", {"domainId": "d", "spaceName": f"s{i}"}, now - timedelta(seconds=i + 1))
    if n and case.endswith("bad event last"):
        kit.record("CreateApp", {"spaceName": "no-domain"}, now - timedelta(seconds=n + 1))
    if n and case.endswith("bad event first"):
        kit.record("CreateApp", {"spaceName": "no-domain"}, now)


def run(case: str, n: int) -> tuple[int, str]:
    """(LookupEvents calls, what the reading said)."""
    now = datetime.now(UTC).replace(microsecond=0)
    with mock_aws():
        trail = boto3.client("cloudtrail", region_name="us-east-1")
        _seed(case, n, now)
        before = len(kit.calls)
        if case == "ui opens":
            found, whole = ui_opens.opens(trail, ["ts"], now - timedelta(days=1), now)
            said = f"{len(found['ts'])} opens, whole={whole}"
        else:
            starts = app_starts.read(trail, now)
            said = f"{len(starts.last)} spaces, unread={starts.unread is not None}"
        return len(kit.calls) - before, said


def main() -> None:
    kit.apply()
    print("| reading | events | LookupEvents calls | said |")
    print("| --- | --- | --- | --- |")
    for case in CASES:
        for n in (0, 1, 120, 2_100):
            calls, said = run(case, n)
            print(f"| {case} | {n:,} | {calls} | {said} |")


if __name__ == "__main__":
    main()
