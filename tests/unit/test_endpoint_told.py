"""Which endpoints' daily message stands in for their configuration (kinds/endpoint/told.py): only a
message of today, in this mode, with the verdict and action the endpoint would be told, and not
when the endpoint changed since; a log that fails or holds odd entries never makes one up."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.kinds.endpoint.model import EndpointFacts
from reaper.kinds.endpoint.told import told_today
from reaper.record.logentry import BadEntry, LogEntry, from_mapping

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/{}"


def endpoint(name: str, changed: datetime | None = None, count: int = 1) -> Resource:
    return Resource(
        "endpoint",
        name,
        ARN.format(name),
        "us-east-1",
        "InService",
        instance_count=count,
        changed_at=changed or NOW - timedelta(days=1),
        facts=EndpointFacts(config=f"{name}-config"),
    )


def entry(name: str, **over: Any) -> dict[str, Any]:
    base = {
        "kind": "endpoint",
        "id": name,
        "arn": ARN.format(name),
        "region": "us-east-1",
        "verdict": "exempt",
        "mode": "dry-run",
        "action": "delete",
        "logged_at": "2026-12-02T09:00:00Z",
        "hourly_usd": 0.7364,
        "instance_count": 1,
        "instance_type": "ml.g4dn.xlarge",
        "evidence": {"type": "classic"},
    }
    return {**base, **over}


class Log:
    def __init__(self, entries: list[dict[str, Any]], fail: bool = False) -> None:
        self._entries, self.fail, self.asked = entries, fail, []

    def entries(self, since: datetime, until: datetime) -> Iterator[LogEntry]:
        self.asked.append((since, until))
        if self.fail:
            raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}}, "Query")
        for e in self._entries:  # as ActionLog.entries reads them: through the model, a malformed one skipped
            try:
                yield from_mapping(e)
            except BadEntry:
                continue


def run(entries: list[dict[str, Any]], resources: list[Resource], verdict: str = "exempt", **kw: Any):
    log = Log(entries, **kw)
    return told_today(log, resources, {r.id: verdict for r in resources}, Settings(), NOW), log  # type: ignore[arg-type]


def test_todays_message_stands_in_with_what_it_said():
    told, log = run([entry("a")], [endpoint("a")])
    assert log.asked == [(datetime(2026, 12, 2, tzinfo=UTC), NOW)]  # from midnight UTC: the day of the message claim
    t = told["a"]
    assert (t.at, t.action, t.hourly_usd, t.instance_type, t.type) == (
        datetime(2026, 12, 2, 9, 0, tzinfo=UTC),
        "delete",
        0.7364,
        "ml.g4dn.xlarge",
        "classic",
    )


def test_only_a_message_of_this_endpoint_mode_verdict_and_action_counts():
    resources = [endpoint(n) for n in "abcdefg"]
    entries = [
        entry("a", mode="enforce"),  # another mode: its claim names the mode
        entry("b", verdict="act"),  # production expects exempt
        entry("c", action=None),  # a notice with its own key (MinInstanceCount), not the daily message
        entry("d", region="eu-west-1"),
        entry("e", kind="notebook"),
        entry("f", logged_at="yesterday"),  # hostile or broken values never make one up
        {"arn": ARN.format("g")},
        entry("zz"),  # not a candidate
    ]
    told, _ = run(entries, resources)
    assert told == {}


def test_an_endpoint_changed_since_the_message_is_read_again():
    told, _ = run([entry("a")], [endpoint("a", changed=NOW - timedelta(hours=1))])
    assert told == {}


def test_a_changed_instance_count_drops_the_cost_not_the_message():
    told, _ = run([entry("a", instance_count=3)], [endpoint("a")])
    assert told["a"].hourly_usd is None and told["a"].action == "delete"


def test_a_missing_type_is_unknown_so_async_metrics_are_read():
    told, _ = run([entry("a", evidence="not a dict")], [endpoint("a")], verdict="exempt")
    assert told["a"].type is None


def test_a_failing_log_tells_nothing_so_every_configuration_is_read():
    told, _ = run([entry("a")], [endpoint("a")], fail=True)
    assert told == {}


def test_no_candidates_no_query():
    told, log = run([entry("a")], [])
    assert told == {} and log.asked == []
