"""Slack Block Kit messages, rendered from the JSON payload the pipeline queues.

A payload is an Outcome's JSON (type "verdict") or a notice (type "notice": a check on a new
resource). Rendering is pure; posting uses slack-sdk's webhook client and raises on failure
so that the queue retries and, in the end, the dead-letter queue keeps the message.
"""

from __future__ import annotations

import re
from typing import Any

SLACK_ID = re.compile(r"^[UW][A-Z0-9]{6,}$")

VERDICT_ICON = {"act": ":octagonal_sign:", "warn": ":hourglass_flowing_sand:", "error": ":x:", "exempt": ":shield:", "keep": ":information_source:"}


class SlackPostError(Exception):
    """Slack did not take the message (status and body in the text)."""


def mention(owner: str | None) -> str:
    if not owner:
        return "no `ml:owner` tag"
    owner = owner.strip()
    return f"<@{owner}>" if SLACK_ID.match(owner) else owner


def money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def headline(p: dict[str, Any]) -> str:
    dry = p.get("mode") == "dry-run"
    what = f"{p.get('kind')} `{p.get('id')}`"
    verdict, action = p.get("verdict"), p.get("action") or "act on"
    if verdict == "act":
        past = p.get("past") or f"{action}ed"
        return f"Would {action} {what}" if dry or not p.get("executed") else f"{past.capitalize()} {what}"
    if verdict == "warn":
        return f"Will {action} {what} when the grace period ends, unless that changes"
    if verdict == "error":
        return f"Could not {action} {what}"
    if verdict == "exempt":
        return f"Left alone (notify only): {what}"
    return f"Heads-up on {what} (nothing was changed)"


def cost_line(p: dict[str, Any]) -> str:
    """What it costs; what acting saves. A job's saving is its spend so far, not a month of it."""
    evidence = p.get("evidence") or {}
    hourly = f"*Cost:* {money(p.get('hourly_usd'))}/h"
    if evidence.get("estimated_usd") is not None:
        bound = " (an upper bound: managed spot)" if evidence.get("estimate_is_upper_bound") else ""
        return f"{hourly} · about {money(evidence['estimated_usd'])} spent so far{bound}"
    if p.get("verdict") in ("act", "warn", "error"):
        return f"{hourly} · saves up to {money(p.get('monthly_usd'))}/month"
    return f"{hourly} · {money(p.get('monthly_usd'))}/month while it runs"


def render(p: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """(fallback text, blocks) for one payload."""
    if p.get("type") == "notice":
        return _render_notice(p)
    icon = VERDICT_ICON.get(str(p.get("verdict")), "")
    title = headline(p)
    dry_note = " _(dry-run: nothing was changed)_" if p.get("mode") == "dry-run" else ""
    where = f"{p.get('kind')} `{p.get('id')}` · {p.get('region')} · account {p.get('account')}"
    if p.get("instance_type"):
        count = p.get("instance_count") or 1
        where += f" · {p.get('instance_type')}" + (f" × {count}" if count != 1 else "")
    reason = p.get("reason") or ""
    if p.get("error"):
        reason += f"\n*Error:* {p['error']}"
    if p.get("detail"):
        reason += f"\n*Done:* {p['detail']}"
    cost = cost_line(p)
    fields = [
        {"type": "mrkdwn", "text": f"*Owner:* {mention(p.get('owner'))}"},
        {"type": "mrkdwn", "text": f"*Project:* {p.get('project') or '—'} · *Stage:* {p.get('stage') or '—'}"},
    ]
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"{icon} *{title}*{dry_note}\n{where}"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*Why:* {reason}\n{cost}"}},
        {"type": "section", "fields": fields},
    ]
    if p.get("undo"):
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": f"*Undo:*\n```{p['undo']}```"}})
    if p.get("opt_out"):
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"*Opt out:* `{p['opt_out']}`"}]})
    text = f"{title}: {reason}".replace("*", "")
    return text, blocks


def _render_notice(p: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    title = p.get("title") or "mlreaper notice"
    body = p.get("text") or ""
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f":information_source: *{title}*\n{body}"}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": f"Owner: {mention(p.get('owner'))} · {p.get('region')} · account {p.get('account')}"}]},
    ]
    return f"{title}: {body}", blocks


def post(webhook_url: str, payload: dict[str, Any]) -> None:
    from slack_sdk.webhook import WebhookClient

    text, blocks = render(payload)
    try:
        response = WebhookClient(webhook_url, timeout=10).send(text=text, blocks=blocks)
    except Exception as exc:  # network errors: the caller retries through the queue
        raise SlackPostError(f"Slack unreachable: {exc}") from exc
    if response.status_code != 200:
        raise SlackPostError(f"Slack answered {response.status_code}: {response.body[:200]}")
