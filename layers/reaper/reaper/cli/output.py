"""What the CLI prints: the plan table (fitted to the terminal, reasons whole), log lines, and a closed pipe handled."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import textwrap
from collections.abc import Iterable
from typing import TYPE_CHECKING

from reaper.core.errors import OutputError
from reaper.core.model import Mode, Outcome, Resource, Verdict
from reaper.core.text import cut

if TYPE_CHECKING:
    from reaper.record.logentry import LogEntry

DEFAULT_WIDTH = 120  # when stdout is not a terminal (a pipe, a file): what docs/cli.md promises
MIN_REASON = 24
REASON_COLUMN = 40  # narrower than this, each row's reason goes on its own lines under the row
CAPS = {"ID": 40, "OWNER": 24}  # longer ids and owners are cut with an ellipsis; --json keeps them whole
ORDER = {Verdict.ERROR: 0, Verdict.ACT: 1, Verdict.WARN: 2, Verdict.EXEMPT: 3, Verdict.KEEP: 4}


class Printer:
    """Prints lines; when the reader has gone (`reaper plan | head -1`) it stops quietly, the
    command keeps its own exit status, and Python's flush at exit finds nothing to complain about."""

    def __init__(self) -> None:
        self.closed = False

    def __call__(self, text: str) -> None:
        if self.closed:
            return
        try:
            print(text, flush=True)
        except BrokenPipeError:
            self.closed = True
            silence_stdout()
        except OSError as exc:  # ENOSPC, EIO: said on one line by the CLI, not a traceback
            self.closed = True
            silence_stdout()
            raise OutputError(f"cannot write the output: {exc.strerror or exc}") from None


def silence_stdout() -> None:
    """Point stdout at /dev/null (the recipe in Python's `signal` docs, "Note on SIGPIPE")."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # stdout is not a real file (tests capture it)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def terminal_width() -> int:
    """The terminal's width; into a pipe or a file, COLUMNS if set, else 120 (not the width of
    whatever terminal the parent process happens to have)."""
    with contextlib.suppress(AttributeError, ValueError):  # stdout replaced or closed: use COLUMNS below
        if sys.stdout.isatty():
            return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else DEFAULT_WIDTH


def select(outcomes: Iterable[Outcome], verdicts: Iterable[str] = (), owners: Iterable[str] = ()) -> list[Outcome]:
    """The outcomes `--verdict` and `--owner` ask for (each repeatable; owner case-insensitive)."""
    want_v = {v.strip().lower() for v in verdicts}
    want_o = {o.strip().lower() for o in owners}
    return [o for o in outcomes if (not want_v or o.verdict.value in want_v) and (not want_o or (o.owner or "").strip().lower() in want_o)]


def verb(o: Outcome) -> str:
    action = o.decision.action or "-"
    if o.verdict is Verdict.ACT and not o.executed and o.mode is Mode.DRY_RUN:
        return f"would {action}"
    return action


def format_table(outcomes: list[Outcome], width: int | None = None) -> str:
    if not outcomes:
        return "nothing found"
    width = width or terminal_width()
    one_region = len({o.resource.region for o in outcomes}) == 1  # then the region column says nothing
    head: tuple[str, ...] = ("KIND", "REGION", "ID", "OWNER", "VERDICT", "ACTION", "$/H")
    rows: list[tuple[tuple[str, ...], str]] = []
    for o in sorted(outcomes, key=lambda o: (ORDER[o.verdict], o.resource.kind, o.resource.id)):
        r = o.resource
        price = "?" if r.hourly_usd is None else f"{r.hourly_usd:.2f}" + ("*" if r.price is not None and not r.price.live else "")
        rows.append(((r.kind, r.region, r.id, o.owner or "-", o.verdict.value, verb(o), price), o.reason))
    if one_region:
        head = head[:1] + head[2:]
        rows = [(row[:1] + row[2:], reason) for row, reason in rows]
    cells, widths, fixed = _fit(head, [row for row, _ in rows], width - MIN_REASON)
    # too little room for a readable reason column: each reason on its own lines, ids and owners wider
    wrapped = fixed + REASON_COLUMN > width  # a narrow terminal: each reason goes on its own line under its row
    if wrapped:
        cells, widths, fixed = _fit(head, [row for row, _ in rows], width + 2, floor=8)
        lines = ["  ".join(h.ljust(widths[i]) for i, h in enumerate(head)).rstrip()]
        for c, (_, reason) in zip(cells, rows, strict=True):
            lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(c)).rstrip())
            lines.extend("    " + part for part in wrap_reason(reason, max(width - 4, MIN_REASON)))
    else:
        lines = ["  ".join(h.ljust(widths[i]) for i, h in enumerate(head)) + "  REASON"]
        for c, (_, reason) in zip(cells, rows, strict=True):
            first, *more = wrap_reason(reason, width - fixed)
            lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(c)) + "  " + first)
            lines.extend(" " * fixed + part for part in more)
    lines.append("" if not one_region else f"(all in {outcomes[0].resource.region})")
    lines.extend(textwrap.fill(line, width, subsequent_indent="  ") for line in footer(outcomes))
    return "\n".join(lines)


def wrap_reason(reason: str, width: int) -> list[str]:
    """The whole reason in lines of at most `width` (a word longer than that is broken): a reason is the
    evidence for a change, so the table never cuts it, on a terminal, in a file or into a pipe."""
    return textwrap.wrap(" ".join(reason.split()), width, break_on_hyphens=False) or [""]


def _fit(head: tuple[str, ...], rows: list[tuple[str, ...]], budget: int, floor: int = 12) -> tuple[list[tuple[str, ...]], list[int], int]:
    """Cells cut to their caps, the column widths, and the width they take with their separators:
    the id and owner columns are narrowed (to `floor` at least) until that fits `budget`."""
    caps = dict(CAPS)
    while True:
        cells = [tuple(cut(c, caps.get(head[i], 10_000)) for i, c in enumerate(row)) for row in rows]
        widths = [max(len(head[i]), *(len(c[i]) for c in cells)) for i in range(len(head))]
        fixed = sum(widths) + 2 * len(widths)
        wide = [k for k in caps if widths[head.index(k)] > floor]
        if fixed <= budget or not wide:
            return cells, widths, fixed
        for k in wide:
            caps[k] = widths[head.index(k)] - 1


def footer(outcomes: list[Outcome]) -> list[str]:
    """Counts, then what acting saves, honestly per kind: something that runs until stopped saves
    its hourly price; a job has a spend so far, and stopping it saves at most what is left to its ceiling."""
    counts = ", ".join(f"{sum(1 for o in outcomes if o.verdict is v)} {v.value}" for v in Verdict)
    lines = [f"{len(outcomes)} resources: {counts}"]
    reapable = [o for o in outcomes if o.verdict in (Verdict.ACT, Verdict.WARN)]
    jobs = [o for o in reapable if isinstance(o.decision.evidence, dict) and o.decision.evidence.get("estimated_usd") is not None]
    running = [o for o in reapable if o not in jobs]
    hourly = sum(o.resource.hourly_usd or 0 for o in running)
    if running:
        unpriced = sum(1 for o in running if o.resource.hourly_usd is None)
        note = f" ({unpriced} without a price)" if unpriced else ""
        lines.append(f"stopping the {len(running)} act/warn resource(s) saves about ${hourly:,.2f}/h (${hourly * 730:,.0f}/month){note}")
    if jobs:
        spent = sum(float(o.decision.evidence["estimated_usd"]) for o in jobs)
        lines.append(
            f"{len(jobs)} job(s) to stop have spent about ${spent:,.2f} so far; "
            "stopping saves at most what their ceilings would still let them run"
        )
    said = price_sources([o.resource for o in outcomes])
    return [*lines, said] if said else lines


def price_sources(resources: list[Resource]) -> str:
    """Where the figures come from (docs/prices.md): '$/h: 12 AWS Price List API 2026-12-05; 3 marked * from the
    shipped copy of AWS's price list (dated 2026-12-02); 2 unpriced (?)'; empty when nothing is priced or unpriced."""
    live = sorted({r.price.label for r in resources if r.price is not None and r.price.live and r.hourly_usd is not None})
    shipped = sorted({r.price.label for r in resources if r.price is not None and not r.price.live and r.hourly_usd is not None})
    n_live = sum(1 for r in resources if r.price is not None and r.price.live and r.hourly_usd is not None)
    n_shipped = sum(1 for r in resources if r.price is not None and not r.price.live and r.hourly_usd is not None)
    unpriced = sum(1 for r in resources if r.hourly_usd is None)
    parts = []
    if n_live:
        parts.append(f"{n_live} from the {', '.join(live)}")
    if n_shipped:
        parts.append(f"{n_shipped} marked * from the {', '.join(shipped)} (the Price List API was not used)")
    if unpriced:
        parts.append(f"{unpriced} unpriced (?): no list price for them (never $0), left out of every total")
    return "$/h: " + "; ".join(parts) if parts else ""


def format_log_line(e: LogEntry) -> str:
    at = e.logged_at
    where = f"{e.kind} {e.id} ({e.region})"
    if e.type == "notice":
        body = e.title or ""
        text = (e.text or "").replace("\n", " ")
        return f"{at:20} {'notice':6} {'-':18} {where} — {body}{': ' + text if text else ''}"
    action = e.action or "-"
    if not e.is_verdict and not e.verdict:
        return f"{at:20} {str(e.type):6} {action:18} {where} — {e.reason or e.text or ''}"
    if e.verdict == "act" and e.unconfirmed:
        action = f"unconfirmed {action}"  # recorded before the call; how it ended was never recorded
    elif e.verdict == "act" and not e.executed:
        action = f"would {action}"
    verdict = str(e.verdict) if e.has("verdict") else "?"
    return f"{at:20} {verdict:6} {action:18} {where} — {e.reason}"


def fit_log_line(e: LogEntry, width: int) -> str:
    """A log entry in `width` columns (its column padding kept), its reason whole: wrapped after the
    " — " when the time, verdict, action and resource leave it room, else on its own indented lines.
    A reason is the evidence for a change, so `reaper log` never cuts it (docs/cli.md)."""
    line = " ".join(format_log_line(e).splitlines())  # a reason from AWS may hold newlines: one entry, one block
    if len(line) <= width:
        return line
    head, sep, reason = line.partition(" — ")
    if not sep:
        return "\n".join(textwrap.wrap(line, width, subsequent_indent="    ", break_on_hyphens=False))
    if len(head) + len(sep) + MIN_REASON <= width:
        first, *_ = wrap_reason(reason, width - len(head) - len(sep))
        rest = " ".join(reason.split())[len(first) :].strip()
        more = wrap_reason(rest, max(width - 4, MIN_REASON)) if rest else []
        return "\n".join([head + sep + first, *("    " + part for part in more)])
    heads = textwrap.wrap(head, width, subsequent_indent="    ", break_on_hyphens=False) or [head]
    return "\n".join([*heads, *("    " + part for part in wrap_reason(reason, max(width - 4, MIN_REASON)))])
