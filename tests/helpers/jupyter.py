"""Real Jupyter servers behind the presigned hop, as the JupyterReads tests drive them: a kernel that ran one
cell and sits idle, and a Studio JupyterLab app served behind the hop."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from reaper_devkit import seed_studio as studio
from reaper_devkit.jupyter_hop import JupyterServer, PresignedHop

DEV = {"ml:stage": "dev", "reaper:idle-minutes": "5"}  # a Studio app's tags: a dev stage, a 5-minute idle window


def start_kernel(jupyter: JupyterServer) -> str:
    """A kernel that has run one cell and sits idle (one never used stays `starting` in jupyter_server)."""
    kernel = jupyter.api("POST", "/api/kernels", {"name": "python3"})
    client = jupyter.kernel_client(kernel["id"])
    try:
        client.execute_interactive("x = 1", timeout=300)  # a loaded CI machine starts kernels slowly
    finally:
        client.stop_channels()
    seen = jupyter.wait_for(f"/api/kernels/{kernel['id']}", lambda k: k["execution_state"] == "idle", timeout=300)
    assert seen["execution_state"] == "idle"
    return str(kernel["id"])


def space_app(sm: Any, hop: PresignedHop, server: JupyterServer | None, domain: str, space: str, **kwargs: Any) -> str:
    """A running JupyterLab app in a private space of ana's, created two days ago; its Jupyter server behind the hop."""
    studio.space(sm, domain, space, owner="ana", tags=kwargs.pop("space_tags", None))
    created = kwargs.pop("created", datetime.now(UTC) - timedelta(days=2))
    arn = studio.app(sm, domain, space_name=space, tags={**DEV, **kwargs.pop("tags", {})}, created=created, **kwargs)
    if server is not None:
        hop.serve_app(domain, space, server)
    return arn.split(":app/", 1)[1]
