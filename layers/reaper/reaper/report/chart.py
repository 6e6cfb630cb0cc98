"""The savings chart of `reaper report --output html`: estimated dollars saved per day, stacked by kind,
drawn by matplotlib into an inline SVG (a static file: no network, no script).

matplotlib is an optional extra (`pip install 'mlreaper[report]'`), never in the Lambda layer, and is
imported only when a chart is drawn, so nothing else pays for it.
"""

from __future__ import annotations

import io
from datetime import date
from typing import Any

from reaper.core.errors import UsageError

PIP = "pip install 'mlreaper[report]'"


def require_matplotlib() -> Any:
    """The matplotlib module, or the one-line usage error that says how to get it."""
    try:
        import matplotlib
    except ImportError:
        raise UsageError(
            f"--output html draws its chart with matplotlib, which is not installed: {PIP} (or pip install matplotlib)"
        ) from None
    return matplotlib


BAR_WIDTH = 0.8  # of a day


def bar_centres(days: list[date]) -> list[float]:
    """Each day's bar centred at its noon, in matplotlib's day numbers (a date is its midnight): the bar
    spans 09:36 to 14:24 of its own day, so a day's saving is never drawn over the day before."""
    from matplotlib.dates import date2num

    return [float(date2num(d)) + 0.5 for d in days]


def savings_svg(daily: dict[date, dict[str, float]], title: str) -> str:
    """One bar per day, stacked by kind, as an `<svg>` element (no XML prolog, text kept as text)."""
    matplotlib = require_matplotlib()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "mlreaper", "font.size": 9}):
        fig = savings_figure(daily, title)
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]


def savings_figure(daily: dict[date, dict[str, float]], title: str) -> Any:
    """The chart as a matplotlib Figure (the object API: no pyplot, no GUI backend, no global state)."""
    require_matplotlib()
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.figure import Figure

    days = list(daily)
    xs = bar_centres(days)
    kinds = sorted({k for per_kind in daily.values() for k in per_kind})
    fig = Figure(figsize=(9, 3.4), layout="constrained")
    ax = fig.subplots()
    bottom = [0.0] * len(days)
    for kind in kinds:
        heights = [daily[d].get(kind, 0.0) for d in days]
        ax.bar(xs, heights, bottom=bottom, label=kind, width=BAR_WIDTH)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    ax.set_ylabel("estimated $ saved per day")
    ax.set_title(title, loc="left")
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", alpha=0.3)
    if kinds:
        ax.legend(frameon=False, loc="upper left", fontsize=8)
    else:
        ax.text(0.5, 0.5, "nothing was reclaimed in this period", transform=ax.transAxes, ha="center", va="center")
    ax.set_ylim(bottom=0)
    ax.set_xlim(xs[0] - 1, xs[-1] + 1)
    return fig
