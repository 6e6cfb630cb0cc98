"""Totals say what they leave out (docs/prices.md): the owner's summary and the digest's blind spots."""

from __future__ import annotations

import json

from reaper.core.coverage import headline
from reaper.core.model import Mode, Verdict
from reaper.record.message import VerdictMessage
from reaper.record.owner_summary import group
from reaper.slack.owner_summary import render


def verdict(rid: str, hourly: float | None) -> VerdictMessage:
    return VerdictMessage(kind="notebook", id=rid, verdict=Verdict.ACT, owner="ana@example.com", hourly_usd=hourly, mode=Mode.DRY_RUN)


def test_the_owner_summary_counts_its_unpriced_resources_apart():
    (summary,) = group([verdict("a", 1.5), verdict("b", None), verdict("c", None)], "ev-1")
    assert summary.hourly_usd == 1.5 and summary.unpriced == 2
    text = json.dumps(render(summary).blocks)
    assert "$1.50/h in all (2 unpriced, not counted)" in text


def test_an_owner_summary_with_every_price_says_nothing_more():
    (summary,) = group([verdict("a", 1.5)], "ev-1")
    assert "in all (" not in json.dumps(render(summary).blocks)


def test_the_digest_headline_counts_the_unpriced_blind_spots():
    def row(n: int, usd: float) -> dict[str, object]:
        reasons = [{"code": "no-agent", "resources": n, "hourly_usd": usd}]
        return {"unknown": n, "unknown_hourly_usd": usd, "unknown_unpriced": 1, "reasons": reasons}

    rows = [row(3, 2.0), row(1, 0.0)]
    said = headline(rows)
    assert said is not None and said["unknown"] == 4 and said["unknown_unpriced"] == 2
