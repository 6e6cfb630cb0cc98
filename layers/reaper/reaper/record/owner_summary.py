"""One message per owner per sweep (bot mode): `group` folds a sweep's verdict messages into one
`owner-summary` message per owner, which the courier queues. Each resource still has its own
record in the action log; the summary carries the first MAX_ITEMS of them (an SQS message holds
256 KiB) and the counts and costs of all. Slack renders it (`reaper.slack.owner_summary.render`).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable

from reaper.record.message import OwnerSummaryMessage, ResourceLine, VerdictMessage

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


def group(verdicts: Iterable[VerdictMessage], event_id: str) -> list[OwnerSummaryMessage]:
    """{owner: [verdicts]} as one summary each, owners in order of first appearance."""
    by_owner: dict[str, list[VerdictMessage]] = defaultdict(list)
    for v in verdicts:
        by_owner[(v.owner or "").strip()].append(v)
    out = []
    for owner, items in by_owner.items():
        projects = Counter(i.project or "" for i in items)
        out.append(
            OwnerSummaryMessage(
                event_id=event_id,
                owner=owner or None,
                project=projects.most_common(1)[0][0] or None,
                total=len(items),
                counts=dict(Counter(str(i.verdict) for i in items)),
                hourly_usd=round(sum(i.hourly_usd or 0 for i in items), 4),
                unpriced=sum(1 for i in items if i.hourly_usd is None),
                items=[item(i) for i in items[:MAX_ITEMS]],
            )
        )
    return out


def item(v: VerdictMessage) -> ResourceLine:
    """A verdict's line in its owner's summary: the ITEM_KEYS it has a value for."""
    data = v.model_dump(mode="json", include=set(ITEM_KEYS))
    return ResourceLine.model_validate_json(json.dumps({k: x for k, x in data.items() if x is not None}))
