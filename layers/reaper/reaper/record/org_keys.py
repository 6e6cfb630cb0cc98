"""Where the organisation's central table files a member's forwarded record (reaper.org.central takes
it; the central digest names it so its button can read it back): one key for the writer and every reader,
in the record layer so the Slack digest need not reach up into the organisation's package."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from reaper.core.errors import BadEventError
from reaper.core.timeutil import as_utc


def logged_at(entry: Mapping[str, object]) -> datetime:
    try:
        return as_utc(datetime.fromisoformat(str(entry.get("logged_at")).replace("Z", "+00:00")))
    except ValueError:
        raise BadEventError(f"a forwarded record without a readable logged_at ({entry.get('logged_at')!r})") from None


def log_key(entry: Mapping[str, object]) -> dict[str, dict[str, str]]:
    """Where `take` files a member's record (as written, or as read back: the entry keeps its account and
    event_id), so the central digest's button can name the record it showed and the click read it back."""
    at, account, event_id = logged_at(entry), str(entry.get("account")), str(entry.get("event_id"))
    sk = f"{at:%Y-%m-%dT%H:%M:%S.%f}Z#{account}#{entry.get('kind')}#{entry.get('id')}#{event_id[:12]}"
    return {"pk": {"S": f"LOG#{at:%Y-%m-%d}"}, "sk": {"S": sk}}


def pk_of(sort_key: str) -> str:
    """The log's partition for a sort key `log_key` made (its day)."""
    return f"LOG#{sort_key[:10]}"
