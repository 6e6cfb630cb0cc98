"""Bench seeder: n Studio apps in spaces over a few domains (half with built-in idle shutdown on), some
classic KernelGateway apps, some exempt, some just started. None is judged idle: AWS records no user
activity for JupyterLab or Code Editor apps (their last activity is their last health check)."""

from __future__ import annotations

from datetime import datetime, timedelta

import boto3

from reaper_devkit import seed_studio as studio

KIND = "studio-app"
APPS_PER_DOMAIN = 250
USERS = 37


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    sm = session.client("sagemaker")
    domains = [studio.domain(sm, f"bench-{k}", idle_shutdown=k % 2 == 0) for k in range(max(1, -(-n // APPS_PER_DOMAIN)))]
    for d in domains:
        for u in range(USERS):
            studio.user(sm, d, f"u{u:02d}", {"ml:owner": f"u{u:02d}@example.com"})
    for i in range(n):
        d = domains[i // APPS_PER_DOMAIN]
        user = f"u{i % USERS:02d}"
        tags = {"ml:stage": "dev"} if i % 5 else {"ml:stage": "dev", "reaper:exempt": "true"}
        created = now - timedelta(minutes=20) if i % 17 == 0 else now - timedelta(days=1)
        if i % 10 == 3:
            studio.app(
                sm, d, user_name=user, app_type="KernelGateway", name=f"kg-{i:05d}", instance_type="ml.m5.large", tags=tags, created=created
            )
            continue
        space = f"s-{i:05d}"
        app_type = "CodeEditor" if i % 3 == 0 else "JupyterLab"
        studio.space(sm, d, space, owner=user, app_type=app_type)
        studio.app(sm, d, space_name=space, app_type=app_type, instance_type="ml.t3.medium", tags=tags, created=created)


def seed_acting(session: boto3.session.Session, n: int, now: datetime) -> None:
    """For `--act`: n Canvas apps (the Studio apps the reaper judges by activity), one user profile each,
    250 to a domain — two in three idle for 3 h (deleted), one in three active 10 min ago (kept), one in
    five of them exempt."""
    sm, cw = session.client("sagemaker"), session.client("cloudwatch")
    domains = [studio.domain(sm, f"bench-canvas-{k}") for k in range(max(1, -(-n // APPS_PER_DOMAIN)))]
    for i in range(n):
        d, user = domains[i // APPS_PER_DOMAIN], f"c{i:05d}"
        studio.user(sm, d, user, {"ml:owner": f"{user}@example.com"})
        tags = {"ml:stage": "dev"} if i % 5 else {"ml:stage": "dev", "reaper:exempt": "true"}
        studio.app(sm, d, user_name=user, app_type="Canvas", tags=tags, created=now - timedelta(days=2))
        last = now - (timedelta(minutes=10) if i % 3 == 0 else timedelta(hours=3))
        studio.canvas_activity(cw, d, user, last_active=last, now=now)
