"""Demo scene: notebooks in every interesting state."""

from __future__ import annotations

from datetime import datetime, timedelta

import boto3

from reaper_devkit import seed as seeding
from reaper_devkit.scenes import AHEAD

KIND = "notebook"


def seed(session: boto3.session.Session, now: datetime) -> dict[str, str]:
    sm, cw = session.client("sagemaker"), session.client("cloudwatch")
    dev = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "vision"}
    idle, busy = [0] * 40, [1, 1, 0] + [0] * 37
    cases = {
        "nb-idle-gpu": (dev, True, idle, "stopped: no activity for over 3 hours"),
        "nb-training-live": (dev, True, busy, "kept: a kernel was busy minutes ago"),
        "nb-exempt": ({**dev, "reaper:exempt": "true"}, True, idle, "exempt: tagged reaper:exempt=true"),
        "nb-snoozed": ({**dev, "reaper:snooze-until": (now + timedelta(days=3)).strftime("%Y-%m-%d")}, True, idle, "exempt: snoozed"),
        "nb-snooze-over": ({**dev, "reaper:snooze-until": "2026-01-15"}, True, idle, "stopped: its snooze ended"),
        "nb-prod": ({"ml:owner": "U024BE7LH", "ml:stage": "prod"}, True, idle, "exempt: production is notify-only"),
        "nb-no-agent": (dev, False, [], "kept: no activity agent, so idleness cannot be seen"),
        "nb-gap": (dev, True, [0, 0, None, None, 0] + [0] * 35, "kept: a gap in the activity data is not idleness"),
        "nb-bad-tag": ({**dev, "reaper:idle-minutes": "an hour"}, True, idle, "exempt: the tag cannot be read, so hands off"),
    }
    expected: dict[str, str] = {}
    for name, (tags, agent, values, says) in cases.items():
        itype = "ml.p3.2xlarge" if "gpu" in name or "training" in name else "ml.t3.large"
        seeding.notebook(sm, name, tags, agent=agent, instance_type=itype)
        if values:
            seeding.activity(cw, name, now, values, ahead=AHEAD)
        expected[name] = says
    return expected
