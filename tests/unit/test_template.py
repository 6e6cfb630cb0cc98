"""The stack's promises that are not IAM: no failure goes unseen, the defaults are the safe ones."""

from __future__ import annotations

import json

from reaper_devkit.template import ROOT, load

T = load()
RESOURCES = T["Resources"]
FUNCTIONS = [n for n, r in RESOURCES.items() if r["Type"] == "AWS::Serverless::Function"]


def _refs(value: object) -> set[str]:
    """Logical ids a CloudFormation value points at (Ref / GetAtt / ${...} in Sub)."""
    text = json.dumps(value)
    return {name for name in RESOURCES if name in text}


def test_every_sweep_function_has_an_error_alarm():
    alarmed = set()
    for r in RESOURCES.values():
        if r["Type"] == "AWS::CloudWatch::Alarm" and r["Properties"].get("MetricName") == "Errors":
            alarmed |= _refs(r["Properties"]["Dimensions"])
    sweeps = [n for n in FUNCTIONS if RESOURCES[n].get("Metadata", {}).get("ReaperKind")]
    assert sweeps and set(sweeps) <= alarmed


def test_the_dead_letter_queue_is_alarmed_and_every_function_is_on_the_dashboard():
    dlq_alarm = RESOURCES["NotifyDeadLetterAlarm"]["Properties"]
    assert "NotifyDeadLetterQueue" in _refs(dlq_alarm["Dimensions"])
    body = RESOURCES["OperationsDashboard"]["Properties"]["DashboardBody"]
    assert set(FUNCTIONS) <= _refs(body)


def test_deploys_in_dry_run_by_default():
    assert T["Parameters"]["Mode"]["Default"] == "dry-run"
    assert 'Mode=\\"dry-run\\"' in (ROOT / "samconfig.toml").read_text()


def test_action_log_keeps_history():
    props = RESOURCES["ActionLogTable"]["Properties"]
    assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert RESOURCES["ActionLogTable"]["DeletionPolicy"] == "Retain"


def test_the_notifier_reports_partial_batch_failures_so_nothing_is_lost():
    queue_event = RESOURCES["NotifierFunction"]["Properties"]["Events"]["Queue"]["Properties"]
    assert queue_event["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    redrive = RESOURCES["NotifyQueue"]["Properties"]["RedrivePolicy"]
    assert "NotifyDeadLetterQueue" in _refs(redrive) and redrive["maxReceiveCount"] >= 3


def test_the_notifier_is_paced_for_slack():
    queue_event = RESOURCES["NotifierFunction"]["Properties"]["Events"]["Queue"]["Properties"]
    assert queue_event["ScalingConfig"]["MaximumConcurrency"] == 2  # AWS's minimum
    timeout = RESOURCES["NotifierFunction"]["Properties"]["Timeout"]
    assert RESOURCES["NotifyQueue"]["Properties"]["VisibilityTimeout"] >= 6 * timeout


def _alarm_on(metric: str) -> dict:
    alarms = [
        r["Properties"] for r in RESOURCES.values() if r["Type"] == "AWS::CloudWatch::Alarm" and r["Properties"].get("MetricName") == metric
    ]
    assert len(alarms) == 1, f"no alarm on {metric}"
    return alarms[0]


def test_error_verdicts_and_an_unusable_webhook_secret_raise_alarms():
    env = T["Globals"]["Function"]["Environment"]["Variables"]
    for metric in ("Verdict_error", "SlackConfigError"):
        alarm = _alarm_on(metric)
        # the namespace and service dimension powertools publishes under (reaper.core.observability)
        assert alarm["Namespace"] == env["POWERTOOLS_METRICS_NAMESPACE"]
        assert alarm["Dimensions"] == [{"Name": "service", "Value": env["POWERTOOLS_SERVICE_NAME"]}]
        assert alarm["Threshold"] == 0 and alarm["ComparisonOperator"] == "GreaterThanThreshold"
        assert alarm["AlarmActions"] == [{"Ref": "AlarmTopic"}]


def test_slack_can_be_skipped_and_the_url_must_look_like_a_webhook():
    import re

    param = T["Parameters"]["SlackWebhookUrl"]
    assert param["Default"] == "" and param["NoEcho"] is True
    pattern = re.compile(param["AllowedPattern"])
    assert pattern.fullmatch("") and pattern.fullmatch("https://hooks.slack.com/services/T0/B0/abc123")
    for bad in (
        "hooks.slack.com/services/T0/B0/x",
        "http://hooks.slack.com/services/x",
        " https://hooks.slack.com/services/x",
        "https://evil.example/hooks.slack.com/x",
        "https://hooks.slack.com/services/x y",
    ):
        assert not pattern.fullmatch(bad), bad
    assert T["Parameters"]["SlackWebhookSecretArn"]["Default"] == ""


def test_every_parameter_is_grouped_once_and_labelled():
    interface = T["Metadata"]["AWS::CloudFormation::Interface"]
    grouped = [p for g in interface["ParameterGroups"] for p in g["Parameters"]]
    assert sorted(grouped) == sorted(T["Parameters"]), "each parameter in exactly one group"
    assert set(interface["ParameterLabels"]) == set(T["Parameters"])
    assert all(g["Label"]["default"] for g in interface["ParameterGroups"])
