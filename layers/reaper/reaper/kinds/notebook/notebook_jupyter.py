"""A notebook instance's Jupyter server, for running notebooks without the agent (JupyterReads=on).

The door is CreatePresignedNotebookInstanceUrl with the shortest session the API allows (1,800 s);
the reading itself (the hop as a browser follows it, three read-only GETs of the Jupyter Server REST
API, the bound on concurrency and time, the URL never logged) is the one every kind shares:
reaper.aws.jupyter. A notebook instance serves Jupyter at the root of the origin the hop lands on.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from reaper.aws import jupyter
from reaper.aws.jupyter import BUDGET, NOT_REACHED, REFUSED, REQUEST_TIMEOUT, UNREACHABLE, UNREADABLE, WORKERS, Door, Failed, parse
from reaper.kinds.notebook.model import JupyterReading

__all__ = ["NOT_REACHED", "REFUSED", "UNREACHABLE", "UNREADABLE", "Failed", "parse", "read_all", "read_one"]

PERMISSION = "sagemaker:CreatePresignedNotebookInstanceUrl"
SESSION_SECONDS = 1_800  # SessionExpirationDurationInSeconds: 1,800 to 43,200 (API_CreatePresignedNotebookInstanceUrl)

REFUSED_FIX = (
    "the account refuses the reaper the notebook's URL (CreatePresignedNotebookInstanceUrl or the URL itself is denied, "
    "e.g. by an aws:SourceIp or aws:sourceVpce condition): exclude the notebook function's role from that Deny "
    "(aws:PrincipalArn), or attach the activity agent"
)
DOOR = Door("CreatePresignedNotebookInstanceUrl", "the notebook's presigned URL", REFUSED_FIX)


def _presign(sagemaker: Any, name: str) -> str:
    return jupyter.presigned(
        DOOR,
        lambda: sagemaker.create_presigned_notebook_instance_url(
            NotebookInstanceName=name, SessionExpirationDurationInSeconds=SESSION_SECONDS
        ),
    )


def read_all(
    sagemaker: Any,
    names: Sequence[str],
    *,
    workers: int = WORKERS,
    timeout: float = REQUEST_TIMEOUT,
    budget: float = BUDGET,
    turn: int = 0,
) -> dict[str, JupyterReading]:
    """{notebook: its reading}, for every name (a reading that failed or was not reached says why); `turn`
    rotates which are read first (aws/jupyter.py reading_order)."""
    presigns = {name: partial(_presign, sagemaker, name) for name in names}
    return jupyter.read_all(DOOR, presigns, workers=workers, timeout=timeout, budget=budget, turn=turn)


def read_one(sagemaker: Any, name: str, timeout: float = REQUEST_TIMEOUT) -> JupyterReading:
    """One notebook's reading; never raises."""
    return jupyter.read_one(DOOR, partial(_presign, sagemaker, name), timeout)
