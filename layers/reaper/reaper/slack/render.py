"""Which renderer a message takes: one per type of reaper.record.message.Message."""

from __future__ import annotations

from typing import assert_never

from reaper.record.message import (
    AnomalyMessage,
    BudgetChangeMessage,
    DailyDigestMessage,
    Message,
    NoticeMessage,
    OwnerSummaryMessage,
    VerdictMessage,
)
from reaper.slack import anomaly_notice, budget_notice, digest, message, owner_summary


def render_for(m: Message) -> message.Message:
    """The Slack message for a queued message: an owner's summary, the daily digest, a budget change, or one resource's."""
    if isinstance(m, OwnerSummaryMessage):
        return owner_summary.render(m)
    if isinstance(m, DailyDigestMessage):
        return digest.render(m)
    if isinstance(m, BudgetChangeMessage):
        return budget_notice.render(m)
    if isinstance(m, AnomalyMessage):
        return anomaly_notice.render(m)
    if isinstance(m, VerdictMessage | NoticeMessage):
        return message.render_message(m)
    assert_never(m)
