"""Cost Optimization Hub, which moto 5.2.5 does not have: enrollment, preferences, recommendations.

Written from the API reference (awsJson1_0, target CostOptimizationHubService, one endpoint
https://cost-optimization-hub.us-east-1.amazonaws.com):
- ListEnrollmentStatuses -> items [{accountId, status Active|Inactive, lastUpdatedTimestamp}].
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_CostOptimizationHub_ListEnrollmentStatuses.html
- GetPreferences -> savingsEstimationMode BeforeDiscounts|AfterDiscounts ("estimated savings after
  discounts or estimated savings before discounts").
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_CostOptimizationHub_GetPreferences.html
- ListRecommendations(filter {actionTypes, resourceIds, resourceArns, regions}, maxResults,
  nextToken) -> items [{recommendationId, accountId, region, resourceId, resourceArn,
  currentResourceType, actionType, estimatedMonthlySavings, currencyCode, lastRefreshTimestamp,
  ...}] and nextToken.
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_CostOptimizationHub_ListRecommendations.html
- Refusals: AccessDeniedException for an account that is not enrolled ("You are not authorized to
  use this operation") and when the kit is told the caller may not; ValidationException for a
  nextToken it did not hand out.

A test enrolls an account and seeds recommendations with `enroll` and `recommend`. PAGE_SIZE makes
every list paginate. moto has no such service: `apply()` registers it as a moto backend (its URL
pattern in moto's backend index, the module under moto's package name), so it answers in-process
and in server mode like any other.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime
from typing import Any

from moto import backend_index
from moto.core.base_backend import BackendDict, BaseBackend
from moto.core.exceptions import JsonRESTError
from moto.core.responses import BaseResponse

SERVICE = "cost-optimization-hub"
MODULE = "moto.costoptimizationhub"
PAGE_SIZE = 1
calls: list[str] = []


class AccessDeniedException(JsonRESTError):
    def __init__(self, message: str) -> None:
        super().__init__("AccessDeniedException", message)


class CostOptimizationHubBackend(BaseBackend):
    def __init__(self, region_name: str, account_id: str) -> None:
        super().__init__(region_name, account_id)
        self.status = "Inactive"
        self.mode = "BeforeDiscounts"
        self.recommendations: list[dict[str, Any]] = []
        self.denied = False

    @property
    def _url_module(self) -> Any:
        return sys.modules[MODULE]

    def check(self, action: str) -> None:
        calls.append(action)
        if self.denied:
            raise AccessDeniedException(f"User: arn:aws:iam::{self.account_id}:user/kit is not authorized to perform: {SERVICE}:{action}")
        if self.status != "Active" and action != "ListEnrollmentStatuses":
            raise AccessDeniedException("You are not authorized to use this operation: the account is not enrolled")


class CostOptimizationHubResponse(BaseResponse):
    def __init__(self) -> None:
        super().__init__(service_name=SERVICE)

    @property
    def hub(self) -> CostOptimizationHubBackend:
        backend: CostOptimizationHubBackend = costoptimizationhub_backends[self.current_account]["us-east-1"]
        return backend

    def list_enrollment_statuses(self) -> str:
        self.hub.check("ListEnrollmentStatuses")
        now = datetime.now(UTC).timestamp()
        return json.dumps({"items": [{"accountId": self.current_account, "status": self.hub.status, "lastUpdatedTimestamp": now}]})

    def get_preferences(self) -> str:
        self.hub.check("GetPreferences")
        return json.dumps({"savingsEstimationMode": self.hub.mode, "memberAccountDiscountVisibility": "All"})

    def list_recommendations(self) -> str:
        self.hub.check("ListRecommendations")
        params = json.loads(self.body or "{}")
        wanted = params.get("filter") or {}
        items = [r for r in self.hub.recommendations if _matches(r, wanted)]
        token = params.get("nextToken")
        if token is not None and not str(token).isdigit():
            raise JsonRESTError("ValidationException", "Invalid nextToken")
        first = int(token or 0)
        size = min(PAGE_SIZE, params.get("maxResults") or PAGE_SIZE)
        later = first + size if first + size < len(items) else None
        return json.dumps({"items": items[first : first + size], **({"nextToken": str(later)} if later else {})})


def _matches(rec: dict[str, Any], wanted: dict[str, Any]) -> bool:
    pairs = (("actionTypes", "actionType"), ("resourceIds", "resourceId"), ("resourceArns", "resourceArn"), ("regions", "region"))
    return all(not wanted.get(f) or rec.get(k) in wanted[f] for f, k in pairs)


costoptimizationhub_backends = BackendDict(CostOptimizationHubBackend, SERVICE, use_boto3_regions=False, additional_regions=["us-east-1"])
url_bases = [r"https?://cost-optimization-hub\.(.+)\.amazonaws\.com"]
url_paths = {"{0}/$": CostOptimizationHubResponse.dispatch}


def _backend(account_id: str) -> CostOptimizationHubBackend:
    backend: CostOptimizationHubBackend = costoptimizationhub_backends[account_id]["us-east-1"]
    return backend


def enroll(account_id: str, mode: str = "AfterDiscounts") -> None:
    _backend(account_id).status, _backend(account_id).mode = "Active", mode


def deny(account_id: str) -> None:
    _backend(account_id).denied = True


def recommend(account_id: str, resource_id: str, monthly_usd: float, action: str = "Stop", **fields: Any) -> None:
    """A recommendation as ListRecommendations returns it (fields override the defaults)."""
    rec = {
        "recommendationId": f"rec-{len(_backend(account_id).recommendations) + 1}",
        "accountId": account_id,
        "region": "us-east-1",
        "resourceId": resource_id,
        "resourceArn": f"arn:aws:ec2:us-east-1:{account_id}:instance/{resource_id}",
        "currentResourceType": "Ec2Instance",
        "actionType": action,
        "estimatedMonthlySavings": monthly_usd,
        "currencyCode": "USD",
        "lastRefreshTimestamp": datetime.now(UTC).timestamp(),
        "source": "ComputeOptimizer",
    }
    _backend(account_id).recommendations.append({**rec, **fields})


def reset() -> None:
    """This service's state only (BackendDict.reset would reset every moto backend)."""
    for by_region in costoptimizationhub_backends.values():
        for backend in by_region.values():
            backend.reset()
    calls.clear()


def apply() -> None:
    if MODULE in sys.modules:
        return
    sys.modules[MODULE] = sys.modules[__name__]
    backend_index.backend_url_patterns.append(("costoptimizationhub", re.compile(url_bases[0])))
