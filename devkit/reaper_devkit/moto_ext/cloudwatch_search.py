"""SEARCH expressions in GetMetricData, which moto 5.2.5 does not evaluate (it treats any non-SELECT
expression as metric math over the other queries' results).

The subset the reaper uses, from https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/search-expression-syntax.html
("Specifying property names in the search", "Boolean operators"):

    SEARCH(' Namespace="CWAgent" (MetricName="a" OR MetricName="b") InstanceId="i-0123" ', 'Maximum', 300)
    MAX(SEARCH(...))   MIN(...)   SUM(...)   AVG(...)   (one series: that function of every found series, per period)

Terms are `Property="value"` exact matches (Namespace, MetricName or a dimension name), joined by
AND (or nothing, which is AND) and OR, grouped with parentheses. A metric schema in braces and
partial (token) matches are not implemented: such an expression is refused, so a test cannot pass
on a search the kit misreads. A bare SEARCH answers one result per metric found, all with the
query's Id, as GetMetricData does for an expression that returns several time series.
The documented limits are enforced: a search term of at most 1,024 characters, and at most 100
search expressions in one request ("as many as 100 search expressions on one graph").
Works in server mode: it patches the backend.

One fix beside it: moto's `Dimension.__lt__` compares a value with the other's name, so sorting a
metric's dimensions (how moto matches a MetricStat query to stored data) depends on their order,
and a metric with several dimensions, such as the agent's per-GPU series, is never found. CloudWatch
identifies a metric by its dimension set, whatever the order; here dimensions sort by (name, value).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from moto.cloudwatch import models
from moto.cloudwatch.exceptions import ValidationError

MAX_SEARCHES = 100
MAX_TERM_CHARS = 1024
WRAPPED = re.compile(r"^\s*(?:(MAX|MIN|SUM|AVG)\(\s*)?SEARCH\(\s*'((?:[^'\\]|\\.)*)'\s*,\s*'(\w+)'\s*,\s*(\d+)\s*\)\s*(\))?\s*$")
TOKEN = re.compile(r'\s*(\(|\)|OR\b|AND\b|([A-Za-z0-9_.:/\-]+)="((?:[^"\\]|\\.)*)")')
FUNCTIONS = {"MAX": max, "MIN": min, "SUM": sum, "AVG": lambda vs: sum(vs) / len(vs)}


def _tokens(term: str) -> list[Any]:
    out: list[Any] = []
    pos = 0
    while pos < len(term.rstrip()):
        m = TOKEN.match(term, pos)
        if not m:
            raise ValidationError(
                f'search term not supported by the test kit at {term[pos:]!r} (only Property="value", AND, OR, parentheses)'
            )
        out.append((m.group(2), m.group(3).replace('\\"', '"')) if m.group(2) else m.group(1))
        pos = m.end()
    return out


def _parse(tokens: list[Any]) -> Any:
    """A predicate over (namespace, name, dims) from the tokens (OR binds looser than AND)."""
    pos = 0

    def atom() -> Any:
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            inner = either()
            pos += 1  # ")"
            return inner
        key, value = tok
        if key == "Namespace":
            return lambda ns, name, dims: ns == value
        if key == "MetricName":
            return lambda ns, name, dims: name == value
        return lambda ns, name, dims: dims.get(key) == value

    def both() -> Any:
        nonlocal pos
        parts = [atom()]
        while pos < len(tokens) and tokens[pos] not in (")", "OR"):
            if tokens[pos] == "AND":
                pos += 1
            parts.append(atom())
        return lambda *m: all(p(*m) for p in parts)

    def either() -> Any:
        nonlocal pos
        parts = [both()]
        while pos < len(tokens) and tokens[pos] == "OR":
            pos += 1
            parts.append(both())
        return lambda *m: any(p(*m) for p in parts)

    return either()


Metric = tuple[str, str, tuple[tuple[str, str], ...]]


def _metrics(backend: Any) -> list[Metric]:
    """Every distinct metric (namespace, name, dimensions) stored, once per request."""
    return sorted({(d.namespace, d.name, tuple(sorted((x.name, x.value) for x in d.dimensions))) for d in backend.get_all_metrics()})


def _stat_queries(query: dict[str, Any], metrics: list[Metric]) -> tuple[str | None, list[dict[str, Any]]]:
    """The search's function (MAX, ..., or None) and one MetricStat query per metric it finds."""
    m = WRAPPED.match(query["Expression"])
    if not m or bool(m.group(1)) != bool(m.group(5)):
        raise ValidationError(f"expression not supported by the test kit: {query['Expression']!r}")
    function, term, stat, period = m.group(1), m.group(2), m.group(3), m.group(4)
    if len(term) > MAX_TERM_CHARS:
        raise ValidationError(f"The maximum search expression query size is {MAX_TERM_CHARS} characters.")
    predicate = _parse(_tokens(term))
    found = [(ns, name, dims) for ns, name, dims in metrics if predicate(ns, name, dict(dims))]
    return function, [
        {
            "Id": f"{query['Id']}__{k}",
            "MetricStat": {
                "Metric": {"Namespace": ns, "MetricName": name, "Dimensions": [{"Name": n, "Value": v} for n, v in dims]},
                "Period": int(period),
                "Stat": stat,
            },
            "Label": f"{name} {' '.join(v for _, v in dims)}".strip(),
        }
        for k, (ns, name, dims) in enumerate(found)
    ]


def _combine(query: dict[str, Any], function: str | None, series: list[dict[str, Any]], scan_by: str) -> list[dict[str, Any]]:
    if function is None:  # one result per metric found, each with the query's Id
        return [{**s, "id": query["Id"]} for s in series]
    values: dict[datetime, list[float]] = {}
    for s in series:
        for ts, v in zip(s["timestamps"], s["values"], strict=True):
            values.setdefault(ts, []).append(float(v))
    stamps = sorted(values, reverse=scan_by == "TimestampDescending")
    combined = [FUNCTIONS[function](values[ts]) for ts in stamps]
    return [
        {"id": query["Id"], "label": query.get("Label") or query["Id"], "values": combined, "timestamps": stamps, "status_code": "Complete"}
    ]


def apply() -> None:
    backend_cls = models.CloudWatchBackend
    if getattr(backend_cls, "_reaper_search", False):
        return
    original = backend_cls.get_metric_data
    models.Dimension.__lt__ = lambda self, other: (self.name or "", self.value or "") < (other.name or "", other.value or "")  # type: ignore[method-assign]

    def get_metric_data(
        self: Any, queries: list[dict[str, Any]], start_time: datetime, end_time: datetime, scan_by: str = "TimestampAscending"
    ) -> Any:
        searches = [q for q in queries if "SEARCH(" in q.get("Expression", "")]
        if not searches:
            return original(self, queries, start_time, end_time, scan_by)
        if sum(q["Expression"].count("SEARCH(") for q in searches) > MAX_SEARCHES:
            raise ValidationError(f"at most {MAX_SEARCHES} search expressions in one request")
        metrics = _metrics(self)
        planned = [(q, *_stat_queries(q, metrics)) for q in searches]
        stat_queries = [sq for _, _, sqs in planned for sq in sqs]
        answered = original(self, stat_queries, start_time, end_time, scan_by) if stat_queries else []
        by_id: dict[str, dict[str, Any]] = {a["id"]: a for a in answered}
        rest = [q for q in queries if q not in searches]
        results = list(original(self, rest, start_time, end_time, scan_by)) if rest else []
        for q, function, sqs in planned:
            results.extend(_combine(q, function, [by_id[sq["Id"]] for sq in sqs], scan_by))
        return results

    backend_cls.get_metric_data = get_metric_data
    backend_cls._reaper_search = True
