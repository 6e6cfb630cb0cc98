"""A seeded Studio account: one app per interesting case, and what a correct sweep does with each.

As on AWS, a JupyterLab or Code Editor app's DescribeApp "last user activity" is its last health
check (recent), so those apps are never judged idle: they are kept with a reason code, and
SageMaker's built-in idle shutdown is what stops them. Canvas apps are judged by the
TimeSinceLastActive metric Canvas publishes; the two idle ones are what a sweep deletes.
studio_outcomes: one sweep of the studio-app function, each app's outcome by id; cli_rows: the CLI's JSON rows.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import boto3

from reaper.cli.main import main as cli
from reaper.core.model import Outcome
from reaper.sweep.pipeline import sweep
from reaper_devkit import seed_studio as studio

DEV = {"ml:stage": "dev"}
CUSTOM_IMAGE = "arn:aws:sagemaker:us-east-1:123456789012:image/team-image"


def seed(session: boto3.session.Session, now: datetime) -> dict[str, Any]:
    """Returns {"domain": id, "off_domain": id, "apps": {case: arn}, "expected": {case: verdict}, "codes": {case: reason code}}."""
    sm, cw = session.client("sagemaker"), session.client("cloudwatch")
    d = studio.domain(sm, "lab")
    off = studio.domain(sm, "legacy", idle_shutdown=False)
    studio.user(sm, d, "ana", {"ml:owner": "ana@example.com"})
    studio.user(sm, off, "bo", {"ml:owner": "bo@example.com"})
    for user in ("cy", "dee", "eve", "fay", "gus"):
        studio.user(sm, d, user, {"ml:owner": f"{user}@example.com"})
    old, stale, fresh = now - timedelta(days=2), now - timedelta(hours=3), now - timedelta(minutes=10)
    # covered by idle shutdown (120 min) and within its timeout plus the margin: not yet due a look (trust, then verify)
    recent = now - timedelta(hours=1)
    cases: dict[str, tuple[dict[str, Any], str, str | None]] = {
        # case: (app arguments, verdict, reason code)
        "idle-canvas": ({"user_name": "cy", "app_type": "Canvas", "created": old, "last_active": stale}, "act", None),
        "idle-canvas-big": (
            {"user_name": "dee", "app_type": "Canvas", "instance_type": "ml.m5.xlarge", "created": old, "last_active": stale},
            "act",
            None,
        ),
        "busy-canvas": ({"user_name": "eve", "app_type": "Canvas", "created": old, "last_active": fresh}, "keep", None),
        "young-canvas": ({"user_name": "fay", "app_type": "Canvas", "created": fresh, "last_active": fresh}, "keep", None),
        "silent-canvas": ({"user_name": "gus", "app_type": "Canvas", "created": old}, "keep", "no-canvas-metric"),
        "covered-lab": ({"space_name": "ana-lab", "instance_type": "ml.g5.xlarge", "created": recent}, "keep", "idle-shutdown-on"),
        "covered-code": ({"space_name": "ana-code", "app_type": "CodeEditor", "created": recent}, "keep", "idle-shutdown-on"),
        "custom-image-lab": (
            {"space_name": "ana-custom", "image_arn": CUSTOM_IMAGE, "created": old},
            "keep",
            "jupyterlab-unsupported-image",  # JupyterReads would read it: a code of its own (reaper coverage counts it)
        ),
        "exempt-lab": ({"space_name": "ana-exempt", "tags": {"reaper:exempt": "true"}, "created": old}, "exempt", None),
        "space-exempt-lab": ({"space_name": "ana-space-exempt", "space_tags": {"reaper:exempt": "true"}, "created": old}, "exempt", None),
        "snoozed-lab": (
            {"space_name": "ana-snooze", "tags": {"reaper:snooze-until": (now + timedelta(days=2)).strftime("%Y-%m-%d")}, "created": old},
            "exempt",
            None,
        ),
        "prod-lab": ({"space_name": "ana-prod", "tags": {"ml:stage": "prod"}, "created": old}, "exempt", None),
        "classic-kg": (
            {"user_name": "ana", "app_type": "KernelGateway", "name": "datascience-1", "instance_type": "ml.m5.large", "created": old},
            "keep",
            "classic-no-activity-signal",
        ),
        "classic-paid-js": (
            {"user_name": "ana", "app_type": "JupyterServer", "instance_type": "ml.t3.medium", "created": old},
            "keep",
            "classic-jupyterserver-no-activity-signal",
        ),
    }
    apps: dict[str, str] = {}
    for case, (kwargs, _, _) in cases.items():
        kwargs = dict(kwargs)
        space = kwargs.get("space_name")
        if space:
            app_type = "CodeEditor" if kwargs.get("app_type") == "CodeEditor" else "JupyterLab"
            studio.space(sm, d, space, owner="ana", app_type=app_type, tags=kwargs.pop("space_tags", None))
        last_active = kwargs.pop("last_active", None)
        tags = {**DEV, **kwargs.pop("tags", {})}
        apps[case] = studio.app(sm, d, tags=tags, **kwargs)
        if last_active is not None:
            studio.canvas_activity(cw, d, kwargs["user_name"], last_active=last_active, now=now)
    # in the domain whose idle shutdown is off: an app nothing can judge
    studio.space(sm, off, "bo-lab", owner="bo")
    apps["uncovered-lab"] = studio.app(sm, off, space_name="bo-lab", tags=DEV, created=old)
    # not this kind's: the free JupyterServer on the system instance, a deleted app
    studio.app(sm, off, user_name="bo", app_type="JupyterServer", instance_type="system", created=old)
    studio.space(sm, off, "bo-gone", owner="bo")
    gone = studio.app(sm, off, space_name="bo-gone", created=old)
    sm.delete_app(DomainId=off, SpaceName="bo-gone", AppType="JupyterLab", AppName="default")
    assert gone
    expected = {c: v for c, (_, v, _) in cases.items()} | {"uncovered-lab": "keep"}
    codes = {c: code for c, (_, _, code) in cases.items()} | {"uncovered-lab": "jupyterlab-no-activity-signal"}
    return {"domain": d, "off_domain": off, "apps": apps, "expected": expected, "codes": codes}


def app_id(arn: str) -> str:
    return arn.split(":app/", 1)[1]


def studio_outcomes(app: Any, now: datetime) -> dict[str, Outcome]:
    """One sweep of the studio-app function's own runtime at `now`: each app's outcome by its id."""
    return {o.resource.id: o for o in sweep(app.RUNTIME, ["studio-app"], now, f"t-{now.isoformat()}")}


def cli_rows(capsys: Any, *argv: str) -> list[dict[str, Any]]:
    """The CLI's `argv` for the studio-app kind (it must exit 0), its JSON lines as rows."""
    capsys.readouterr()
    assert cli([*argv, "--kind", "studio-app"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
