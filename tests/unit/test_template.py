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
    assert "Mode=\\\"dry-run\\\"" in (ROOT / "samconfig.toml").read_text()


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
