"""Attacks on the settings this round moved beside their kinds (kinds/endpoint, mlflow, ec2, storage settings.py),
through each real function's cold start (functions/<name>/app.py, imported afresh as Lambda does): a bad value on
the function that reads it refuses in the one line the shared settings said before the move; a good value set on a
function that does not read it changes nothing there and the function starts (docs/safety.md, *Attacks on this
round's new surfaces*; docs/configuration.md)."""

from __future__ import annotations

import pytest

from reaper.core.errors import ConfigError
from tests.conftest import load_function

# (the function that reads it, variable, a bad value, the line said before the move)
BAD = [
    (
        "storage",
        "REAPER_STORAGE_IDLE_WEEKS",
        "0",
        "REAPER_STORAGE_IDLE_WEEKS (storage_idle_weeks): Input should be greater than or equal to 1 (got '0')",
    ),
    (
        "storage",
        "REAPER_STORAGE_BACKUP_RETENTION_DAYS",
        "3651",
        "REAPER_STORAGE_BACKUP_RETENTION_DAYS (storage_backup_retention_days): Input should be less than or equal to 3650 (got '3651')",
    ),
    (
        "mlflow",
        "REAPER_MLFLOW_IDLE_HOURS",
        "x",
        "REAPER_MLFLOW_IDLE_HOURS (mlflow_idle_hours): Input should be a valid integer, unable to parse string as an integer (got 'x')",
    ),
    (
        "endpoint",
        "REAPER_RESTORE_WAIT_MINUTES",
        "1441",
        "REAPER_RESTORE_WAIT_MINUTES (restore_wait_minutes): Input should be less than or equal to 1440 (got '1441')",
    ),
    (
        "ec2",
        "REAPER_GPU_SSM_READS",
        "perhaps",
        "REAPER_GPU_SSM_READS (gpu_ssm_reads): Input should be a valid boolean, unable to interpret input (got 'perhaps')",
    ),
]
# a good value of each moved variable, and functions that do not read it
GOOD = {
    "REAPER_STORAGE_IDLE_WEEKS": "2",
    "REAPER_STORAGE_BACKUP_RETENTION_DAYS": "30",
    "REAPER_MLFLOW_IDLE_HOURS": "6",
    "REAPER_MLFLOW_READS": "on",
    "REAPER_GPU_SSM_READS": "on",
    "REAPER_ENDPOINT_WAKE_LEAD_MINUTES": "45",
    "REAPER_RESTORE_WAIT_MINUTES": "0",
}
NON_READERS = ["capacity", "notifier", "interactions", "restore", "training_job"]


@pytest.mark.parametrize(("function", "var", "bad", "said"), BAD, ids=[f"{f}:{v}={b}" for f, v, b, _ in BAD])
def test_a_bad_moved_value_refuses_the_function_that_reads_it_at_cold_start_in_one_line(
    aws, deployed_env, monkeypatch, function, var, bad, said
):
    monkeypatch.setenv(var, bad)
    with pytest.raises(ConfigError) as err:
        load_function(function)
    assert str(err.value) == f"bad configuration: {said}"


@pytest.mark.parametrize("function", NON_READERS)
def test_every_moved_variable_set_on_a_function_that_does_not_read_it_leaves_it_starting(aws, deployed_env, monkeypatch, function):
    for var, value in GOOD.items():
        monkeypatch.setenv(var, value)
    app = load_function(function)
    assert callable(app.handler)


def test_a_bad_moved_value_on_a_function_that_does_not_read_it(aws, deployed_env, monkeypatch):
    # A kind's function still reads every kind's settings at cold start (reaper.kinds.check_settings), so a bad
    # storage value refuses the capacity function (and the Slack interactions) in the same line, as the shared
    # settings did before the move; the notifier reads no kind's settings and now starts (before the move it refused)
    _, var, bad, said = BAD[0]
    monkeypatch.setenv(var, bad)
    for function in ("capacity", "interactions"):
        with pytest.raises(ConfigError) as err:
            load_function(function)
        assert str(err.value) == f"bad configuration: {said}"
    assert callable(load_function("notifier").handler)
