"""Budgets per experiment, from AWS Budgets: one monthly cost budget per `ml:project` that has one.

Budgets are the admin's. The admin's amounts are the stack parameter ProjectBudgets
(REAPER_PROJECT_BUDGETS) and those an admin confirmed in Slack (the action log's budget
confirmations); they always win: a missing budget is created at that amount, an existing one is set
to it. A `reaper:budget-usd` tag (read in one paginated GetResources call; the highest amount per
project) only proposes: when the project has no budget, one is created at the tag's amount, and it
only notifies until an admin confirms it (a button in the admin channel). A tag never changes a
budget that exists, so it never lowers one; an existing budget is never adopted for enforcement
unless the admin made it (the parameter names its project at its amount) or confirmed it at its
amount. Every creation, change and failure is returned as a BudgetChange, which the sweep posts to
the admin channel once; none is silent.

Each budget is named `mlreaper-<project>`, filtered on the cost-allocation tag `ml:project`, with
ACTUAL notifications at 80 % and 100 % to the reaper's SNS topic. New budgets use FilterExpression:
AWS deprecated CostFilters ("CostFilters lack support for newer dimensions and filtering options.
Please consider using the new 'FilterExpression' field.",
https://docs.aws.amazon.com/sdk-for-kotlin/api/latest/budgets/aws.sdk.kotlin.services.budgets.model/-budget/cost-filters.html).
Budgets are read through either: CostFilters TagKeyValue `user:ml:project$<project>`, or a
FilterExpression Tags on `ml:project` (spelt with or without Budgets' `user:` prefix), alone or
inside an `And`. https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_budgets_Expression.html

The tag must be activated as a cost-allocation tag (Billing console), and Budgets refreshes its
figures a few times a day: a notification comes hours after the spend.
https://docs.aws.amazon.com/cost-management/latest/userguide/budgets-managing-costs.html
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TypedDict, cast

from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, error_code, short
from reaper.core.model import ProjectSpend
from reaper.core.policy import PROJECT, read_tags
from reaper.core.settings import Settings

log = logging.getLogger("reaper")

BUDGET_PREFIX = "mlreaper-"
THRESHOLDS = (80.0, 100.0)
COST_TAG = f"user:{PROJECT}"  # how Budgets names a user-defined cost-allocation tag
READ_PERMISSIONS = ("budgets:ViewBudget",)
WRITE_PERMISSIONS = ("budgets:ModifyBudget",)  # CreateBudget and UpdateBudget
CENT = 0.005

# (project, confirmed USD a month, who) read from the action log by the caller
Confirmations = Mapping[str, tuple[float, str]]


@dataclass(frozen=True)
class BudgetChange:
    """A budget created, set, proposed or failed: posted once to the admin channel."""

    project: str
    budget_name: str
    what: str  # created | set | would-create | would-set | failed
    usd: float
    origin: str  # admin | tag
    text: str
    previous_usd: float | None = None

    @property
    def confirmable(self) -> bool:
        """Made from a tag: it only notifies until an admin confirms it."""
        return self.origin == "tag" and self.what == "created"


# The Budgets API's BudgetName: "The ":" and "\\" characters, and the "/action/" substring, aren't allowed",
# 1-100 characters, Pattern ^(?![^:\\\\]*/action/|(?i).*<script>.*</script>.*)[^:\\\\]+$
# (https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_budgets_Budget.html; docs/aws-assumptions.md)
BUDGET_NAME_MAX = 100
_NAME_REFUSED = re.compile(r"[:\\\\\x00-\x1f\x7f]")  # the two AWS refuses, and control characters (a name is shown in Slack)
_SCRIPT = re.compile(r"<script>.*</script>", re.IGNORECASE | re.DOTALL)


def budget_name(project: str) -> str:
    """`mlreaper-<project>`, made into a name Budgets accepts: ':', '\\' and control characters become '-',
    "/action/" becomes "-action-", '<' and '>' become '-' when the name would hold a <script> element,
    and it is cut to 100 characters (cutting never makes a refused substring)."""
    name = _NAME_REFUSED.sub("-", project).replace("/action/", "-action-")
    if _SCRIPT.search(name):
        name = name.replace("<", "-").replace(">", "-")
    return (BUDGET_PREFIX + name)[:BUDGET_NAME_MAX]


def proposed(clients: Clients, settings: Settings) -> dict[str, float]:
    """{project: monthly USD} that tags propose (the highest tag per project)."""
    tagged: dict[str, float] = {}
    key = settings.tag("budget-usd")
    paginator = clients("resourcegroupstaggingapi").get_paginator("get_resources")
    for page in paginator.paginate(TagFilters=[{"Key": key}]):
        for item in page.get("ResourceTagMappingList", []):
            view = read_tags({t["Key"]: t["Value"] for t in item.get("Tags", [])}, settings)
            if view.project and view.budget_usd is not None:
                tagged[view.project] = max(tagged.get(view.project, 0.0), view.budget_usd)
    return tagged


class Spend(TypedDict, total=False):
    """https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_budgets_Spend.html (Amount: a string)."""

    Amount: str
    Unit: str


class CalculatedSpend(TypedDict, total=False):
    ActualSpend: Spend


class TagValues(TypedDict, total=False):
    """https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_budgets_TagValues.html"""

    Key: str
    Values: list[str]
    MatchOptions: list[str]


class Expression(TypedDict, total=False):
    """The members read of an Expression (API_budgets_Expression.html, above)."""

    Tags: TagValues
    And: list[Expression]


class Budget(TypedDict, total=False):
    """The members read of https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_budgets_Budget.html"""

    BudgetName: str
    BudgetLimit: Spend
    CalculatedSpend: CalculatedSpend
    CostFilters: dict[str, list[str]]
    FilterExpression: Expression


class DescribeBudgetsResponse(TypedDict, total=False):
    Budgets: list[Budget]
    NextToken: str


def project_of(budget: Budget) -> str | None:
    """The ml:project a budget filters on, from CostFilters or FilterExpression."""
    for value in (budget.get("CostFilters") or {}).get("TagKeyValue", []):
        key, sep, project = str(value).partition("$")
        if sep and key == COST_TAG and project:
            return project
    return _expression_project(budget.get("FilterExpression") or {})


def _expression_project(expression: Expression) -> str | None:
    tags = expression.get("Tags") or {}
    values = [str(v) for v in tags.get("Values") or [] if str(v)]
    options = tags.get("MatchOptions") or ["EQUALS"]
    if tags.get("Key") in (COST_TAG, PROJECT) and len(values) == 1 and list(options) == ["EQUALS"]:
        return values[0]
    for part in expression.get("And") or []:  # the project, narrowed further (a Region, a service)
        found = _expression_project(part)
        if found:
            return found
    return None


def spend(clients: Clients, account: str) -> dict[str, ProjectSpend]:
    """{project: spend} for every mlreaper- budget, from DescribeBudgets (100 a page)."""
    out: dict[str, ProjectSpend] = {}
    budgets = clients("budgets")
    token = ""
    while True:
        more = {"NextToken": token} if token else {}
        page = cast(DescribeBudgetsResponse, budgets.describe_budgets(AccountId=account, MaxResults=100, **more))
        for b in page.get("Budgets", []):
            project = project_of(b)
            if not str(b.get("BudgetName", "")).startswith(BUDGET_PREFIX) or project is None:
                continue
            limit = float((b.get("BudgetLimit") or {}).get("Amount", 0) or 0)
            actual = float(((b.get("CalculatedSpend") or {}).get("ActualSpend") or {}).get("Amount", 0) or 0)
            if limit > 0:
                out[project] = ProjectSpend(project, b["BudgetName"], limit, actual)
        token = page.get("NextToken", "")
        if not token:
            return out


def with_enforceable(found: Mapping[str, ProjectSpend], settings: Settings, confirmed: Confirmations) -> dict[str, ProjectSpend]:
    """Each budget marked enforceable when it is at the admin's amount (parameter or confirmation)."""
    out: dict[str, ProjectSpend] = {}
    for project, s in found.items():
        admin = settings.project_budgets.get(project)
        if admin is None and project in confirmed:
            admin = confirmed[project][0]
        out[project] = replace(s, enforceable=admin is not None and abs(admin - s.limit_usd) < CENT)
    return out


def ensure(
    clients: Clients,
    account: str,
    settings: Settings,
    existing: Mapping[str, ProjectSpend],
    confirmed: Confirmations,
    create: bool = True,
) -> list[BudgetChange]:
    """Create or set the budgets the admin's amounts and the tags call for; one change per budget touched.

    `create` False (the kind in dry-run, where nothing in AWS changes): no call, a "would …" change each.
    """
    assert settings.budget_topic_arn
    admin = {**{p: usd for p, (usd, _) in confirmed.items()}, **settings.project_budgets}
    tagged = proposed(clients, settings)
    changes: list[BudgetChange] = []
    names = {s.budget_name for s in existing.values()}
    for project in sorted(set(admin) | set(tagged)):
        name = budget_name(project)
        ours = existing.get(project)
        if project in admin:
            usd, origin = admin[project], "admin"
            if ours is not None and abs(ours.limit_usd - usd) < CENT:
                continue
        else:
            usd, origin = tagged[project], "tag"
            if ours is not None or name in names:
                continue  # a tag never changes a budget that exists (so never lowers one), nor adopts it
        change = _write(clients, account, settings.budget_topic_arn, project, usd, origin, ours, create)
        if change is not None:
            changes.append(change)
    return changes


def _write(
    clients: Clients, account: str, topic_arn: str, project: str, usd: float, origin: str, ours: ProjectSpend | None, create: bool
) -> BudgetChange | None:
    name = budget_name(project)
    source = "the stack's ProjectBudgets or an admin's confirmation" if origin == "admin" else "a reaper:budget-usd tag"
    if not create:
        what = "would-create" if ours is None else "would-set"
        return BudgetChange(project, name, what, usd, origin, f"would {what[6:]} {name} at ${usd:,.2f} a month ({source}): dry-run")
    try:
        if ours is None:
            _create(clients, account, topic_arn, project, usd)
            note = " It only notifies until an admin confirms it." if origin == "tag" else ""
            return BudgetChange(project, name, "created", usd, origin, f"created {name} at ${usd:,.2f} a month ({source}).{note}")
        _set_amount(clients, account, ours.budget_name, usd)
        return BudgetChange(
            project, ours.budget_name, "set", usd, origin,
            f"set {ours.budget_name} from ${ours.limit_usd:,.2f} to ${usd:,.2f} a month ({source}: the admin's amount wins)",
            ours.limit_usd,
        )  # fmt: skip
    except AwsError as exc:
        why = short(exc)
        if error_code(exc) == "DuplicateRecordException":
            why = f"a budget named {name} exists but filters on something other than ml:project={project}: not adopted ({why})"
        log.warning("budget %s not written: %s", name, why)
        return BudgetChange(project, name, "failed", usd, origin, f"could not {'create' if ours is None else 'set'} {name}: {why}")


def _create(clients: Clients, account: str, topic_arn: str, project: str, usd: float) -> None:
    clients("budgets").create_budget(
        AccountId=account,
        Budget={
            "BudgetName": budget_name(project),
            "BudgetLimit": {"Amount": f"{usd:.2f}", "Unit": "USD"},
            "FilterExpression": {"Tags": {"Key": COST_TAG, "Values": [project], "MatchOptions": ["EQUALS"]}},
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


def _set_amount(clients: Clients, account: str, name: str, usd: float) -> None:
    """UpdateBudget with the budget as it is but its amount ("You can change every part of a budget
    except for the budgetName and the calculatedSpend": API_budgets_UpdateBudget)."""
    budgets = clients("budgets")
    current = budgets.describe_budget(AccountId=account, BudgetName=name)["Budget"]
    kept = {k: v for k, v in current.items() if k not in ("CalculatedSpend", "LastUpdatedTime", "HealthStatus")}
    budgets.update_budget(AccountId=account, NewBudget={**kept, "BudgetLimit": {"Amount": f"{usd:.2f}", "Unit": "USD"}})


def read(
    clients: Clients, settings: Settings, account: str, manage: bool, create: bool = True, confirmed: Confirmations | None = None
) -> tuple[dict[str, ProjectSpend], list[BudgetChange]]:
    """What each budgeted project has spent, and (with `manage`) the budgets created or set first
    (with `create` False, in dry-run, only said: "would …").

    No topic configured: budgets are off, nothing is read. A read that fails is logged and budgets are
    not judged in this sweep (unknown is not over budget).
    """
    if not settings.budget_topic_arn or not account:
        return {}, []
    confirmed = confirmed or {}
    try:
        found = spend(clients, account)
        changes: list[BudgetChange] = []
        if manage:
            changes = ensure(clients, account, settings, found, confirmed, create=create)
            if any(c.what in ("created", "set") for c in changes):
                found = spend(clients, account)
        for c in changes:
            log.info("budgets: %s", c.text)
        return with_enforceable(found, settings, confirmed), changes
    except AwsError as exc:
        log.warning("budgets not read, so not judged in this sweep: %s", short(exc))
        return {}, []
