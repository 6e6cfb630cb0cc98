"""Bedrock imported models (Custom Model Import), which moto 5.2.5's Bedrock backend lacks: ListImportedModels
and their tags (the backend's own tagger, so ListTagsForResource answers for them, and an unknown ARN is
ResourceNotFoundException as for every Bedrock resource).

- ListImportedModels returns `modelSummaries` of `modelArn`, `modelName`, `creationTime` (required), with
  `instructSupported` and `modelArchitecture`, newest first by default (`sortBy` CreationTime,
  `sortOrder` Descending), paginated by `maxResults` (1-1000) and `nextToken`.
  https://docs.aws.amazon.com/bedrock/latest/APIReference/API_ListImportedModels.html
  https://docs.aws.amazon.com/bedrock/latest/APIReference/API_ImportedModelSummary.html

An imported model is made by a model import job in AWS (CreateModelImportJob), which the kit does not
run: `imported_model` (tests, seeds) puts one in the backend as the job would leave it.
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from typing import Any

from moto.bedrock.exceptions import ValidationException
from moto.bedrock.models import BedrockBackend, bedrock_backends
from moto.bedrock.responses import BedrockResponse
from moto.core import DEFAULT_ACCOUNT_ID


def _store(backend: Any) -> dict[str, dict[str, Any]]:
    return backend.__dict__.setdefault("_reaper_imported", {})  # type: ignore[no-any-return]


def imported_model(
    name: str, created: datetime, tags: dict[str, str] | None = None, region: str = "us-east-1", architecture: str = "llama3"
) -> str:
    """An imported model, as a finished import job leaves it; returns its ARN."""
    backend = bedrock_backends[DEFAULT_ACCOUNT_ID][region]
    arn = f"arn:aws:bedrock:{region}:{DEFAULT_ACCOUNT_ID}:imported-model/{secrets.token_hex(6)}"
    _store(backend)[arn] = {"modelArn": arn, "modelName": name, "creationTime": created, "instructSupported": True,
                            "modelArchitecture": architecture}  # fmt: skip
    if tags:
        backend.tagger.tag_resource(arn, [{"Key": k, "Value": v} for k, v in tags.items()])
    return arn


def _public(m: dict[str, Any]) -> dict[str, Any]:
    return {**m, "creationTime": m["creationTime"].astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")}


def apply() -> None:
    if getattr(BedrockBackend, "_reaper_imported", False):
        return
    list_arns = BedrockBackend._list_arns

    def _list_arns(self: Any) -> list[str]:
        return list_arns(self) + list(_store(self))

    def r_list(self: BedrockResponse) -> str:
        limit = int(self._get_param("maxResults") or 1000)
        if not 1 <= limit <= 1000:
            raise ValidationException("maxResults: between 1 and 1000")
        descending = (self._get_param("sortOrder") or "Descending") == "Descending"
        items = sorted(_store(self.bedrock_backend).values(), key=lambda m: m["creationTime"], reverse=descending)
        start = int(self._get_param("nextToken") or 0)
        page: dict[str, Any] = {"modelSummaries": [_public(m) for m in items[start : start + limit]]}
        if start + limit < len(items):
            page["nextToken"] = str(start + limit)
        return json.dumps(page)

    BedrockBackend._list_arns = _list_arns  # type: ignore[method-assign]
    BedrockResponse.list_imported_models = r_list  # type: ignore[attr-defined]
    BedrockBackend._reaper_imported = True  # type: ignore[attr-defined]
