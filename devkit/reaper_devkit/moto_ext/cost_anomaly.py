"""Cost Anomaly Detection, which moto 5.2.5 lacks: monitors, subscriptions, and the alert AWS sends.

Written from the API reference (Cost Explorer, awsJson1_1, target AWSInsightsIndexService):
- CreateAnomalyMonitor(AnomalyMonitor {MonitorName, MonitorType DIMENSIONAL|CUSTOM,
  MonitorDimension SERVICE|LINKED_ACCOUNT|TAG|COST_CATEGORY, MonitorSpecification}, ResourceTags)
  -> MonitorArn. "For customer managed monitors, do not specify this field [MonitorDimension]";
  "If MonitorDimension is TAG, set this field to { "Tags": { "Key": "your tag key" } }";
  "If MonitorDimension is SERVICE or LINKED_ACCOUNT, do not specify this field".
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_CreateAnomalyMonitor.html
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_AnomalyMonitor.html
- GetAnomalyMonitors(MonitorArnList, NextPageToken, MaxResults) -> AnomalyMonitors, NextPageToken;
  UnknownMonitorException for an ARN it does not know, InvalidNextTokenException for a token it did
  not hand out. https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_GetAnomalyMonitors.html
- CreateAnomalySubscription(AnomalySubscription {SubscriptionName, MonitorArnList, Subscribers
  [{Type EMAIL|SNS, Address}], Frequency DAILY|IMMEDIATE|WEEKLY, ThresholdExpression | Threshold})
  -> SubscriptionArn; UnknownMonitorException for a monitor that does not exist. "Notifications are
  sent either over email (for DAILY and WEEKLY frequencies) or SNS (for IMMEDIATE frequency)": an SNS
  subscriber on another frequency is refused (ValidationException).
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_CreateAnomalySubscription.html
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_AnomalySubscription.html
- GetAnomalySubscriptions(SubscriptionArnList, MonitorArn, NextPageToken, MaxResults).
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_GetAnomalySubscriptions.html
- The alert an SNS subscriber receives (`alert()`), as the user guide's example message:
  https://docs.aws.amazon.com/cost-management/latest/userguide/getting-started-ad.html

PAGE_SIZE makes every read paginate. Patched on moto's ce response class (and state kept here per
account), so it works in-process and in server mode.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from moto.ce import responses
from moto.core.exceptions import JsonRESTError

PAGE_SIZE = 1
MONITOR_TYPES = {"DIMENSIONAL", "CUSTOM"}
DIMENSIONS = {"SERVICE", "LINKED_ACCOUNT", "TAG", "COST_CATEGORY"}
FREQUENCIES = {"DAILY", "IMMEDIATE", "WEEKLY"}
_monitors: dict[str, dict[str, dict[str, Any]]] = {}  # account -> arn -> monitor
_subscriptions: dict[str, dict[str, dict[str, Any]]] = {}  # account -> arn -> subscription
calls: list[str] = []  # every anomaly request answered or refused, in order


def _refuse(code: str, message: str) -> JsonRESTError:
    return JsonRESTError(code, message)


def _page(items: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    token = params.get("NextPageToken")
    if token is not None and not str(token).isdigit():
        raise _refuse("InvalidNextTokenException", "Invalid NextPageToken")
    first = int(token or 0)
    size = min(PAGE_SIZE, int(params.get("MaxResults") or PAGE_SIZE))
    later = first + size if first + size < len(items) else None
    return {"page": items[first : first + size], **({"NextPageToken": str(later)} if later else {})}


def _check_monitor(m: dict[str, Any]) -> None:
    kind, dimension, spec = m.get("MonitorType"), m.get("MonitorDimension"), m.get("MonitorSpecification")
    if not m.get("MonitorName") or kind not in MONITOR_TYPES:
        raise _refuse("ValidationException", "MonitorName and MonitorType (DIMENSIONAL or CUSTOM) are required")
    if kind == "CUSTOM":
        if dimension is not None or not spec:
            raise _refuse("ValidationException", "A CUSTOM monitor takes a MonitorSpecification and no MonitorDimension")
        return
    if dimension not in DIMENSIONS:
        raise _refuse("ValidationException", "A DIMENSIONAL monitor needs MonitorDimension")
    if dimension in ("SERVICE", "LINKED_ACCOUNT") and spec:
        raise _refuse("ValidationException", f"MonitorSpecification is not allowed with MonitorDimension {dimension}")
    if dimension == "TAG" and not (spec or {}).get("Tags", {}).get("Key"):
        raise _refuse("ValidationException", 'MonitorDimension TAG needs MonitorSpecification { "Tags": { "Key": ... } }')


def create_anomaly_monitor(self: Any) -> str:
    calls.append("CreateAnomalyMonitor")
    monitor = dict(json.loads(self.body or "{}").get("AnomalyMonitor") or {})
    _check_monitor(monitor)
    arn = f"arn:aws:ce::{self.current_account}:anomalymonitor/{uuid.uuid4()}"
    _monitors.setdefault(self.current_account, {})[arn] = {**monitor, "MonitorArn": arn, "CreationDate": "2026-12-01"}
    return json.dumps({"MonitorArn": arn})


def get_anomaly_monitors(self: Any) -> str:
    calls.append("GetAnomalyMonitors")
    params = json.loads(self.body or "{}")
    mine = _monitors.get(self.current_account, {})
    wanted = params.get("MonitorArnList") or list(mine)
    unknown = [arn for arn in wanted if arn not in mine]
    if unknown:
        raise _refuse("UnknownMonitorException", f"Monitor {unknown[0]} does not exist")
    answer = _page([mine[arn] for arn in wanted], params)
    return json.dumps({"AnomalyMonitors": answer.pop("page"), **answer})


def _check_subscription(account: str, s: dict[str, Any]) -> None:
    if not s.get("SubscriptionName") or not s.get("MonitorArnList") or not s.get("Subscribers"):
        raise _refuse("ValidationException", "SubscriptionName, MonitorArnList and Subscribers are required")
    if s.get("Frequency") not in FREQUENCIES:
        raise _refuse("ValidationException", "Frequency must be DAILY, IMMEDIATE or WEEKLY")
    if s.get("ThresholdExpression") is None and s.get("Threshold") is None:
        raise _refuse("ValidationException", "A threshold (ThresholdExpression) is required")
    if any(sub.get("Type") == "SNS" for sub in s["Subscribers"]) and s["Frequency"] != "IMMEDIATE":
        raise _refuse("ValidationException", "SNS subscribers receive IMMEDIATE alerts only")
    for arn in s["MonitorArnList"]:
        if arn not in _monitors.get(account, {}):
            raise _refuse("UnknownMonitorException", f"Monitor {arn} does not exist")


def create_anomaly_subscription(self: Any) -> str:
    calls.append("CreateAnomalySubscription")
    sub = dict(json.loads(self.body or "{}").get("AnomalySubscription") or {})
    _check_subscription(self.current_account, sub)
    arn = f"arn:aws:ce::{self.current_account}:anomalysubscription/{uuid.uuid4()}"
    _subscriptions.setdefault(self.current_account, {})[arn] = {**sub, "SubscriptionArn": arn, "AccountId": self.current_account}
    return json.dumps({"SubscriptionArn": arn})


def get_anomaly_subscriptions(self: Any) -> str:
    calls.append("GetAnomalySubscriptions")
    params = json.loads(self.body or "{}")
    mine = list(_subscriptions.get(self.current_account, {}).values())
    if params.get("MonitorArn"):
        mine = [s for s in mine if params["MonitorArn"] in s["MonitorArnList"]]
    if params.get("SubscriptionArnList"):
        mine = [s for s in mine if s["SubscriptionArn"] in params["SubscriptionArnList"]]
    answer = _page(mine, params)
    return json.dumps({"AnomalySubscriptions": answer.pop("page"), **answer})


def monitors(account_id: str) -> list[dict[str, Any]]:
    return list(_monitors.get(account_id, {}).values())


def subscriptions(account_id: str) -> list[dict[str, Any]]:
    return list(_subscriptions.get(account_id, {}).values())


def alert(
    account_id: str,
    monitor_arn: str,
    dimensional_value: str,
    total_impact: float,
    root_causes: list[dict[str, Any]],
    anomaly_id: str | None = None,
    actual: float | None = None,
    expected: float | None = None,
) -> dict[str, Any]:
    """The SNS message an IMMEDIATE subscription publishes, field for field as the user guide's example."""
    anomaly = anomaly_id or str(uuid.uuid4())
    monitor_id = monitor_arn.rsplit("/", 1)[-1]
    actual = actual if actual is not None else total_impact * 2
    expected = expected if expected is not None else actual - total_impact
    return {
        "accountId": account_id,
        "anomalyDetailsLink": f"https://console.aws.amazon.com/cost-management/home#/anomaly-detection/monitors/{monitor_id}/anomalies/{anomaly}",
        "anomalyEndDate": "2026-12-04T00:00:00Z",
        "anomalyId": anomaly,
        "anomalyScore": {"currentScore": 0.47, "maxScore": 0.47},
        "anomalyStartDate": "2026-12-03T00:00:00Z",
        "dimensionalValue": dimensional_value,
        "impact": {
            "maxImpact": total_impact,
            "totalActualSpend": actual,
            "totalExpectedSpend": expected,
            "totalImpact": total_impact,
            "totalImpactPercentage": round(100 * total_impact / expected, 2) if expected else None,
        },
        "monitorArn": monitor_arn,
        "rootCauses": root_causes,
        "subscriptionId": str(uuid.uuid4()),
        "subscriptionName": "mlreaper-anomalies",
    }


def reset() -> None:
    _monitors.clear()
    _subscriptions.clear()
    calls.clear()


def apply() -> None:
    if getattr(responses.CostExplorerResponse, "_reaper_anomaly", False):
        return
    responses.CostExplorerResponse.create_anomaly_monitor = create_anomaly_monitor  # type: ignore[attr-defined]
    responses.CostExplorerResponse.get_anomaly_monitors = get_anomaly_monitors  # type: ignore[attr-defined]
    responses.CostExplorerResponse.create_anomaly_subscription = create_anomaly_subscription  # type: ignore[attr-defined]
    responses.CostExplorerResponse.get_anomaly_subscriptions = get_anomaly_subscriptions  # type: ignore[attr-defined]
    responses.CostExplorerResponse._reaper_anomaly = True  # type: ignore[attr-defined]
