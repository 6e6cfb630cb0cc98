"""Cost Anomaly Detection on the ML tags (AnomalyAlerts=on): the monitors, their SNS subscription, the alert.

Setup (`ensure`, once a day from the notifier's schedule, idempotent): one AWS managed monitor per
tag (`MonitorType DIMENSIONAL`, `MonitorDimension TAG`, `MonitorSpecification {"Tags": {"Key":
"ml:project"}}`, likewise `ml:owner`), each found again by its name before anything is created, and
one subscription (IMMEDIATE, to the reaper's anomaly topic, over a total impact of
`threshold_usd`) on both. IMMEDIATE is the only frequency SNS receives ("Notifications are sent
either over email (for DAILY and WEEKLY frequencies) or SNS (for IMMEDIATE frequency)").
https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_AnomalyMonitor.html
https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_AnomalySubscription.html

The alert (`Alert.parse`) is the JSON message the user guide shows for an SNS subscriber:
accountId, anomalyId, anomalyStartDate/EndDate, dimensionalValue (for a tag monitor: the tag's
value), impact {totalImpact, totalActualSpend, totalExpectedSpend, ...}, monitorArn, rootCauses
[{service, region, usageType, linkedAccount, linkedAccountName}], anomalyDetailsLink.
https://docs.aws.amazon.com/cost-management/latest/userguide/getting-started-ad.html

Whose anomaly (`owner_of`): a monitor on `ml:owner` names the owner itself; one on `ml:project`
names a project, whose owner is the `ml:owner` most of that project's resources carry (one
paginated GetResources on the project's tag). No owner: the admin channel.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar, cast

from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reaper.aws.faults import error_code
from reaper.aws.tagging import GetResourcesOutput
from reaper.core.policy import OWNER, PROJECT

CE_REGION = "us-east-1"  # Cost Explorer's one endpoint
TAG_KEYS = (PROJECT, OWNER)
SUBSCRIPTION = "mlreaper-ml-anomalies"
# the notifier's daily setup; GetAnomalyMonitors also tells an alert's tag key
SETUP_PERMISSIONS = (
    "ce:GetAnomalyMonitors",
    "ce:GetAnomalySubscriptions",
    "ce:CreateAnomalyMonitor",
    "ce:CreateAnomalySubscription",
)
OWNER_PERMISSIONS = ("tag:GetResources",)
PERMISSIONS = (*SETUP_PERMISSIONS, *OWNER_PERMISSIONS)


def monitor_name(key: str) -> str:
    return "mlreaper-" + key.replace(":", "-")


@dataclass(frozen=True)
class Setup:
    monitors: dict[str, str]  # tag key -> monitor ARN
    subscription: str
    created: tuple[str, ...]  # what this call created (empty when everything was there)


class TagSpec(TypedDict, total=False):
    Key: str


class MonitorSpecification(TypedDict, total=False):
    """An Expression (https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_Expression.html): its Tags."""

    Tags: TagSpec


class AnomalyMonitor(TypedDict, total=False):
    """The members read of an AnomalyMonitor (API_AnomalyMonitor.html, cited above)."""

    MonitorArn: str
    MonitorName: str
    MonitorDimension: str
    MonitorSpecification: MonitorSpecification


class AnomalySubscription(TypedDict, total=False):
    """The members read of an AnomalySubscription (API_AnomalySubscription.html, cited above)."""

    SubscriptionArn: str
    SubscriptionName: str


Item = TypeVar("Item", AnomalyMonitor, AnomalySubscription)


def _pages(call: Callable[..., object], key: str, shape: type[Item]) -> Iterator[Item]:
    """GetAnomalyMonitors / GetAnomalySubscriptions pages, followed by NextPageToken
    (https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_GetAnomalyMonitors.html)."""
    params: dict[str, str] = {}
    while True:
        page = cast(dict[str, object], call(**params))
        yield from cast(list[Item], page.get(key, []))
        token = page.get("NextPageToken")
        if not token:
            return
        params["NextPageToken"] = str(token)


def ensure(ce: Any, topic_arn: str, threshold_usd: float) -> Setup:
    """The monitors and the subscription, created only where missing (found by name)."""
    created: list[str] = []
    found = {m["MonitorName"]: m["MonitorArn"] for m in _pages(ce.get_anomaly_monitors, "AnomalyMonitors", AnomalyMonitor)}
    monitors: dict[str, str] = {}
    for key in TAG_KEYS:
        name = monitor_name(key)
        if name not in found:
            spec = {
                "MonitorName": name,
                "MonitorType": "DIMENSIONAL",
                "MonitorDimension": "TAG",
                "MonitorSpecification": {"Tags": {"Key": key}},
            }
            found[name] = ce.create_anomaly_monitor(AnomalyMonitor=spec)["MonitorArn"]
            created.append(name)
        monitors[key] = found[name]
    for sub in _pages(ce.get_anomaly_subscriptions, "AnomalySubscriptions", AnomalySubscription):
        if sub.get("SubscriptionName") == SUBSCRIPTION:
            return Setup(monitors, sub["SubscriptionArn"], tuple(created))
    threshold = {"Key": "ANOMALY_TOTAL_IMPACT_ABSOLUTE", "MatchOptions": ["GREATER_THAN_OR_EQUAL"], "Values": [f"{threshold_usd:g}"]}
    arn = ce.create_anomaly_subscription(
        AnomalySubscription={
            "SubscriptionName": SUBSCRIPTION,
            "MonitorArnList": list(monitors.values()),
            "Subscribers": [{"Type": "SNS", "Address": topic_arn}],
            "Frequency": "IMMEDIATE",
            "ThresholdExpression": {"Dimensions": threshold},
        }
    )["SubscriptionArn"]
    return Setup(monitors, arn, (*created, SUBSCRIPTION))


class RootCause(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)
    service: str | None = None
    region: str | None = None
    usage_type: str | None = Field(default=None, alias="usageType")
    linked_account: str | None = Field(default=None, alias="linkedAccount")
    linked_account_name: str | None = Field(default=None, alias="linkedAccountName")


class Impact(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)
    total_impact: float = Field(alias="totalImpact")
    total_actual: float | None = Field(default=None, alias="totalActualSpend")
    total_expected: float | None = Field(default=None, alias="totalExpectedSpend")


class Alert(BaseModel):
    """One anomaly alert, as Cost Anomaly Detection publishes it to an SNS topic."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)
    account_id: str = Field(alias="accountId")
    anomaly_id: str = Field(alias="anomalyId", min_length=1)
    monitor_arn: str = Field(alias="monitorArn")
    dimensional_value: str | None = Field(default=None, alias="dimensionalValue")
    impact: Impact
    start: str | None = Field(default=None, alias="anomalyStartDate")
    end: str | None = Field(default=None, alias="anomalyEndDate")
    root_causes: list[RootCause] = Field(default_factory=list, alias="rootCauses")
    link: str | None = Field(default=None, alias="anomalyDetailsLink")

    @classmethod
    def parse(cls, text: str) -> Alert:
        """Raises ValueError when the message is not an anomaly alert."""
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            raise ValueError(f"not an anomaly alert: {exc.error_count()} problem(s)") from None


def tag_key_of(ce: Any, monitor_arn: str) -> str | None:
    """The tag a monitor watches (None: not a tag monitor, or not one this account has)."""
    try:
        found = cast(list[AnomalyMonitor], ce.get_anomaly_monitors(MonitorArnList=[monitor_arn]).get("AnomalyMonitors", []))
    except ClientError as exc:  # a monitor this account does not know: the admin's alert, not a failure
        if error_code(exc) == "UnknownMonitorException":
            return None
        raise
    for monitor in found:
        key = (monitor.get("MonitorSpecification") or {}).get("Tags", {}).get("Key")
        if monitor.get("MonitorDimension") == "TAG" and key:
            return str(key)
    return None


def project_owner(tagging: Any, project: str) -> str | None:
    """The ml:owner most of the project's resources carry (ties: the first by name); None when none has one."""
    owners: Counter[str] = Counter()
    token = ""
    while True:
        more = {"PaginationToken": token} if token else {}
        answer = tagging.get_resources(TagFilters=[{"Key": PROJECT, "Values": [project]}], ResourcesPerPage=100, **more)
        page = cast(GetResourcesOutput, answer)
        for item in page.get("ResourceTagMappingList", []):
            tags = {t["Key"].strip().lower(): t["Value"].strip() for t in item.get("Tags", [])}
            if tags.get(OWNER):
                owners[tags[OWNER]] += 1
        token = page.get("PaginationToken", "")
        if not token:
            break
    if not owners:
        return None
    return sorted(owners.items(), key=lambda kv: (-kv[1], kv[0].lower()))[0][0]


def owner_of(alert: Alert, tag_key: str | None, tagging: Any) -> tuple[str | None, str | None]:
    """(owner, project) of an alert; (None, None) when it is not about the ML tags."""
    value = (alert.dimensional_value or "").strip()
    if not value or tag_key is None:
        return None, None
    if tag_key.lower() == OWNER:
        return value, None
    if tag_key.lower() == PROJECT:
        return project_owner(tagging, value), value
    return None, None
