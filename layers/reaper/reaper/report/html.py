"""`reaper report --output html`: one static page (the groups of the table, the totals, a chart of the
savings per day), readable offline: inline CSS and SVG, no script, no link to fetch.

Every string that came from a tag or from AWS (owner, project, names) is escaped with `html.escape`;
the chart's own text is escaped by matplotlib's SVG writer.
"""

from __future__ import annotations

from datetime import datetime
from html import escape

from reaper.report.chart import savings_svg
from reaper.report.summary import TOTAL_NOTE, Group, Reclaimed, daily_savings, dry_run_line, notes, off_now_line

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:960px;color:#1d232a;padding:0 1rem}
h1{font-size:1.4rem;margin-bottom:.2rem} .sub{color:#5b6570;margin-top:0}
table{border-collapse:collapse;width:100%;margin:1rem 0} th,td{padding:.35rem .6rem;border-bottom:1px solid #e3e6ea;text-align:left}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums} tfoot td{font-weight:600;border-top:2px solid #1d232a}
.note{color:#5b6570;font-size:.9rem} figure{margin:1rem 0} figure svg{max-width:100%;height:auto}
"""


def _row(cells: list[tuple[str, bool]], tag: str = "td") -> str:
    return "<tr>" + "".join(f"<{tag}{' class=n' if numeric else ''}>{escape(text)}</{tag}>" for text, numeric in cells) + "</tr>"


def _table(groups: list[Group], by: str) -> str:
    """One row per group and a totals row; a sentence when nothing was reclaimed."""
    head = [(by, False), ("resources", True), ("actions", True), ("hours off", True), ("saved (est.)", True), ("notes", False)]
    body = [
        _row(
            [
                (g.key, False),
                (str(len(g.resources)), True),
                (str(g.actions), True),
                (f"{g.hours_off:,.1f}", True),
                (f"${g.saved_usd:,.2f}", True),
                (notes(g), False),
            ]
        )
        for g in groups
    ]
    totals = [
        ("total", False),
        (str(sum(len(g.resources) for g in groups)), True),
        (str(sum(g.actions for g in groups)), True),
        (f"{sum(g.hours_off for g in groups):,.1f}", True),
        (f"${sum(g.saved_usd for g in groups):,.2f}", True),
        ("", False),
    ]
    table = (
        f"<table><thead>{_row(head, 'th')}</thead><tbody>{''.join(body)}</tbody><tfoot>{_row(totals)}</tfoot></table>"
        if groups
        else "<p>Nothing was reclaimed in this period.</p>"
    )
    return table


def render(
    groups: list[Group],
    items: list[Reclaimed],
    by: str,
    since: datetime,
    now: datetime,
    dry_run_findings: int,
    kinds: list[str] | None = None,
) -> str:
    scope = f"kind {', '.join(kinds)}; " if kinds else ""
    title = f"Estimated savings per day since {since:%Y-%m-%d} (UTC)"
    chart = savings_svg(daily_savings(items, since, now), title)
    table = _table(groups, by)
    off = off_now_line(items)
    said = ([off[0].upper() + off[1:] + "."] if off else []) + [
        TOTAL_NOTE[0].upper() + TOTAL_NOTE[1:] + ".",
        "A stopped job saves at most what its ceiling would still have let it run; it counts on the day it was stopped.",
    ]
    if dry_run_findings:
        said.append(dry_run_line(dry_run_findings) + ".")
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            "<title>mlreaper savings report</title>",
            f"<style>{STYLE}</style></head><body>",
            "<h1>mlreaper: what was reclaimed</h1>",
            f'<p class="sub">{escape(scope)}from {since:%Y-%m-%d %H:%M} to {now:%Y-%m-%d %H:%M} UTC, by {escape(by)}; '
            "estimates from list prices</p>",
            f"<figure>{chart}</figure>",
            table,
            "".join(f'<p class="note">{escape(line)}</p>' for line in said),
            "</body></html>",
            "",
        ]
    )
