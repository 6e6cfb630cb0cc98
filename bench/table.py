"""The performance table (docs/performance.md) from bench result files.

.venv/bin/python bench/table.py bench/results/floor-1000.json bench/results/floor-10000.json
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


if __name__ == "__main__":
    print(table(rows(sys.argv[1:])))
