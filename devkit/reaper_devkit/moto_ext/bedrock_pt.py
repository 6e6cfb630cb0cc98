"""Bedrock Provisioned Throughput, which moto 5.2.5's Bedrock backend lacks: Create, Get, List and
Delete ProvisionedModelThroughput, their tags (the backend's own tagger, so ListTagsForResource,
TagResource and UntagResource work on them), and the refusals AWS documents:

- CreateProvisionedModelThroughput: a custom model the account does not have is
  ResourceNotFoundException; a name in use is ResourceInUseException (assumed: the reference lists
  no separate error for it).
  https://docs.aws.amazon.com/bedrock/latest/APIReference/API_CreateProvisionedModelThroughput.html
- DeleteProvisionedModelThroughput: "You can't delete a Provisioned Throughput before the
  commitment term is over." (refused as ValidationException: the page does not say which error);
  an unknown one is ResourceNotFoundException.
  https://docs.aws.amazon.com/bedrock/latest/APIReference/API_DeleteProvisionedModelThroughput.html
- GetProvisionedModelThroughput takes the ARN or the name.
  https://docs.aws.amazon.com/bedrock/latest/APIReference/API_GetProvisionedModelThroughput.html

A new Provisioned Throughput is InService at once (AWS: Creating first). `backdate` (tests, seeds)
moves its creation and its commitment term, in-process. The handlers are methods of moto's own
backend and response classes, so they work in server mode too.
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote

from moto.bedrock.exceptions import ResourceInUseException, ResourceNotFoundException, ValidationException
from moto.bedrock.models import BedrockBackend, bedrock_backends
from moto.bedrock.responses import BedrockResponse

TERMS = {"OneMonth": timedelta(days=30), "SixMonths": timedelta(days=182)}


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _store(backend: Any) -> dict[str, dict[str, Any]]:
    return backend.__dict__.setdefault("_reaper_pt", {})  # type: ignore[no-any-return]


def _find(backend: Any, ident: str) -> dict[str, Any]:
    for pt in _store(backend).values():
        if ident in (pt["provisionedModelArn"], pt["provisionedModelName"]):
            return pt
    raise ResourceNotFoundException(f"Provisioned Throughput {ident} not found")


def _public(pt: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in pt.items() if v is not None}
    for key in ("creationTime", "lastModifiedTime", "commitmentExpirationTime"):
        if key in out:
            out[key] = _iso(out[key])
    return out


def create(backend: Any, name: str, model_id: str, units: int, commitment: str | None, tags: list[dict[str, str]]) -> str:
    if any(pt["provisionedModelName"] == name for pt in _store(backend).values()):
        raise ResourceInUseException(f"Provisioned Throughput {name} already exists")
    if ":custom-model/" in model_id and model_id not in backend._list_arns():
        raise ResourceNotFoundException(f"Model {model_id} not found")
    if commitment is not None and commitment not in TERMS:
        raise ValidationException(f"commitmentDuration {commitment!r}: OneMonth or SixMonths")
    if units < 1:
        raise ValidationException("modelUnits: minimum value of 1")
    arn = f"arn:aws:bedrock:{backend.region_name}:{backend.account_id}:provisioned-model/{secrets.token_hex(6)}"
    model_arn = model_id if model_id.startswith("arn:") else f"arn:aws:bedrock:{backend.region_name}::foundation-model/{model_id}"
    now = datetime.now(UTC)
    _store(backend)[arn] = {
        "provisionedModelName": name,
        "provisionedModelArn": arn,
        "modelArn": model_arn,
        "desiredModelArn": model_arn,
        "foundationModelArn": model_arn
        if ":foundation-model/" in model_arn
        else model_arn.split("/")[0].replace(":custom-model", "::foundation-model") + "/base",
        "modelUnits": units,
        "desiredModelUnits": units,
        "status": "InService",
        "commitmentDuration": commitment,
        "commitmentExpirationTime": now + TERMS[commitment] if commitment else None,
        "creationTime": now,
        "lastModifiedTime": now,
    }
    if tags:
        backend.tagger.tag_resource(arn, [{"Key": t["key"], "Value": t["value"]} for t in tags])
    return arn


def delete(backend: Any, ident: str) -> None:
    pt = _find(backend, ident)
    expires = pt.get("commitmentExpirationTime")
    if pt.get("commitmentDuration") and expires is not None and expires > datetime.now(UTC):
        raise ValidationException("You can't delete a Provisioned Throughput before the commitment term is over.")
    del _store(backend)[pt["provisionedModelArn"]]
    backend.tagger.delete_all_tags_for_resource(pt["provisionedModelArn"])


def backdate(account: str, region: str, name: str, created: datetime, commitment_expires: datetime | None = None) -> None:
    """Seeds and tests: the Provisioned Throughput was created (and last changed) at `created`; a
    committed one's term ends at `commitment_expires`."""
    pt = _find(bedrock_backends[account][region], name)
    pt["creationTime"] = pt["lastModifiedTime"] = created
    if commitment_expires is not None:
        pt["commitmentExpirationTime"] = commitment_expires


def apply() -> None:
    if getattr(BedrockBackend, "_reaper_pt", False):
        return
    list_arns = BedrockBackend._list_arns

    def _list_arns(self: Any) -> list[str]:
        return list_arns(self) + list(_store(self))

    def r_create(self: BedrockResponse) -> str:
        p = json.loads(self.body)
        arn = create(
            self.bedrock_backend,
            p["provisionedModelName"],
            p["modelId"],
            int(p["modelUnits"]),
            p.get("commitmentDuration"),
            p.get("tags") or [],
        )
        return json.dumps({"provisionedModelArn": arn})

    def r_get(self: BedrockResponse) -> str:
        return json.dumps(_public(_find(self.bedrock_backend, unquote(self.path.split("?")[0].split("/")[-1]))))

    def r_list(self: BedrockResponse) -> str:
        items = sorted(_store(self.bedrock_backend).values(), key=lambda pt: pt["creationTime"])
        status = self._get_param("statusEquals")
        summaries = [_public(pt) for pt in items if status in (None, pt["status"])]
        limit = int(self._get_param("maxResults") or 1000)
        start = int(self._get_param("nextToken") or 0)
        page: dict[str, Any] = {"provisionedModelSummaries": summaries[start : start + limit]}
        if start + limit < len(summaries):
            page["nextToken"] = str(start + limit)
        return json.dumps(page)

    def r_delete(self: BedrockResponse) -> str:
        delete(self.bedrock_backend, unquote(self.path.split("?")[0].split("/")[-1]))
        return "{}"

    BedrockBackend._list_arns = _list_arns  # type: ignore[method-assign]
    BedrockResponse.create_provisioned_model_throughput = r_create  # type: ignore[attr-defined]
    BedrockResponse.get_provisioned_model_throughput = r_get  # type: ignore[attr-defined]
    BedrockResponse.list_provisioned_model_throughputs = r_list  # type: ignore[attr-defined]
    BedrockResponse.delete_provisioned_model_throughput = r_delete  # type: ignore[attr-defined]
    BedrockBackend._reaper_pt = True  # type: ignore[attr-defined]
