"""Fixtures shared by the integration modules that read a real Jupyter server through the presigned hop."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from reaper_devkit.jupyter_hop import JupyterServer, PresignedHop, jupyter_server


@pytest.fixture(scope="session")
def jupyter() -> Iterator[JupyterServer]:
    with jupyter_server() as server:
        yield server


@pytest.fixture
def hop(aws: Any, jupyter: JupyterServer) -> Iterator[PresignedHop]:
    stand_in = PresignedHop()
    yield stand_in
    stand_in.close()
    jupyter.reset()
