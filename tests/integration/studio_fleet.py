"""A seeded Studio account: one app per interesting case, and what a correct sweep does with each."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import boto3

from reaper_devkit import seed_studio as studio

DEV = {"ml:stage": "dev"}


def seed(session: boto3.session.Session, now: datetime) -> dict[str, Any]:
    """Returns {"domain": id, "off_domain": id, "apps": {case: arn}, "expected": {case: verdict}}."""
    sm = session.client("sagemaker")
    d = studio.domain(sm, "lab")
    off = studio.domain(sm, "legacy", idle_shutdown=False)
    studio.user(sm, d, "ana", {"ml:owner": "ana@example.com"})
    studio.user(sm, off, "bo", {"ml:owner": "bo@example.com"})
    old, stale, fresh = now - timedelta(days=2), now - timedelta(hours=3), now - timedelta(minutes=10)
    cases: dict[str, tuple[dict[str, Any], str]] = {
        # case: (app arguments, verdict)
        "idle-lab": ({"space_name": "ana-lab", "instance_type": "ml.g5.xlarge", "created": old, "last_activity": stale}, "act"),
        "idle-code": ({"space_name": "ana-code", "app_type": "CodeEditor", "created": old, "last_activity": stale}, "act"),
        "busy-lab": ({"space_name": "ana-busy", "created": old, "last_activity": fresh}, "keep"),
        "young-lab": ({"space_name": "ana-young", "created": fresh, "last_activity": fresh}, "keep"),
        "own-window": (
            {"space_name": "ana-window", "tags": {"reaper:idle-minutes": "600"}, "created": old, "last_activity": stale},
            "keep",
        ),
        "exempt-lab": ({"space_name": "ana-exempt", "tags": {"reaper:exempt": "true"}, "created": old, "last_activity": stale}, "exempt"),
        "snoozed-lab": (
            {
                "space_name": "ana-snooze",
                "tags": {"reaper:snooze-until": (now + timedelta(days=2)).strftime("%Y-%m-%d")},
                "created": old,
                "last_activity": stale,
            },
            "exempt",
        ),
        "prod-lab": ({"space_name": "ana-prod", "tags": {"ml:stage": "prod"}, "created": old, "last_activity": stale}, "exempt"),
        "classic-kg": (
            {"user_name": "ana", "app_type": "KernelGateway", "name": "datascience-1", "instance_type": "ml.m5.large", "created": old},
            "keep",
        ),
        "classic-paid-js": ({"user_name": "ana", "app_type": "JupyterServer", "instance_type": "ml.t3.medium", "created": old}, "keep"),
    }
    apps: dict[str, str] = {}
    for case, (kwargs, _) in cases.items():
        space = kwargs.get("space_name")
        if space:
            studio.space(sm, d, space, owner="ana", app_type="CodeEditor" if kwargs.get("app_type") == "CodeEditor" else "JupyterLab")
        tags = {**DEV, **kwargs.pop("tags", {})}
        apps[case] = studio.app(sm, d, tags=tags, **kwargs)
    # not this kind's: the free JupyterServer on the system instance, a deleted app
    studio.app(sm, off, user_name="bo", app_type="JupyterServer", instance_type="system", created=old)
    studio.space(sm, off, "bo-gone", owner="bo")
    gone = studio.app(sm, off, space_name="bo-gone", created=old, last_activity=stale)
    sm.delete_app(DomainId=off, SpaceName="bo-gone", AppType="JupyterLab", AppName="default")
    assert gone
    return {"domain": d, "off_domain": off, "apps": apps, "expected": {c: v for c, (_, v) in cases.items()}}


def app_id(arn: str) -> str:
    return arn.split(":app/", 1)[1]
