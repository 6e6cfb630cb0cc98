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
