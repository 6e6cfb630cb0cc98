"""Fixtures shared by integration modules: the real Jupyter servers read through the presigned hop, and the
training fleet with the admin's opt-in to its default ceilings, the kit's SSM Run Command backend, the Studio
fleet swept in parts (`split`), the organisation deployed (`organisation`)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from reaper.sweep import pipeline
from reaper_devkit.jupyter_hop import JupyterServer, PresignedHop, jupyter_server
from reaper_devkit.moto_ext import ssm_commands
from tests.conftest import REGION
from tests.helpers import studio_fleet, training_fleet
from tests.helpers.continuation import GROUP, ROLE, everything
from tests.helpers.organisation import deploy_organisation


@pytest.fixture(scope="session")
def jupyter() -> Iterator[JupyterServer]:
    with jupyter_server() as server:
        yield server


@pytest.fixture(scope="session")
def lab() -> Iterator[JupyterServer]:
    """A Jupyter server under the path a Studio JupyterLab app serves under (the reader must take the base from
    where the hop lands). A module whose hop serves it says so: `jupyter` there is `lab`."""
    with jupyter_server(base_url="/jupyterlab/default/") as server:
        yield server


@pytest.fixture
def hop(aws: Any, jupyter: JupyterServer) -> Iterator[PresignedHop]:
    """The stand-in for the presigned hop, in front of this module's `jupyter`: closed, and the server reset, after the test."""
    stand_in = PresignedHop()
    yield stand_in
    stand_in.close()
    jupyter.reset()


@pytest.fixture
def default_ceilings_act(monkeypatch: pytest.MonkeyPatch) -> None:
    """The admin's opt-in to act on the default training ceilings (untagged jobs), for tests that hold the
    ceilings' behaviour; the stack default (notify-only) has its own tests in test_training_default_ceilings.py."""
    monkeypatch.setenv("REAPER_TRAINING_DEFAULT_CEILINGS_ACT", "true")


@pytest.fixture
def jobs(aws: Any) -> dict[str, str]:
    """The training fleet (tests/helpers/training_fleet.py), seeded now: name -> ARN."""
    return training_fleet.seed(aws, datetime.now(UTC))


@pytest.fixture
def ssm_kit(aws: Any) -> Any:
    """The kit's SSM Run Command backend of this account (agents registered, what a box prints)."""
    return ssm_commands.backend_for(REGION)


@pytest.fixture
def split(aws: Any, sm: Any, deployed_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The Studio fleet in an enforce deployment with no grace, chunks of three, the sweeps' schedule group, and
    the ids each call of pipeline.process saw (in order): test_sweep_continuation.py and test_sweep_chain.py."""
    seeded = studio_fleet.seed(aws, datetime.now(UTC))
    aws.client("scheduler").create_schedule_group(Name=GROUP)
    for k, v in {
        "REAPER_MODE": "enforce",
        "REAPER_GRACE_MINUTES": "0",
        "REAPER_CONTINUATION_SCHEDULE_GROUP": GROUP,
        "REAPER_CONTINUATION_ROLE_ARN": ROLE,
        "REAPER_SWEEP_SCHEDULE": "rate(15 minutes)",
    }.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(pipeline, "CHUNK", 3)
    seen: list[str] = []
    real = pipeline.process

    def process(kind: Any, r: Any, signal: Any, ctx: Any) -> Any:
        seen.append(r.id)
        return real(kind, r, signal, ctx)

    monkeypatch.setattr(pipeline, "process", process)
    return {**seeded, "seen": seen, "all": everything(aws, sm), "queue": deployed_env["REAPER_QUEUE_URL"]}


@pytest.fixture
def organisation(aws: Any) -> dict[str, Any]:
    """The organisation deployed (tests/helpers/organisation.py): its id, member accounts, CloudFormation client and central stack."""
    return deploy_organisation(aws)


@pytest.fixture
def shipped_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Price List API: the calls a test counts are the kind's own (the shipped copy prices what it can)."""
    monkeypatch.setenv("REAPER_LIVE_PRICES", "off")
