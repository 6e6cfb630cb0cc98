"""Fixtures shared by integration modules: the real Jupyter servers read through the presigned hop, and the
training fleet with the admin's opt-in to its default ceilings, the kit's SSM Run Command backend."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from reaper_devkit.jupyter_hop import JupyterServer, PresignedHop, jupyter_server
from reaper_devkit.moto_ext import ssm_commands
from tests.conftest import REGION
from tests.integration import training_fleet


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
    """The training fleet (tests/integration/training_fleet.py), seeded now: name -> ARN."""
    return training_fleet.seed(aws, datetime.now(UTC))


@pytest.fixture
def ssm_kit(aws: Any) -> Any:
    """The kit's SSM Run Command backend of this account (agents registered, what a box prints)."""
    return ssm_commands.backend_for(REGION)
