"""The notebook rule as a pure function: idle window, gaps, off-hours, the agent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper.core.model import Verdict
from reaper.core.settings import OffHours, Settings
from reaper.kinds.notebook.model import ActivitySignal
from reaper.kinds.notebook.settings import NotebookSettings
from tests.helpers.notebook_rules import NOW, decide, nb, signal


def test_idle_for_the_whole_window_is_stopped_with_the_evidence():
    d = decide(nb(), signal([0] * 12 + [1]))
    assert d.verdict is Verdict.ACT and d.action == "stop"
    assert d.reason == "no activity for 1 h 02 m"


def test_activity_inside_the_window_keeps():
    d = decide(nb(), signal([0] * 11 + [1]))
    assert d.verdict is Verdict.KEEP and "active" in d.reason


def test_the_idle_minutes_tag_widens_the_window():
    d = decide(nb({"reaper:idle-minutes": "120"}), signal([0] * 12 + [1]))
    assert d.verdict is Verdict.KEEP


def test_a_single_missing_period_is_unknown():
    d = decide(nb(), signal([0] * 5 + [None] + [0] * 6))
    assert d.verdict is Verdict.KEEP and "1 of 12 periods missing" in d.reason


def test_no_agent_and_no_data_is_reported_not_reaped():
    d = decide(nb(lifecycle=None), signal([]))
    assert d.verdict is Verdict.KEEP and "no activity agent" in d.reason


def test_agent_attached_but_silent_is_unknown():
    d = decide(nb(), signal([]))
    assert d.verdict is Verdict.KEEP and "no activity data" in d.reason


def test_off_hours_stops_dev_notebooks_whatever_the_activity():
    s = Settings(off_hours=OffHours(enabled=True, timezone="UTC", start="08:00", end="19:00"))
    night = datetime(2026, 12, 2, 22, 0, tzinfo=UTC)
    assert decide(nb({"ml:stage": "dev"}), signal([1] * 12, night), s, night).verdict is Verdict.ACT
    assert decide(nb({"ml:stage": "dev"}), signal([1] * 12, NOW), s, NOW).verdict is Verdict.KEEP
    saturday = datetime(2026, 12, 5, 11, 0, tzinfo=UTC)
    assert decide(nb(), signal([1] * 12, saturday), s, saturday).verdict is Verdict.ACT
    # a stage that is neither dev nor production is left to the activity rule
    assert decide(nb({"ml:stage": "research"}), signal([1] * 12, night), s, night).verdict is Verdict.KEEP


def test_stopped_notebooks_get_the_agent_only_when_asked_and_only_without_a_config():
    assert decide(nb(state="Stopped", lifecycle=None), None).verdict is Verdict.KEEP
    s = Settings().with_kind(NotebookSettings(attach_agent=True))
    d = decide(nb(state="Stopped", lifecycle=None), None, s)
    assert d.verdict is Verdict.ACT and d.action == "attach-agent" and d.skip_grace
    assert decide(nb(state="Stopped", lifecycle="team-config"), None, s).verdict is Verdict.KEEP


# -- issue 10: forged zeros for a notebook without the agent -----------------------------------


def test_forged_zeros_for_a_notebook_without_the_agent_keep_it():
    # Given a full window of 0s in MLReaper/NotebookActivity, published by someone, for a notebook
    # whose lifecycle configuration is not the agent's (or none)
    for lifecycle in (None, "team-config", "MLREAPER-ACTIVITY-AGENT", "mlreaper-activity-agent-copy"):
        d = decide(nb(lifecycle=lifecycle), signal([0] * 36))
        # Then the data is not trusted: kept, and the reason says why and how to attach the agent
        assert d.verdict is Verdict.KEEP and d.action is None, lifecycle
        assert "no activity agent" in d.reason and "36 MLReaper/NotebookActivity datapoint(s) for it ignored" in d.reason
        assert "--lifecycle-config-name mlreaper-activity-agent" in d.reason
        assert d.evidence == {"agent": False, "ignored_datapoints": 36}


def test_forged_zeros_never_act_whatever_the_tags_or_grace():
    # an idle-minutes tag, a past warning, grace 0: none of them makes untrusted data count
    s = Settings(grace_minutes=0)
    tags = {"reaper:idle-minutes": "5", "reaper:warned-at": (NOW - timedelta(hours=3)).isoformat()}
    assert decide(nb(tags, lifecycle=None), signal([0] * 36), s).verdict is Verdict.KEEP


def test_the_configured_agent_name_is_the_one_trusted():
    s = Settings().with_kind(NotebookSettings(agent_lifecycle_config="team-agent"))
    assert decide(nb(lifecycle="team-agent"), signal([0] * 13), s).verdict is Verdict.ACT
    assert decide(nb(), signal([0] * 13), s).verdict is Verdict.KEEP  # the default name is not this stack's agent


# -- issue 10: a silent agent is a finding ---------------------------------------------------


def test_a_silent_agent_after_30_minutes_in_service_is_told_once_per_start():
    # Given the agent attached, InService for 31 minutes, and not one datapoint
    since = NOW - timedelta(minutes=31)
    d = decide(
        nb({"ml:owner": "ana@example.com"}, since=since),
        signal([]),
        Settings().with_kind(NotebookSettings(agent_publish_policy_arn="arn:aws:iam::1:policy/pub")),
    )
    # Then it is kept and its owner is told, once per start of the notebook
    assert d.verdict is Verdict.KEEP and d.action is None and d.notify
    assert d.notify_key == "notebook-silent-agent:2026-12-02T13:36:00Z"
    # naming both causes with the exact commands
    assert "activity agent silent" in d.reason and "InService for 31 m" in d.reason
    assert "aws iam attach-role-policy --policy-arn arn:aws:iam::1:policy/pub --role-name" in d.reason
    assert "describe-notebook-instance --region us-east-1 --notebook-instance-name nb --query RoleArn" in d.reason
    # default channel (metric): the contract's metric, its permission and its endpoint
    assert "no MLReaper/NotebookActivity datapoint in the last 30 min" in d.reason
    assert "create-vpc-endpoint" in d.reason and "com.amazonaws.us-east-1.monitoring" in d.reason
    assert "cloudwatch:PutMetricData into MLReaper" in d.reason and "logs" not in d.reason.replace("/aws/sagemaker", "")
    assert "NAT gateway" in d.reason


def test_with_the_logs_channel_a_silent_agent_names_the_log_group_and_the_logs_endpoint():
    since = NOW - timedelta(minutes=31)
    d = decide(nb(since=since), signal([]), Settings().with_kind(NotebookSettings(agent_channel="logs")))
    assert d.verdict is Verdict.KEEP and d.notify
    assert "no activity sample (log group /mlreaper/mlreaper-activity-agent, stream nb)" in d.reason
    assert "com.amazonaws.us-east-1.logs" in d.reason and "logs:PutLogEvents on /mlreaper/mlreaper-activity-agent" in d.reason
    assert "monitoring" not in d.reason


def test_with_the_logs_channel_forged_samples_for_a_notebook_without_the_agent_are_named_as_samples():
    d = decide(nb(lifecycle=None), signal([0] * 36), Settings().with_kind(NotebookSettings(agent_channel="logs")))
    assert d.verdict is Verdict.KEEP and "36 activity sample(s) for it ignored" in d.reason


def test_the_metric_fallback_is_named_in_the_evidence_only_with_the_logs_channel():
    metric = ActivitySignal(signal([0] * 13).series, signal([]).window_end, source="metric")
    assert "source" not in decide(nb(), metric).evidence  # metric channel: the metric is the signal
    with_logs = decide(nb(), metric, Settings().with_kind(NotebookSettings(agent_channel="logs")))
    assert with_logs.verdict is Verdict.ACT and "installed before the stack used Logs" in with_logs.evidence["source"]


def test_an_unknown_channel_is_refused_by_the_settings():
    import pytest
    from pydantic import ValidationError

    for bad in ("LOGS", "log", "", "metric,logs"):
        with pytest.raises(ValidationError):
            NotebookSettings(agent_channel=bad)


def test_a_silent_agent_without_the_policy_arn_names_the_stack_output():
    d = decide(nb(since=NOW - timedelta(hours=2)), None)
    assert d.notify and "NotebookActivityPublishPolicyArn" in d.reason and "describe-stacks" in d.reason


def test_a_restart_is_a_new_finding():
    first = decide(nb(since=NOW - timedelta(hours=5)), signal([]))
    again = decide(nb(since=NOW - timedelta(minutes=40)), signal([]))
    assert first.notify_key != again.notify_key


def test_not_silent_before_30_minutes_in_service():
    for minutes in (0, 5, 29):
        d = decide(nb(since=NOW - timedelta(minutes=minutes)), signal([]))
        assert d.verdict is Verdict.KEEP and not d.notify and "no activity data" in d.reason, minutes


def test_not_silent_when_in_service_time_is_unknown():
    d = decide(nb(since=None), signal([]))
    assert not d.notify and "no activity data" in d.reason


def test_not_silent_when_a_datapoint_is_recent():
    since = NOW - timedelta(hours=3)
    # a 0 in the last complete period, or a 1 five periods back: the agent publishes
    assert not decide(nb(since=since), signal([0])).notify
    assert not decide(nb(since=since), signal([None] * 5 + [1])).notify
    # idle and publishing: still stopped as usual
    assert decide(nb(since=since), signal([0] * 13)).verdict is Verdict.ACT


def test_silent_for_the_last_30_minutes_after_publishing_before():
    # it published for an hour, then stopped (its role's policy was detached): silent again
    since = NOW - timedelta(hours=3)
    d = decide(nb(since=since), signal([None] * 6 + [1] * 12))
    assert d.verdict is Verdict.KEEP and d.notify and "no MLReaper/NotebookActivity datapoint in the last 30 min" in d.reason


def test_a_silent_notebook_without_the_agent_is_the_no_agent_case():
    d = decide(nb(lifecycle=None, since=NOW - timedelta(hours=3)), signal([]))
    assert not d.notify and "no activity agent" in d.reason
