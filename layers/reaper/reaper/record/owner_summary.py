"""One message per owner per sweep (bot mode): `group` folds a sweep's per-resource payloads into
one `owner-summary` payload per owner, which the courier queues. Each resource still has its own
record in the action log; the summary carries the first MAX_ITEMS of them (an SQS message holds
256 KiB) and the counts and costs of all. Slack renders it (`reaper.slack.owner_summary.render`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

MAX_ITEMS = 100

ITEM_KEYS = (
    "kind",
    "id",
    "arn",
    "region",
    "account",
    "verdict",
    "action",
    "past",
    "reason",
    "executed",
    "mode",
    "hourly_usd",
    "monthly_usd",
    "project",
    "error",
    "evidence",
)


def group(bodies: Iterable[dict[str, Any]], event_id: str) -> list[dict[str, Any]]:
    """{owner: [payloads]} as one summary payload each, owners in order of first appearance."""
    by_owner: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for body in bodies:
        by_owner[str(body.get("owner") or "").strip()].append(body)
    out = []
    for owner, items in by_owner.items():
        projects = Counter(str(i.get("project") or "") for i in items)
        out.append(
            {
                "type": "owner-summary",
                "event_id": event_id,
                "owner": owner or None,
                "project": projects.most_common(1)[0][0] or None,
                "total": len(items),
                "counts": dict(Counter(str(i.get("verdict")) for i in items)),
                "hourly_usd": round(sum(i.get("hourly_usd") or 0 for i in items), 4),
                "items": [{k: i.get(k) for k in ITEM_KEYS if i.get(k) is not None} for i in items[:MAX_ITEMS]],
            }
        )
    return out
