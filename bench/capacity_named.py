"""Reservations an event names, read by `CapacityReservationIds`, when some have vanished: the
DescribeCapacityReservations calls discovery makes (kinds/capacity/discover.reservations), in-process moto
with the kit's capacity emulation (an unknown id fails the whole call, as on AWS).

    .venv/bin/python bench/capacity_named.py [--n 100] [--others 0]

Prints, for 0, 1, 2 and 5 vanished among n named (and `others` active reservations the event does not name), the
calls made and whether every live one was found: a refused call is followed by one read of the region's active
reservations (1,000 a page), whatever the number vanished.
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


def measure(n: int, vanished: int, others: int) -> dict[str, int | bool]:
    with mock_aws():
        moto_ext.apply()
        session = boto3.session.Session(region_name="us-east-1")
        ec2, now = session.client("ec2"), datetime.now(UTC)
        live = [seed_capacity.odcr(ec2, now=now) for _ in range(n - vanished)]
        for _ in range(others):
            seed_capacity.odcr(ec2, now=now)
        gone = [f"cr-{i:017x}" for i in range(1, vanished + 1)]
        with recording() as calls:
            found = reservations(Clients("us-east-1", session), [*live, *gone])
        return {
            "named": n,
            "vanished": vanished,
            "others": others,
            "calls": calls.calls["ec2:DescribeCapacityReservations"],
            "all_live_found": sorted(r["CapacityReservationId"] for r in found) == sorted(live),
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--others", type=int, default=0)
    args = parser.parse_args()
    for vanished in (0, 1, 2, 5):
        print(json.dumps(measure(args.n, vanished, args.others)))


if __name__ == "__main__":
    main()
