"""Budgets per experiment, from AWS Budgets: one monthly cost budget per `ml:project` that has one.

Which projects: those the stack parameter ProjectBudgets names (REAPER_PROJECT_BUDGETS), and those
whose resources carry `reaper:budget-usd` (read in one paginated GetResources call; the highest
amount tagged wins, the parameter wins over tags). Each gets a budget named `mlreaper-<project>`,
filtered on the cost-allocation tag `ml:project` (CostFilters TagKeyValue `user:ml:project$<project>`),
with ACTUAL notifications at 80 % and 100 % to the reaper's SNS topic. A budget of that name that
exists already is adopted as it is (its amount and notifications are the admin's).
https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_budgets_CreateBudget.html

The tag must be activated as a cost-allocation tag (Billing console), and Budgets refreshes its
figures a few times a day: a notification comes hours after the spend.
https://docs.aws.amazon.com/cost-management/latest/userguide/budgets-managing-costs.html
"""

from __future__ import annotations

import logging
import re
from typing import Any

from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, short
from reaper.core.model import ProjectSpend
from reaper.core.policy import PROJECT, read_tags
from reaper.core.settings import Settings

log = logging.getLogger("reaper")

BUDGET_PREFIX = "mlreaper-"
THRESHOLDS = (80.0, 100.0)
COST_TAG = f"user:{PROJECT}"  # how Budgets names a user-defined cost-allocation tag
READ_PERMISSIONS = ("budgets:ViewBudget",)
WRITE_PERMISSIONS = ("budgets:ModifyBudget",)


def budget_name(project: str) -> str:
    """Budget names take 1-100 characters, not ':' or '\\'."""
    return (BUDGET_PREFIX + re.sub(r"[:\\\\]", "-", project))[:100]


def wanted(clients: Clients, settings: Settings) -> dict[str, float]:
    """{project: monthly USD}: the parameter's, then the tagged ones (highest tag per project)."""
    tagged: dict[str, float] = {}
    key = settings.tag("budget-usd")
    paginator = clients("resourcegroupstaggingapi").get_paginator("get_resources")
    for page in paginator.paginate(TagFilters=[{"Key": key}]):
        for item in page.get("ResourceTagMappingList", []):
            view = read_tags({t["Key"]: t["Value"] for t in item.get("Tags", [])}, settings)
            if view.project and view.budget_usd is not None:
                tagged[view.project] = max(tagged.get(view.project, 0.0), view.budget_usd)
    return {**tagged, **settings.project_budgets}


def _project_of(budget: dict[str, Any]) -> str | None:
    for value in (budget.get("CostFilters") or {}).get("TagKeyValue", []):
        key, sep, project = str(value).partition("$")
        if sep and key == COST_TAG and project:
            return project
    return None


def spend(clients: Clients, account: str) -> dict[str, ProjectSpend]:
    """{project: spend} for every mlreaper- budget, from DescribeBudgets (100 a page)."""
    out: dict[str, ProjectSpend] = {}
    request: dict[str, Any] = {"AccountId": account, "MaxResults": 100}
    budgets = clients("budgets")
    while True:
        page = budgets.describe_budgets(**request)
        for b in page.get("Budgets", []):
            project = _project_of(b)
            if not str(b.get("BudgetName", "")).startswith(BUDGET_PREFIX) or project is None:
                continue
            limit = float((b.get("BudgetLimit") or {}).get("Amount", 0) or 0)
            actual = float(((b.get("CalculatedSpend") or {}).get("ActualSpend") or {}).get("Amount", 0) or 0)
            if limit > 0:
                out[project] = ProjectSpend(project, b["BudgetName"], limit, actual)
        token = page.get("NextToken")
        if not token:
            return out
        request["NextToken"] = token


def ensure(
    clients: Clients, account: str, want: dict[str, float], topic_arn: str, existing: dict[str, ProjectSpend], create: bool = True
) -> list[str]:
    """Create the missing budgets; return one line per budget created, adopted or failed.

    `create` False (the kind in dry-run, where nothing in AWS changes): no call, a "would create" line each.
    """
    done: list[str] = []
    names = {s.budget_name for s in existing.values()}
    for project, usd in sorted(want.items()):
        name = budget_name(project)
        if project in existing or name in names:
            ours = existing.get(project)
            if ours is not None and abs(ours.limit_usd - usd) > 0.005:
                done.append(f"adopted {name} as it is (${ours.limit_usd:,.2f}, not ${usd:,.2f}: the budget's amount is kept)")
            continue
        if not create:
            done.append(f"would create {name} (${usd:,.2f} a month): not created in dry-run")
            continue
        try:
            clients("budgets").create_budget(
                AccountId=account,
                Budget={
                    "BudgetName": name,
                    "BudgetLimit": {"Amount": f"{usd:.2f}", "Unit": "USD"},
                    "CostFilters": {"TagKeyValue": [f"{COST_TAG}${project}"]},
                    "TimeUnit": "MONTHLY",
                    "BudgetType": "COST",
                },
                NotificationsWithSubscribers=[
                    {
                        "Notification": {
                            "NotificationType": "ACTUAL",
                            "ComparisonOperator": "GREATER_THAN",
                            "Threshold": threshold,
                            "ThresholdType": "PERCENTAGE",
                        },
                        "Subscribers": [{"SubscriptionType": "SNS", "Address": topic_arn}],
                    }
                    for threshold in THRESHOLDS
                ],
            )
            done.append(f"created {name} (${usd:,.2f} a month)")
        except AwsError as exc:
            if "DuplicateRecord" in short(exc):  # made meanwhile by another sweep: adopted
                continue
            log.warning("could not create budget %s: %s", name, short(exc))
            done.append(f"could not create {name}: {short(exc)}")
    return done


def read(clients: Clients, settings: Settings, account: str, manage: bool, create: bool = True) -> dict[str, ProjectSpend]:
    """What each budgeted project has spent. With `manage`, missing budgets are created first
    (with `create` False, in dry-run, they are only logged as "would create").

    No topic configured: budgets are off, nothing is read. A failure is logged and budgets are
    not judged in this sweep (unknown is not over budget).
    """
    if not settings.budget_topic_arn or not account:
        return {}
    try:
        found = spend(clients, account)
        if manage:
            for line in ensure(clients, account, wanted(clients, settings), settings.budget_topic_arn, found, create=create):
                log.info("budgets: %s", line)
        return found
    except AwsError as exc:
        log.warning("budgets not read, so not judged in this sweep: %s", short(exc))
        return {}
