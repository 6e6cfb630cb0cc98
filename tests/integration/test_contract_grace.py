"""Grace per kind, through each kind's real function against moto: in enforce, a resource found reapable
for the first time is warned (reaper:warned-at written); activity in between clears the warning, so
the resource is kept, the tag goes, and no later sweep acts on the old warning; one still idle past
the grace period is acted on without a second warning.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.handlers import handle_kind_event
from reaper_devkit import seed, seed_ec2
from reaper_devkit import seed_endpoint as se
from tests.conftest import drain, event, load_function
from tests.helpers.contract_kits import KITS, canvas_used, tags_of

PERIODS = 6  # the 30 minutes between the first and the second sweep


def _notebook(aws: Any, arn: str, at: datetime, busy: bool) -> None:
    seed.activity(aws.client("cloudwatch"), arn.rsplit("/", 1)[-1], at, [1.0 if busy else 0.0] * PERIODS)


def _ec2(aws: Any, arn: str, at: datetime, busy: bool) -> None:
    iid, n = arn.rsplit("/", 1)[-1], PERIODS
    if busy:
        seed_ec2.metrics(aws.client("cloudwatch"), iid, at, cpu=[80.0] * n, network=[60_000_000.0] * n, gpu=[85.0] * n)
    else:
        seed_ec2.metrics(
            aws.client("cloudwatch"), iid, at, cpu=seed_ec2.IDLE_CPU[:n], network=seed_ec2.IDLE_NET[:n], gpu=seed_ec2.IDLE_GPU[:n]
        )


def _endpoint(aws: Any, arn: str, at: datetime, busy: bool) -> None:
    if busy:  # no traffic publishes no datapoint: only the busy one gets data
        se.invocations(aws.client("cloudwatch"), arn.rsplit("/", 1)[-1], at, [5.0] * PERIODS)


def _studio(aws: Any, arn: str, at: datetime, busy: bool) -> None:
    # Canvas keeps publishing TimeSinceLastActive while the app runs: small for the used one
    canvas_used(aws, arn, at - timedelta(minutes=1) if busy else at - timedelta(hours=4), at)


# kind -> what happens to one of its resources between `earlier` sweeps and `at` (busy or idle)
USE: dict[str, Callable[[Any, str, datetime, bool], None]] = {
    "notebook": _notebook,
    "ec2": _ec2,
    "endpoint": _endpoint,
    "studio-app": _studio,
}


def warned(aws: Any, arn: str) -> bool:
    return any(k.lower() == "reaper:warned-at" for k in tags_of(aws, arn))


@pytest.mark.parametrize("kind", sorted(USE))
def test_activity_between_the_warning_and_the_grace_end_clears_it_and_the_idle_one_is_acted_on_after(
    aws, deployed_env, lambda_context, monkeypatch, kind
):
    # Given two idle resources, in enforce with a 20-minute grace period
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "20")
    kit, use = KITS[kind], USE[kind]
    now = datetime.now(UTC)
    arns = kit.seed(aws, now)
    app = load_function(kit.function)
    # When the first sweep runs, both are warned and tagged, nothing is changed
    first = handle_kind_event(event(f"{kind}-schedule.json", id="first"), kind, app.RUNTIME, now=now)
    assert first["verdicts"]["warn"] == 2 and first["acted"] == [], first
    assert all(warned(aws, arn) for arn in arns.values())
    drain(aws, deployed_env["REAPER_QUEUE_URL"])
    # and one of them is used before the grace ends while the other stays idle
    later = now + timedelta(minutes=5 * PERIODS)
    use(aws, arns["late-tag"], later, True)
    use(aws, arns["plain"], later, False)
    second = handle_kind_event(event(f"{kind}-schedule.json", id="second"), kind, app.RUNTIME, now=later)
    # Then the used one is kept with its warning cleared, and only the idle one is acted on (warned once, then acted)
    assert second["acted"] == [kit.id_of(arns["plain"])], second
    assert not kit.changed(aws, arns, "late-tag") and kit.changed(aws, arns, "plain")
    assert not warned(aws, arns["late-tag"])
    messages = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("verdict") in ("act", "warn")]
    assert [(m["id"], m["verdict"], m["executed"]) for m in messages] == [(kit.id_of(arns["plain"]), "act", True)], messages
