"""Bench seeder: n Studio spaces, swept by the storage kind (issue 38), over domains of 250 spaces with 37 user
profiles each: 40 % with no app and made six weeks ago, of which 10 % started an app 8 days ago (CloudTrail CreateApp:
in use), 10 % last started one 10 weeks ago (reported with that date) and 20 % never in CloudTrail's 90 days (reported);
20 % with a JupyterLab app running (in use), 10 % whose app was shut down three hours ago (ran in the last 24 h), 10 %
made two days ago, 10 % exempt, and 10 % made six weeks ago without a storage size in their settings (DescribeSpace
reads them; reported unpriced). Every app seeded has its CreateApp event too: 500 events in CloudTrail.

    .venv/bin/python bench/sweep_bench.py --kind storage-spaces --n 1000

The sweep's calls for spaces (dry run): one ListDomains, one ListSpaces page per 100 spaces, one ListApps page per 100
apps (the region's, unfiltered: not one per domain), one GetResources page per 100 tagged domains, spaces and user
profiles, one DescribeSpace per space whose summary lacks its size (no batch form), and one LookupEvents page per 50 CreateApp
events of the region's last 90 days (one paged lookup for every space); plus the storage kind's other
listings, which find nothing here.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import boto3

from reaper_devkit import seed_studio as studio
from reaper_devkit.moto_ext import sagemaker_studio

KIND = "storage-spaces"
SWEEPS = "storage"  # the kind this seeder's account is swept as
SPACES_PER_DOMAIN = 250
USERS = 37


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    sm = session.client("sagemaker")
    domains = [studio.domain(sm, f"bench-{k}", tags={"ml:stage": "dev"}) for k in range(max(1, -(-n // SPACES_PER_DOMAIN)))]
    for d in domains:
        for u in range(USERS):
            studio.user(sm, d, f"u{u:02d}", {"ml:owner": f"u{u:02d}@example.com"})
    old = now - timedelta(weeks=6)
    for i in range(n):
        d, case, user, name = domains[i // SPACES_PER_DOMAIN], i % 10, f"u{i % USERS:02d}", f"s-{i:05d}"
        tags = {"ml:project": f"p{i % 7}", **({"reaper:exempt": "true"} if case == 8 else {})}
        arn = studio.space(sm, d, name, owner=user, tags=tags, size_gib=None if case == 9 else 5 + i % 100)
        made = now - timedelta(days=2) if case == 7 else old
        sagemaker_studio.set_space_times(arn, created=made, modified=made)
        if case in (4, 5):
            studio.app(sm, d, space_name=name, created=now - timedelta(hours=5))
        elif case == 6:
            app = studio.app(sm, d, space_name=name, created=now - timedelta(hours=8))
            sagemaker_studio.set_app_times(app, deleted=now - timedelta(hours=3))
        started = {2: now - timedelta(days=8), 3: now - timedelta(weeks=10), 4: now - timedelta(hours=5), 6: now - timedelta(hours=8)}
        started[5] = started[4]
        if case in started:
            studio.app_started(d, started[case], space_name=name, region=session.region_name or "us-east-1")
