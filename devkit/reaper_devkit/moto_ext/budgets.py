"""AWS Budgets as the budgets code meets it: moto 5.2.5 has no UpdateBudget.

- UpdateBudget replaces the budget with NewBudget, keeping its name; AWS: "You can change every part
  of a budget except for the budgetName and the calculatedSpend. When you modify a budget, the
  calculatedSpend drops to zero until Amazon Web Services has new usage data to use for forecasting."
  A budget that does not exist is NotFoundException.
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_budgets_UpdateBudget.html
- FilterExpression (the successor of CostFilters) is kept and returned as sent, as CostFilters is:
  moto stores the Budget object whole, so nothing is patched for it; the budgets tests hold it.
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_budgets_Budget.html
Patched on moto's response and backend classes, so it works in-process and in server mode.
"""

from __future__ import annotations

import json
from typing import Any

from moto.budgets import models, responses
from moto.budgets.exceptions import NotFoundException
from moto.core.utils import unix_time


def update_budget(self: Any, account_id: str, new_budget: dict[str, Any]) -> None:
    name = new_budget.get("BudgetName", "")
    current = self.budgets[account_id].get(name)
    if current is None:
        raise NotFoundException(f"Unable to update budget: {name} - the budget doesn't exist.")
    kept = {k: v for k, v in new_budget.items() if k not in ("CalculatedSpend", "LastUpdatedTime")}
    kept["TimePeriod"] = new_budget.get("TimePeriod") or current.budget.get("TimePeriod")
    kept["LastUpdatedTime"] = unix_time()
    current.budget = kept  # CalculatedSpend dropped: to_dict() answers zero until Budgets recalculates


def update_budget_response(self: Any) -> str:
    self.backend.update_budget(account_id=self._get_param("AccountId"), new_budget=self._get_param("NewBudget"))
    return json.dumps({})


def apply() -> None:
    if getattr(responses.BudgetsResponse, "_reaper_update", False):
        return
    models.BudgetsBackend.update_budget = update_budget  # type: ignore[attr-defined]
    responses.BudgetsResponse.update_budget = update_budget_response  # type: ignore[attr-defined]
    responses.BudgetsResponse._reaper_update = True  # type: ignore[attr-defined]


def set_spend(account_id: str, name: str, actual_usd: float) -> None:
    """Make Budgets have calculated this spend for the budget (tests: Budgets refreshes a few times a day)."""
    for by_partition in models.budgets_backends.values():
        for backend in by_partition.values():
            found = backend.budgets.get(account_id, {}).get(name)
            if found is not None:
                found.budget["CalculatedSpend"] = {"ActualSpend": {"Amount": f"{actual_usd:.2f}", "Unit": "USD"}}
                return
    raise KeyError(name)
