"""MlflowReads=on, the pure parts: which URLs are ever requested (https on SageMaker's MLflow domain for the
server's region, nothing else), and the judgement of a reading (a failed read is unknown, any activity in the
window keeps, a just-started server is given its window, else idle: stop); the stack grants the reads only
with the opt-in and denies them on exempt and production servers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reaper.core.model import Resource, Verdict
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.mlflow import ActionName
from reaper.kinds.mlflow.discover import to_resource
from reaper.kinds.mlflow.model import API_OFF_HOST, ServerSignal, UsageReading
from reaper.kinds.mlflow.rules import decide
from reaper.kinds.mlflow.settings import MlflowSettings
from reaper.kinds.mlflow.tracking_api import Failed, host_of
from reaper.sweep.iam import kind_denied
from reaper_devkit.template import default_conditions, function_actions, load

NOW = datetime(2026, 12, 5, 12, tzinfo=UTC)
ON = Settings().with_kind(MlflowSettings(mlflow_reads=True))
OLD = NOW - timedelta(days=3)


def server(created: datetime = OLD, modified: datetime | None = None, tags: dict[str, str] | None = None) -> Resource:
    summary = {
        "TrackingServerName": "ts",
        "TrackingServerArn": "arn:aws:sagemaker:us-east-1:123456789012:mlflow-tracking-server/ts",
        "TrackingServerStatus": "Created",
        "TrackingServerSize": "Small",
        "TrackingServerUrl": "https://t-abc123.us-east-1.experiments.sagemaker.aws",
        "CreationTime": created,
        "LastModifiedTime": modified or created,
    }
    return to_resource("us-east-1", summary, tags or {})


def judged(reading: UsageReading | None, r: Resource | None = None, settings: Settings = ON):
    r = r or server()
    return decide(r, ServerSignal(documented=True, reading=reading), read_tags(r.tags, settings), settings, NOW)


@pytest.mark.parametrize(
    "url",
    [
        "https://t-abc123.us-east-1.experiments.sagemaker.aws",
        "https://us-east-1.experiments.sagemaker.aws",
        "https://T-ABC123.us-east-1.experiments.sagemaker.aws/",
    ],
)
def test_a_url_on_sagemakers_mlflow_domain_for_its_region_is_read(url):
    assert host_of(url, "us-east-1") == url.split("//")[1].rstrip("/").lower()


@pytest.mark.parametrize(
    "url",
    [
        None,
        "http://t-abc123.us-east-1.experiments.sagemaker.aws",  # plain http
        "https://t-abc123.eu-west-1.experiments.sagemaker.aws",  # another region's
        "https://t-abc123.us-east-1.experiments.sagemaker.aws:8443",  # another port
        "https://user@t-abc123.us-east-1.experiments.sagemaker.aws",  # userinfo
        "https://t-abc123.us-east-1.experiments.sagemaker.aws.collector.example.net",  # a suffix trick
        "https://collector.example.net/t-abc123.us-east-1.experiments.sagemaker.aws",
        "https://a.b.us-east-1.experiments.sagemaker.aws",  # two labels
        "https://169.254.169.254/latest/meta-data",
    ],
)
def test_any_other_url_is_refused_before_a_request(url):
    with pytest.raises(Failed) as refused:
        host_of(url, "us-east-1")
    assert refused.value.code == API_OFF_HOST


def test_a_failed_read_is_unknown_never_idle():
    d = judged(UsageReading(unreadable="POST runs/search: HTTP 500", unknown="mlflow-api-unreachable"))
    assert d.verdict is Verdict.KEEP and d.action is None and d.unknown == "mlflow-api-unreachable"


def test_a_running_run_keeps_it_however_old():
    d = judged(UsageReading(experiments=1, running_run="r1", running_since=NOW - timedelta(days=9)))
    assert d.verdict is Verdict.KEEP and "r1 is RUNNING" in d.reason


@pytest.mark.parametrize("field", ["last_run_start", "last_run_end", "last_experiment_update", "last_ui_open"])
def test_any_activity_inside_the_window_keeps_it(field):
    d = judged(UsageReading(experiments=1, **{field: NOW - timedelta(hours=23)}))
    assert d.verdict is Verdict.KEEP and d.unknown is None


def test_nothing_for_longer_than_the_window_is_idle_and_the_stop_is_proposed():
    d = judged(UsageReading(experiments=2, last_run_end=NOW - timedelta(hours=25), last_ui_open=NOW - timedelta(hours=30)))
    assert d.verdict is Verdict.ACT and d.action is ActionName.STOP and "25 h 00 m" in d.reason


def test_a_server_just_started_is_given_its_window():
    d = judged(UsageReading(experiments=0), server(modified=NOW - timedelta(hours=2)))
    assert d.verdict is Verdict.KEEP and "started or changed" in d.reason


def test_the_idle_minutes_tag_and_the_stack_setting_set_the_window():
    reading = UsageReading(experiments=1, last_run_end=NOW - timedelta(hours=5))
    assert judged(reading, settings=Settings().with_kind(MlflowSettings(mlflow_reads=True, mlflow_idle_hours=4))).verdict is Verdict.ACT
    assert judged(reading, server(tags={"reaper:idle-minutes": "600"})).verdict is Verdict.KEEP
    assert judged(reading, server(tags={"reaper:idle-minutes": "120"})).verdict is Verdict.ACT


def test_without_the_opt_in_a_reading_is_never_used():
    d = judged(UsageReading(experiments=1, last_run_end=NOW - timedelta(days=5)), settings=Settings())
    assert d.verdict is Verdict.KEEP and d.unknown == "mlflow-no-usage-signal"


def test_the_reads_are_granted_only_with_the_opt_in_and_denied_on_exempt_and_production():
    template = load()
    assert template["Parameters"]["MlflowReads"]["Default"] == "off" and template["Parameters"]["MlflowIdleHours"]["Default"] == 24
    reads = {"sagemaker-mlflow:SearchExperiments", "sagemaker-mlflow:SearchRuns", "cloudtrail:LookupEvents"}
    assert not (function_actions("MlflowFunction") & reads)
    assert reads <= function_actions("MlflowFunction", set(default_conditions()) | {"MlflowReadsOn"})
    # the MLflow API's reads open the user's own server: denied on exempt and production like the stop
    assert {"sagemaker-mlflow:SearchExperiments", "sagemaker-mlflow:SearchRuns"} <= kind_denied("mlflow")
    assert "cloudtrail:LookupEvents" not in kind_denied("mlflow")  # account-wide, names no server


def test_a_ui_opened_within_its_longest_session_keeps_it_whatever_the_window():
    # Given a 1-hour window and a UI opened 3 h ago (a presigned UI session lasts up to 43,200 s)
    settings = Settings().with_kind(MlflowSettings(mlflow_reads=True, mlflow_idle_hours=1))
    d = judged(UsageReading(experiments=1, last_ui_open=NOW - timedelta(hours=3)), settings=settings)
    assert d.verdict is Verdict.KEEP and "up to 12 h" in d.reason
    assert judged(UsageReading(experiments=1, last_ui_open=NOW - timedelta(hours=13)), settings=settings).verdict is Verdict.ACT
