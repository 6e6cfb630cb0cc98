"""Reservations an event names, read by `CapacityReservationIds`, when some have vanished: the
DescribeCapacityReservations calls discovery makes (kinds/capacity/discover.reservations), in-process moto
with the kit's capacity emulation (an unknown id fails the whole call, as on AWS).

    .venv/bin/python bench/capacity_named.py [--n 100]

Prints, for 0, 1, 2 and 5 vanished among n named, the calls made and whether every live one was found.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import boto3  # noqa: E402
from moto import mock_aws  # noqa: E402

import reaper_devkit.moto_ext as moto_ext  # noqa: E402
from reaper.aws.clients import Clients  # noqa: E402
from reaper.kinds.capacity.discover import reservations  # noqa: E402
from reaper_devkit import seed_capacity  # noqa: E402
from reaper_devkit.calls import recording  # noqa: E402


def measure(n: int, vanished: int) -> dict[str, int | bool]:
    with mock_aws():
        moto_ext.apply()
        session = boto3.session.Session(region_name="us-east-1")
        ec2, now = session.client("ec2"), datetime.now(UTC)
        live = [seed_capacity.odcr(ec2, now=now) for _ in range(n - vanished)]
        gone = [f"cr-{i:017x}" for i in range(1, vanished + 1)]
        with recording() as calls:
            found = reservations(Clients("us-east-1", session), [*live, *gone])
        return {
            "named": n,
            "vanished": vanished,
            "calls": calls.calls["ec2:DescribeCapacityReservations"],
            "all_live_found": sorted(r["CapacityReservationId"] for r in found) == sorted(live),
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100)
    args = parser.parse_args()
    for vanished in (0, 1, 2, 5):
        print(json.dumps(measure(args.n, vanished)))


if __name__ == "__main__":
    main()
