"""The one door for acting on named resources (pipeline.sweep_kind(..., only=...)): only the named ones are
decided, and a kind that can read just those is asked for just those, by id (an ARN's last part)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from reaper.core.model import Decision, Resource, Verdict
from reaper.kinds import base
from reaper.kinds.base import Kind, KindDeclaration, Parts
from reaper.sweep import pipeline

NOW = datetime(2026, 1, 5, 12, tzinfo=UTC)


def _r(id_: str) -> Resource:
    return Resource(kind="fsx", id=id_, arn=f"arn:aws:fsx:eu-west-1:123456789012:file-system/{id_}", region="eu-west-1", state="AVAILABLE")


def test_only_the_named_resources_pass_whatever_discovery_returned():
    # Given a discovery that returned more than was asked for
    found = [_r("fs-0a"), _r("fs-0b"), _r("fs-0c")]
    # When the door is asked for one by id and one by ARN, then for all (None)
    named = pipeline.named(found, ["fs-0a", found[2].arn])
    # Then only those two are left; without `only`, every one
    assert [r.id for r in named] == ["fs-0a", "fs-0c"]
    assert pipeline.named(found, None) == found
    assert pipeline.named(found, []) == []


def test_a_kind_that_reads_named_resources_is_asked_for_their_ids(monkeypatch):
    seen: dict[str, Any] = {}

    def discover(clients: Any, settings: Any, now: datetime) -> list[Resource]:
        seen["all"] = True
        return []

    def discover_named(clients: Any, settings: Any, now: datetime, only: frozenset[str]) -> list[Resource]:
        seen["only"] = only
        return []

    parts: Parts[None] = Parts(discover, lambda ctx, rs: {}, lambda *a: Decision(Verdict.KEEP, "-"), lambda c, r: None, lambda r, a: None)
    decl = KindDeclaration(name="fsx", tag_resource_types=(), tag_service="fsx", read_permissions=(), actions={}, parts="x:PARTS")
    monkeypatch.setattr(base, "resolve", lambda ref: replace(parts, discover_named=discover_named))
    # When a kind that can read named resources is asked for one by ARN and one by id
    Kind(decl).discover(None, None, NOW, only=[_r("fs-0a").arn, "fs-0b"])  # type: ignore[arg-type]
    # Then it reads just those, by id
    assert seen == {"only": frozenset({"fs-0a", "fs-0b"})}
    # and a kind that cannot is asked for everything (the pipeline keeps the named ones)
    monkeypatch.setattr(base, "resolve", lambda ref: parts)
    Kind(decl).discover(None, None, NOW, only=["fs-0a"])  # type: ignore[arg-type]
    assert seen["all"] is True
