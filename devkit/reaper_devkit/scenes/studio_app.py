"""Demo scene: SageMaker Studio apps in every interesting state (an idle Canvas app is what is deleted),
and a domain without idle shutdown."""

from __future__ import annotations

from datetime import datetime, timedelta

import boto3

from reaper_devkit import seed_studio as studio

KIND = "studio-app"


def seed(session: boto3.session.Session, now: datetime) -> dict[str, str]:
    sm, cw = session.client("sagemaker"), session.client("cloudwatch")
    lab = studio.domain(sm, "research")
    legacy = studio.domain(sm, "legacy-studio", idle_shutdown=False)
    studio.user(sm, lab, "ana", {"ml:owner": "ana@example.com", "ml:project": "vision"})
    studio.user(sm, lab, "lee", {"ml:owner": "lee@example.com", "ml:project": "forecast"})
    studio.user(sm, legacy, "raj", {"ml:owner": "U024BE7LH"})
    dev = {"ml:stage": "dev"}
    old = now - timedelta(days=1)
    expected: dict[str, str] = {}
    canvas = studio.app(sm, lab, user_name="lee", app_type="Canvas", instance_type="ml.m5.xlarge", tags=dev, created=old)
    studio.canvas_activity(cw, lab, "lee", last_active=now - timedelta(hours=4), now=now)
    expected[canvas.split(":app/", 1)[1]] = "deleted: no Canvas activity for 4 hours (TimeSinceLastActive; models and datasets stay)"
    cases = [
        ("ana-gpu-lab", "JupyterLab", "ml.g5.xlarge", dev, "kept: SageMaker's own idle shutdown stops it when idle"),
        ("ana-code", "CodeEditor", "ml.t3.large", dev, "kept: SageMaker's own idle shutdown stops it when idle"),
        ("ana-exempt", "JupyterLab", "ml.g4dn.xlarge", {**dev, "reaper:exempt": "true"}, "exempt: tagged reaper:exempt=true"),
        ("ana-prod", "JupyterLab", "ml.m5.large", {"ml:stage": "prod"}, "exempt: production is notify-only"),
    ]
    for space, app_type, itype, tags, says in cases:
        studio.space(sm, lab, space, owner="ana", app_type=app_type)
        arn = studio.app(sm, lab, space_name=space, app_type=app_type, instance_type=itype, tags=tags, created=old)
        expected[arn.split(":app/", 1)[1]] = says
    kg = studio.app(
        sm, legacy, user_name="raj", app_type="KernelGateway", name="datascience-1", instance_type="ml.m5.xlarge", tags=dev, created=old
    )
    expected[kg.split(":app/", 1)[1]] = "kept: AWS records no user activity for classic KernelGateway apps"
    expected[legacy] = "reported: the domain's built-in idle shutdown is off"
    return expected
