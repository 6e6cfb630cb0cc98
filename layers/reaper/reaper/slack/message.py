"""Slack Block Kit messages, rendered from the typed message the pipeline queues (reaper.record.message).

Here: a verdict (an Outcome's message) or a notice (a check on a new resource); the owner's summary,
the budget change and the digest render in their own modules. Rendering is pure. Every value taken
from the message came from a user (tags, names) or from AWS, so it is escaped (`&`, `<`, `>`: Slack's
control characters, which would otherwise turn `<!channel>` or `<https://x|text>` into a mention or a
link) and every text is cut to Slack's limits. A cut message says so; the full record is in the action log (`reaper log`).

Limits (https://api.slack.com/reference/block-kit/blocks): section text 3,000 characters,
section fields 10 of 2,000 each, header 150 (plain text), 50 blocks per message. slack-sdk's
models enforce the section text, field count and header length when a block is serialised
(`to_dict` raises SlackObjectFormationError); the field length and the block count they do not,
so `cut` and `MAX_BLOCKS` hold those here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import JsonValue
from slack_sdk.models.blocks import Block, ContextBlock, HeaderBlock, SectionBlock
from slack_sdk.models.blocks.basic_components import MarkdownTextObject, PlainTextObject

from reaper.core.price import ADMIN_OVERRIDE
from reaper.core.text import cut
from reaper.record.message import NoticeMessage, ResourceLine, VerdictMessage

SLACK_ID = re.compile(r"^[UW][A-Z0-9]{6,}$")

SECTION_TEXT_MAX = SectionBlock.text_max_length  # 3000
HEADER_TEXT_MAX = HeaderBlock.text_max_length  # 150
FIELDS_MAX = SectionBlock.fields_max_length  # 10
FIELD_TEXT_MAX = 2000
CONTEXT_TEXT_MAX = 2000
MAX_BLOCKS = 50
FALLBACK_TEXT_MAX = 3000  # the notification text; Slack itself truncates at 40,000
CUT_NOTE = " … _(cut; the full record is in `reaper log`)_"

VERDICT_ICON = {
    "act": ":octagonal_sign:",
    "warn": ":hourglass_flowing_sand:",
    "error": ":x:",
    "exempt": ":shield:",
    "keep": ":information_source:",
}
ENTITY_TAIL = re.compile(r"&[a-z]{0,4}$")
PLAIN_UNSAFE = re.compile(r"[^A-Za-z0-9 ():_.-]")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 but tab and new line, DEL, C1


def escape(value: object) -> str:
    """Slack's three control characters as entities (https://api.slack.com/reference/surfaces/formatting#escaping),
    and control characters (other than a new line or a tab) dropped: a value is shown, never obeyed."""
    text = CONTROL.sub("", str(value))
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def button_value(data: Mapping[str, object]) -> str:
    """A button's value: JSON whose `&`, `<` and `>` are JSON escapes (\\u0026, \\u003c, \\u003e). Slack never
    shows a value, but it is a string of the posted payload like any other, so it holds no `<!channel>` either;
    json.loads reads it back unchanged (reaper.slack.request.parse_click)."""
    text = json.dumps(dict(data))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


@dataclass
class Cuts:
    """Which parts of a message were cut to fit (kept with the post claim in the action log)."""

    parts: list[str] = field(default_factory=list)

    def cut(self, text: str, limit: int, part: str, note: str = CUT_NOTE) -> str:
        if len(text) <= limit:
            return text
        self.parts.append(part)
        head = text[: max(0, limit - len(note))]
        head = ENTITY_TAIL.sub("", head)  # never leave half an entity (`&am`)
        return head + note

    def code(self, text: str, limit: int, part: str) -> str:
        """A code block whose content is cut so that the closing fence survives."""
        fence, ellipsis = "```", " …"
        if len(text) + 2 * len(fence) <= limit:
            return f"{fence}{text}{fence}"
        self.parts.append(part)
        budget = limit - 2 * len(fence) - len(ellipsis) - len(CUT_NOTE)
        head = ENTITY_TAIL.sub("", text[: max(0, budget)])
        return f"{fence}{head}{ellipsis}{fence}{CUT_NOTE}"


# One Block Kit block as slack-sdk's to_dict() makes it and Slack takes it. Its members depend on its type
# (section, context, actions, header: https://api.slack.com/reference/block-kit/blocks), so the shape is open;
# the blocks are built as slack-sdk's typed models (validated when serialised) and nothing here reads them back.
BlockJson = dict[str, object]


@dataclass(frozen=True)
class Message:
    text: str
    blocks: list[BlockJson]
    cut: tuple[str, ...] = ()


def mention(owner: str | None) -> str:
    """A Slack member ID becomes a mention; anything else is written out, escaped."""
    if not owner:
        return "no `ml:owner` tag"
    owner = str(owner).strip()
    return f"<@{owner}>" if SLACK_ID.match(owner) else escape(owner)


def money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def _verb(p: ResourceLine) -> tuple[str, str]:
    """(headline verb phrase, kind) in our own words; the caller escapes what it embeds."""
    dry = p.mode == "dry-run"
    verdict, action = p.verdict, p.action or "act on"
    if verdict == "act":
        past = p.past or f"{action}ed"
        if p.unconfirmed and not dry:  # written just before the change; the sweep died before its result
            return f"Began to {action} (unconfirmed: check it)", p.kind
        return (f"Would {action}" if dry or not p.executed else past.capitalize()), p.kind
    if verdict == "warn":
        return f"Will {action}", p.kind
    if verdict == "error":
        return f"Could not {action}", p.kind
    if verdict == "exempt":
        return "Left alone (notify only):", p.kind
    return "Heads-up on", p.kind


def headline(p: ResourceLine) -> str:
    """One line of mrkdwn, every message value escaped."""
    verb, kind = _verb(p)
    what = f"{escape(kind)} `{escape(p.id)}`"
    if p.verdict == "warn":
        return f"{escape(verb)} {what} when the grace period ends, unless that changes"
    if p.verdict in ("act", "warn", "error", "exempt"):
        return f"{escape(verb)} {what}"
    return f"Heads-up on {what} (nothing was changed)"


def price_note(p: ResourceLine) -> str:
    """Where the figure comes from (docs/prices.md): ' (list price, AWS Price List API, 2026-12-05)'; nothing for
    an unpriced resource (its cost reads "unknown") or a body queued before figures said their source."""
    if p.hourly_usd is None or not p.price_source:
        return ""
    # a queued body is text from the queue: its source and date are cut to what a label needs (Slack's 3,000 a section)
    when = f", {cut(p.price_as_of, 40)}" if p.price_as_of else ""
    if p.price_source.startswith(ADMIN_OVERRIDE):  # the admin's figure, never called AWS's list price (docs/prices.md)
        return f" ({escape(cut(p.price_source, 120))}, not AWS's list price)"
    return f" (list price, {escape(cut(p.price_source, 120))}{escape(when)})"


def cost_line(p: ResourceLine) -> str:
    """What it costs; what acting saves. A job's saving is its spend so far, not a month of it."""
    evidence = p.evidence
    hourly = f"*Cost:* {money(p.hourly_usd)}/h{price_note(p)}"
    if evidence.get("estimated_usd") is not None:
        bound = " (an upper bound: managed spot)" if evidence.get("estimate_is_upper_bound") else ""
        return f"{hourly} · about {money(_number(evidence['estimated_usd']))} spent so far{bound}"
    if p.verdict in ("act", "warn", "error"):
        return f"{hourly} · saves up to {money(p.monthly_usd)}/month"
    return f"{hourly} · {money(p.monthly_usd)}/month while it runs"


def _number(value: JsonValue) -> float | None:
    """A free-form evidence value as dollars: a JSON number, anything else unknown."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def render_message(p: VerdictMessage | NoticeMessage) -> Message:
    """The whole message for one resource's verdict or a notice, within Slack's limits."""
    if isinstance(p, NoticeMessage):
        return _render_notice(p)
    cuts = Cuts()
    verb, kind = _verb(p)
    title = headline(p)
    dry_note = " _(dry-run: nothing was changed)_" if p.mode == "dry-run" else ""
    where = f"{escape(kind)} `{escape(p.id)}` · {escape(p.region)} · account {escape(p.account)}"
    if p.instance_type:
        count = p.instance_count or 1
        where += f" · {escape(p.instance_type)}" + (f" × {escape(count)}" if count != 1 else "")
    reason = escape(p.reason)
    if p.error:
        reason += f"\n*Error:* {escape(p.error)}"
    if p.detail:
        reason += f"\n*Done:* {escape(p.detail)}"
    icon = VERDICT_ICON.get(str(p.verdict), "")
    fields = [
        f"*Owner:* {mention(p.owner)}",
        f"*Project:* {escape(p.project or '—')} · *Stage:* {escape(p.stage or '—')}",
    ]
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=cuts.cut(_plain(f"{verb} {kind}"), HEADER_TEXT_MAX, "header", note=" …"), emoji=True)),
        _section(cuts.cut(f"{icon} *{title}*{dry_note}\n{where}", SECTION_TEXT_MAX, "title")),
        _section(cuts.cut(f"*Why:* {reason}", SECTION_TEXT_MAX, "reason")),
        _section(cost_line(p)),
        SectionBlock(fields=[MarkdownTextObject(text=cuts.cut(f, FIELD_TEXT_MAX, "fields")) for f in fields[:FIELDS_MAX]]),
    ]
    if p.undo:
        blocks.append(_section("*Undo:*\n" + cuts.code(escape(p.undo), SECTION_TEXT_MAX - 9, "undo")))
    if p.opt_out:
        opt = cuts.cut(f"*Opt out:* `{escape(p.opt_out)}`", CONTEXT_TEXT_MAX, "opt_out")
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=opt)]))
    plain_title = title.replace("*", "")
    text = cuts.cut(f"{plain_title}: {reason}".replace("*", ""), FALLBACK_TEXT_MAX, "text", note=" …")
    return Message(text=text, blocks=_serialise(blocks), cut=tuple(dict.fromkeys(cuts.parts)))


def render(p: VerdictMessage | NoticeMessage) -> tuple[str, list[BlockJson]]:
    """(fallback text, blocks) for one message."""
    message = render_message(p)
    return message.text, message.blocks


def _render_notice(p: NoticeMessage) -> Message:
    cuts = Cuts()
    title = escape(p.title or "mlreaper notice")
    body = escape(p.text)
    if p.details:  # the free-form part, one escaped line each
        body += "".join(f"\n• {escape(k)}: {escape(v)}" for k, v in p.details.items())
    context = f"Owner: {mention(p.owner)} · {escape(p.region)} · account {escape(p.account)}"
    blocks: list[Block] = [
        _section(cuts.cut(f":information_source: *{title}*\n{body}", SECTION_TEXT_MAX, "text")),
        ContextBlock(elements=[MarkdownTextObject(text=cuts.cut(context, CONTEXT_TEXT_MAX, "context"))]),
    ]
    text = cuts.cut(f"{title}: {body}", FALLBACK_TEXT_MAX, "fallback", note=" …")
    return Message(text=text, blocks=_serialise(blocks), cut=tuple(dict.fromkeys(cuts.parts)))


def _plain(text: str) -> str:
    """Header text is plain_text, where entities are not the escape: it keeps only our own
    vocabulary's characters (verbs and kind names), so no payload value reaches it raw."""
    return PLAIN_UNSAFE.sub("", text).strip() or "mlreaper"


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=text))


def _serialise(blocks: list[Block]) -> list[BlockJson]:
    """to_dict() runs slack-sdk's validators: a block over a limit raises here, not at Slack."""
    return [b.to_dict() for b in blocks[:MAX_BLOCKS]]
