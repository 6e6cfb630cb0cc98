"""The throttling attack on the studio-app kind: 30 % ThrottlingException on every dependency
(SageMaker, CloudWatch, DynamoDB, SQS) over repeated enforce sweeps, then a calm one. Nothing protected
is deleted, nothing is deleted that a sweep does not know it deleted, nothing twice, and every deletion
is logged and reaches Slack once (the notifier posts a message key once)."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

from reaper.record.actionlog import ActionLog
from reaper.sweep import pipeline
from reaper_devkit import seed_studio as studio
from tests.conftest import drain, load_function
from tests.helpers.faults import flaky

DEV = {"ml:stage": "dev"}


def test_thirty_percent_throttling_on_every_dependency_loses_nothing_and_posts_nothing_twice(aws, deployed_env, monkeypatch):
    # Given idle Canvas apps (deletable), and protected ones: an exempt app and a production one
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    sm, cw = aws.client("sagemaker"), aws.client("cloudwatch")
    now = datetime.now(UTC)
    old = now - timedelta(days=1)
    lab = studio.domain(sm, "lab")
    idle: set[str] = set()
    for n in range(5):
        user = f"u{n}"
        studio.user(sm, lab, user, {"ml:owner": f"{user}@example.com"})
        idle.add(studio.app(sm, lab, user_name=user, app_type="Canvas", tags=DEV, created=old))
        studio.canvas_activity(cw, lab, user, last_active=now - timedelta(hours=4), now=now)
    protected: set[str] = set()
    for user, tags in (("ex", {**DEV, "reaper:exempt": "true"}), ("pr", {"ml:stage": "prod"})):
        studio.user(sm, lab, user, {"ml:owner": f"{user}@example.com"})
        protected.add(studio.app(sm, lab, user_name=user, app_type="Canvas", tags=tags, created=old))
        studio.canvas_activity(cw, lab, user, last_active=now - timedelta(hours=4), now=now)
    app = load_function("studio_app")
    rng = random.Random(24)
    executed: list[str] = []
    # When four sweeps run with every dependency throttled 30 % of the time, then a calm one
    with monkeypatch.context() as faults:
        for service in ("sagemaker", "cloudwatch", "dynamodb", "sqs"):
            flaky(faults, app.RUNTIME.clients()(service), 0.3, rng)
        for n in range(4):
            outcomes = pipeline.sweep(app.RUNTIME, ["studio-app"], now + timedelta(minutes=n), event_id=f"flaky-{n}")
            executed += [o.resource.arn for o in outcomes if o.executed]
    calm = pipeline.sweep(app.RUNTIME, ["studio-app"], now + timedelta(minutes=20), event_id="calm")
    executed += [o.resource.arn for o in calm if o.executed]
    deleted = {a for a in idle | protected if studio.status(sm, a) in ("Deleting", "Deleted")}
    # Then nothing protected is deleted; every deletion is one a sweep knew it made, once
    assert not deleted & protected
    assert deleted and deleted == set(executed) and len(executed) == len(set(executed))
    # every deletion is in the action log as done
    log = ActionLog(aws.client("dynamodb"), deployed_env["REAPER_TABLE"])
    logged = {e.get("arn") for e in log.stored_entries(now - timedelta(hours=1), now + timedelta(hours=1)) if e.get("executed")}
    assert deleted <= logged
    # and reaches Slack once: the first message of each key is what the notifier posts
    first: dict[str, dict] = {}
    for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]):
        first.setdefault(m["message_key"], m)
    posted = Counter(m["arn"] for m in first.values() if m.get("executed"))
    assert deleted <= set(posted) and set(posted.values()) <= {1}, posted
    assert all(first_m.get("unconfirmed") for first_m in first.values() if first_m.get("executed") and first_m["arn"] not in deleted)
