"""The performance tables (docs/performance.md) from bench result files.

.venv/bin/python bench/table.py bench/results/floor-1000.json bench/results/floor-10000.json
.venv/bin/python bench/table.py --act bench/results/acting-1000-every-kind.json   # the price of acting, per kind
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def rows(paths: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in paths:
        out.extend(json.loads(Path(p).read_text())["sweeps"])
    return sorted(out, key=lambda r: (r["kind"], r["n"]))


def table(sweeps: list[dict[str, Any]]) -> str:
    head = (
        "| kind | N | calls | per resource | floor | ratio | moto sweep | peak RSS (+sweep) | projected on AWS | reaper's bill / 1,000 / "
        "month | idle spend found / 1,000 / month |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    lines = [head]
    for r in sweeps:
        late = " ⚠" if r["half_timeout_exceeded"] else ""
        lines.append(
            f"| {r['kind']} | {r['n']:,} | {r['calls_total']:,} | {r['calls_per_resource']:.3f} | {r['floor_total']:,} | "
            f"{r['floor_ratio']:.2f}× "
            f"| {r['sweep_seconds']:.1f} s | {r['peak_mb']:.0f} MB (+{r['sweep_rss_growth_mb']:.0f}) | {r['projected_aws_seconds']:.1f} "
            f"s{late} "
            f"| ${r['monthly_bill_per_1000_usd']['total']:,.2f} | ${r['idle_spend_found_per_1000_usd_month']:,.0f} |"
        )
    return "\n".join(lines)


def acting_rows(paths: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in paths:
        out.extend(json.loads(Path(p).read_text()).get("acting", []))
    return sorted(out, key=lambda r: (r["kind"], r["n"]))


def acting_table(entries: list[dict[str, Any]]) -> str:
    """Calls per resource of the dry run beside calls per action of the enforce sweep, and the 10,000 backlog."""
    lines = [
        "| kind | N | dry run, calls/resource | acted | changes/action | calls/action beyond the dry run and the changes "
        "| net of notices | 10,000 to act on: projected | parts of ≤ 150 s | within 50 | parts of 270 s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for r in entries:
        b = r["backlog_10000"]
        net = r.get("calls_per_action_net_of_notices", r["calls_per_action"])
        lines.append(
            f"| {r['kind']} | {r['n']:,} | {r['dry_run_calls_per_resource']:.3f} | {r['acted']:,} | {r['changes_per_action']:.3f} "
            f"| {r['calls_per_action']:.3f} | **{net:.3f}** | {b['projected_s']:,.0f} s | {b['parts']} "
            f"| {'yes' if b['within_max_parts'] else '**no**'} | {b.get('parts_of_full_length', '')} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--act"]:
        print(acting_table(acting_rows(sys.argv[2:])))
    else:
        print(table(rows(sys.argv[1:])))
