"""Demo scene: SageMaker Studio apps in every interesting state, and a domain without idle shutdown."""

from __future__ import annotations

from datetime import datetime, timedelta

import boto3

from reaper_devkit import seed_studio as studio

KIND = "studio-app"


def seed(session: boto3.session.Session, now: datetime) -> dict[str, str]:
    sm = session.client("sagemaker")
    lab = studio.domain(sm, "research")
    legacy = studio.domain(sm, "legacy-studio", idle_shutdown=False)
    studio.user(sm, lab, "ana", {"ml:owner": "ana@example.com", "ml:project": "vision"})
    studio.user(sm, legacy, "raj", {"ml:owner": "U024BE7LH"})
    dev = {"ml:stage": "dev"}
    old, stale, fresh = now - timedelta(days=1), now - timedelta(hours=4), now - timedelta(minutes=7)
    cases = [
        ("ana-gpu-lab", "JupyterLab", "ml.g5.xlarge", dev, stale, "deleted: no user activity for 4 hours (the space and its volume stay)"),
        ("ana-code", "CodeEditor", "ml.t3.large", dev, fresh, "kept: used 7 minutes ago"),
        ("ana-exempt", "JupyterLab", "ml.g4dn.xlarge", {**dev, "reaper:exempt": "true"}, stale, "exempt: tagged reaper:exempt=true"),
        ("ana-prod", "JupyterLab", "ml.m5.large", {"ml:stage": "prod"}, stale, "exempt: production is notify-only"),
    ]
    expected: dict[str, str] = {}
    for space, app_type, itype, tags, last, says in cases:
        studio.space(sm, lab, space, owner="ana", app_type=app_type)
        arn = studio.app(sm, lab, space_name=space, app_type=app_type, instance_type=itype, tags=tags, created=old, last_activity=last)
        expected[arn.split(":app/", 1)[1]] = says
    kg = studio.app(
        sm, legacy, user_name="raj", app_type="KernelGateway", name="datascience-1", instance_type="ml.m5.xlarge", tags=dev, created=old
    )
    expected[kg.split(":app/", 1)[1]] = "kept: AWS records no user activity for classic KernelGateway apps"
    expected[legacy] = "reported: the domain's built-in idle shutdown is off"
    return expected
