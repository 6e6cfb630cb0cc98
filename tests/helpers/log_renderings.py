"""What the read side makes of action-log entries: `reaper log` (text, JSON, CSV), `reaper report`, the
daily digest (its anomalies too), the savings metric, the bill's reconciliation (what to tag, hours off by
day) and the organisation's coverage view. tests/plugins/log_capture.py
stored these for the entries it captured, made by the code before the LogEntry model;
tests/unit/test_log_entry_seam.py makes them again through the model and compares.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from reaper.cli.formats import LOG_COLUMNS, as_logged, log_row, to_csv, to_json_lines
from reaper.cli.output import fit_log_line
from reaper.core.timeutil import parse_instant
from reaper.org import views
from reaper.report import reconcile, savings_metric
from reaper.report import summary as report
from reaper.slack import digest


def read(text: str) -> Any:
    """An entry as the read side gets it: through the model, or (before it) the stored JSON's dict."""
    try:
        from reaper.record.logentry import parse_entry
    except ImportError:  # the code before the model (issue 35)
        return json.loads(text)
    return parse_entry(text)


def each(text: str) -> dict[str, Any]:
    e = read(text)
    return {
        "line": fit_log_line(e, 120),
        "narrow": fit_log_line(e, 60),
        "json": to_json_lines([as_logged(e)])[0],
        "csv": to_csv(LOG_COLUMNS, [log_row(e)]),
    }


def together(texts: list[str]) -> dict[str, Any]:
    entries = [read(t) for t in texts]
    times = [json.loads(t).get("logged_at") for t in texts]
    now = max(parse_instant(str(t)) for t in times if t) + timedelta(hours=1)
    since = now - timedelta(days=400)
    items = report.reclaimed(entries, now)
    out: dict[str, Any] = {"now": now.isoformat()}
    for by in report.GROUPS:
        groups = report.group(items, by)
        out[f"report_{by}"] = report.format_report(groups, by, since, report.would_act(entries), 120, items)
        out[f"report_{by}_json"] = [g.to_json(by) for g in groups]
    out["unconfirmed"] = report.unconfirmed(entries)
    out["daily"] = {str(k): v for k, v in report.daily_savings(items, now - timedelta(days=30), now).items() if v}
    out["hours_off"] = {str(k): v for k, v in report.daily_hours_off(items, now - timedelta(days=30), now).items() if v}
    out["logged_days"] = sorted({str(report.logged_day(r.entry)) for r in items})
    out["to_tag"] = reconcile.to_tag(entries)
    out["digest"] = digest.build(entries, now).model_dump_json()
    out["savings"] = {k: str(v) for k, v in savings_metric.saved_between(entries, now - timedelta(days=30), now).items()}
    rows = views.latest_coverage(entries)
    out["coverage"] = views.format_coverage(rows)
    out["coverage_json"] = to_json_lines(rows)
    return out
