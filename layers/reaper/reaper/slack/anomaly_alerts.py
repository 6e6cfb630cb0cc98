"""AnomalyAlerts=on: what the notifier needs to set up Cost Anomaly Detection and to tell an alert's owner.

Alerts arrive as SNS deliveries on the reaper's anomaly topic (docs/unit-costs.md). Each becomes an
`AnomalyMessage` (reaper.record.message) for the owner the alert's tag names (reaper.aws.anomalies),
posted once per AnomalyId through the notifier's own claim, and kept in the action log for the digest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reaper.aws import anomalies
from reaper.record.message import AnomalyCause, AnomalyMessage

DEFAULT_THRESHOLD_USD = 100.0


@dataclass(frozen=True)
class AnomalyAlerts:
    topic_arn: str
    ce: Callable[[], Any]  # Cost Explorer (us-east-1)
    tagging: Callable[[], Any]  # the Resource Groups Tagging API, for a project's owner
    threshold_usd: float = DEFAULT_THRESHOLD_USD

    def setup(self) -> anomalies.Setup:
        return anomalies.ensure(self.ce(), self.topic_arn, self.threshold_usd)

    def message(self, alert: anomalies.Alert) -> AnomalyMessage:
        key = anomalies.tag_key_of(self.ce(), alert.monitor_arn)
        owner, project = anomalies.owner_of(alert, key, self.tagging())
        causes = [
            AnomalyCause(
                service=c.service,
                region=c.region,
                usage_type=c.usage_type,
                linked_account=c.linked_account,
                linked_account_name=c.linked_account_name,
            )
            for c in alert.root_causes
        ]
        return AnomalyMessage(
            id=alert.anomaly_id,
            message_key=f"anomaly|{alert.anomaly_id}",
            account=alert.account_id,
            monitor_arn=alert.monitor_arn,
            tag_key=key,
            value=alert.dimensional_value,
            project=project,
            owner=owner,
            impact_usd=alert.impact.total_impact,
            actual_usd=alert.impact.total_actual,
            expected_usd=alert.impact.total_expected,
            start=alert.start,
            end=alert.end,
            causes=causes,
            link=alert.link,
        )
