"""Every number an admin can give the stack is one the functions accept, and nothing past it.

A value CloudFormation accepts but the functions' settings refuse deploys, then fails every
invocation at cold start; a value both accept but the code cannot compute with (a window of
10**23 minutes) ended a sweep with an OverflowError. So each Number parameter that reaches a
REAPER_* variable has a MaxValue, and reaper/core/settings.py accepts exactly [MinValue, MaxValue].
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from reaper.core.errors import ConfigError
from reaper.core.settings import Settings
from reaper.kinds import check_settings
from reaper.kinds.storage.settings import StorageSettings
from reaper.kinds.studio_app.settings import StudioAppSettings
from reaper_devkit.template import load

T = load()


def _environments() -> Iterator[dict[str, Any]]:
    yield T["Globals"]["Function"]["Environment"]["Variables"]
    for resource in T["Resources"].values():
        env = (resource.get("Properties") or {}).get("Environment", {}).get("Variables")
        if resource.get("Type") == "AWS::Serverless::Function" and env:
            yield env


def _rendered(expr: Any, param: str, value: str) -> str | None:
    """The variable's value with `param` set to `value`, or None when it does not depend on it."""
    if expr == {"Ref": param}:
        return value
    if isinstance(expr, dict) and isinstance(expr.get("Sub"), str) and "${" + param + "}" in expr["Sub"]:
        return expr["Sub"].replace("${" + param + "}", value)
    return None


def _uses() -> list[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for name, p in T["Parameters"].items():
        if p.get("Type") != "Number" or p.get("AllowedValues"):
            continue
        for env in _environments():
            for var, expr in env.items():
                if var.startswith("REAPER_") and _rendered(expr, name, "1") is not None:
                    found.add((name, var))
    return sorted(found)


USES = _uses()


def test_the_numbers_that_reach_the_functions_are_found():
    names = {name for name, _ in USES}
    assert {"GraceMinutes", "TrainingGraceMinutes", "NotebookIdleMinutes", "TrainingMaxHours", "FsxJobLookbackDays"} <= names
    assert len(names) >= 15, names


@pytest.mark.parametrize(("name", "var"), USES)
def test_each_number_has_a_max_the_settings_take_and_nothing_past_it(name, var):
    param = T["Parameters"][name]
    assert "MaxValue" in param, f"{name} reaches {var} with no MaxValue"
    expr = next(env[var] for env in _environments() if var in env and _rendered(env[var], name, "1") is not None)

    def settings(value: str) -> Settings:
        rendered = _rendered(expr, name, value)
        assert rendered is not None
        return check_settings(Settings.from_env({var: rendered}))  # the shared settings and each kind's own

    top = param["MaxValue"]
    settings(str(top))  # the largest value the stack accepts works
    named = "idle minutes for" if var.startswith("REAPER_IDLE_MINUTES_") else re.escape(var)  # the message names it
    with pytest.raises(ConfigError, match=named):
        settings(str(top + 1))
    if "MinValue" in param:
        settings(str(param["MinValue"]))
        with pytest.raises(ConfigError):
            settings(str(param["MinValue"] - 1))


def _storage_takes(text: str) -> bool:
    try:
        StorageSettings.from_env({"REAPER_STORAGE_BACKUP_RETENTION_DAYS": text})
    except ConfigError:
        return False
    return True


def test_the_storage_retention_pattern_lets_through_exactly_the_days_the_storage_function_takes():
    # Given StorageBackupRetentionDays: a String (empty keeps every backup), so CloudFormation checks it with its
    # AllowedPattern only (docs/aws-assumptions.md, PK-5), and the storage kind's own settings read its variable
    pattern = T["Parameters"]["StorageBackupRetentionDays"]["AllowedPattern"]
    texts = ["", "01", "-1", "1.5", "1e3", *map(str, range(0, 10_001))]
    # Then no value the stack deploys with fails the function's every cold start
    assert [t for t in texts if re.fullmatch(pattern, t) and not _storage_takes(t)] == []
    # and every whole number of days the function takes, the stack takes too
    assert [t for t in texts if t.isdigit() and t == str(int(t)) and _storage_takes(t) and not re.fullmatch(pattern, t)] == []


def _studio_takes(text: str) -> bool:
    try:
        StudioAppSettings.from_env({"REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES": text})
    except ConfigError:
        return False
    return True


def _around(*edges: int) -> list[str]:
    return [str(n) for e in edges for n in range(e - 2, e + 3)]


def test_the_studio_idle_shutdown_pattern_lets_through_exactly_the_minutes_the_studio_function_takes():
    # Given StudioEnforceIdleShutdownMinutes: a String (empty reports only), checked by its AllowedPattern alone, and
    # the studio kind's settings, which take 60..525,600 (Studio's own bounds, docs/kinds/studio-app.md); before, the
    # pattern took any number, so 30 or 999999 deployed and then failed every cold start of the studio function
    pattern = T["Parameters"]["StudioEnforceIdleShutdownMinutes"]["AllowedPattern"]
    edges = (60, 100, 1_000, 10_000, 100_000, 500_000, 520_000, 525_000, 525_600, 1_000_000)
    texts = ["", "060", "-60", "60.0", "6e1", *map(str, range(0, 2_001)), *map(str, range(0, 600_001, 997)), *_around(*edges)]
    # Then no value the stack deploys with fails the function's every cold start
    assert [t for t in texts if re.fullmatch(pattern, t) and not _studio_takes(t)] == []
    # and every whole number of minutes the function takes, the stack takes too
    assert [t for t in texts if t.isdigit() and t == str(int(t)) and _studio_takes(t) and not re.fullmatch(pattern, t)] == []
