"""Read botocore's service models once per process, not once per boto3 session.

Every boto3 Session gets a fresh botocore Loader, and a Loader caches the JSON models it reads
only for itself; the tests make a session (and the code under test makes more) in each of
hundreds of tests, so about a third of the suite's time went to parsing the same model files
again. The models are read-only data, so one Loader can serve every session. Test support only:
a Lambda cold start makes its session once and gains nothing from this.
"""

from __future__ import annotations

import functools
from typing import Any

import botocore.loaders
import botocore.session


class _Paths(list[str]):
    """Search paths that ignore a path already there (boto3 appends its data path per session)."""

    def append(self, path: str) -> None:
        if path not in self:
            super().append(path)


@functools.cache
def _shared_loader(search_path_string: str | None = None) -> Any:
    loader = botocore.loaders.create_loader(search_path_string)
    loader._search_paths = _Paths(loader.search_paths)  # noqa: SLF001 (the one list Loader keeps)
    return loader


def share() -> None:
    """Make every botocore session in this process use one Loader per data path. Idempotent."""
    botocore.session.create_loader = _shared_loader  # type: ignore[attr-defined]
