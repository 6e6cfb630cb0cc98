"""A setting one kind alone reads is in that kind's own model (kinds/<kind>/settings.py), read from the
same REAPER_* variable as before; the shared Settings keeps what is shared, and still parses every
function's environment as template.yaml sets it (docs/configuration.md)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reaper import wiring
from reaper.core.errors import ConfigError
from reaper.core.settings import ENV_VARS, KindSettings, Settings
from reaper.kinds import KIND_SETTINGS, check_settings, settings_models
from reaper.kinds.bedrock_pt.settings import BedrockPtSettings
from reaper.kinds.ec2.settings import Ec2Settings
from reaper.kinds.endpoint.settings import EndpointSettings
from reaper.kinds.fsx.settings import FsxSettings
from reaper.kinds.mlflow.settings import MlflowSettings
from reaper.kinds.notebook.settings import NotebookSettings
from reaper.kinds.storage.settings import StorageSettings
from reaper.kinds.studio_app.settings import StudioAppSettings
from reaper.kinds.training_job.settings import TrainingJobSettings
from reaper_devkit.template import load

T = load()
ACCOUNT = "123456789012"
RESTORE_ARN = f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:restore"
ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/scheduler"
# what the endpoint function is given beside its wake switches (template.yaml): a wake can be scheduled
WAKE_WIRED = {"REAPER_RESTORE_FUNCTION_ARN": RESTORE_ARN, "REAPER_SCHEDULER_ROLE_ARN": ROLE_ARN}

# (variable, text as the template passes it, model, field, value read)
ROWS: list[tuple[str, str, type[KindSettings], str, Any]] = [
    ("REAPER_EC2_CPU_ONLY", "true", Ec2Settings, "cpu_only", True),
    ("REAPER_GPU_SSM_READS", "on", Ec2Settings, "gpu_ssm_reads", True),
    ("REAPER_MLFLOW_READS", "on", MlflowSettings, "mlflow_reads", True),
    ("REAPER_MLFLOW_IDLE_HOURS", "6", MlflowSettings, "mlflow_idle_hours", 6),
    ("REAPER_ENDPOINT_OFF_HOURS_RESTORE", "true", EndpointSettings, "endpoint_off_hours_restore", True),
    ("REAPER_ENDPOINT_LEARNED_WAKE", "false", EndpointSettings, "endpoint_learned_wake", False),
    ("REAPER_ENDPOINT_WAKE_LEAD_MINUTES", "45", EndpointSettings, "endpoint_wake_lead_minutes", 45),
    ("REAPER_RESTORE_FUNCTION_ARN", RESTORE_ARN, EndpointSettings, "restore_function_arn", RESTORE_ARN),
    ("REAPER_SCHEDULER_ROLE_ARN", ROLE_ARN, EndpointSettings, "scheduler_role_arn", ROLE_ARN),
    ("REAPER_RESTORE_WAIT_MINUTES", "0", EndpointSettings, "restore_wait_minutes", 0),
    ("REAPER_FSX_JOB_LOOKBACK_DAYS", "30", FsxSettings, "job_lookback_days", 30),
    ("REAPER_FSX_STUCK_HOURS", "6.5", FsxSettings, "stuck_hours", 6.5),
    (
        "REAPER_FSX_CHECK_FUNCTION_ARN",
        "arn:aws:lambda:us-east-1:1:function:f",
        FsxSettings,
        "check_function_arn",
        "arn:aws:lambda:us-east-1:1:function:f",
    ),
    ("REAPER_FSX_CHECK_ROLE_ARN", "arn:aws:iam::1:role/r", FsxSettings, "check_role_arn", "arn:aws:iam::1:role/r"),
    ("REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES", "120", StudioAppSettings, "enforce_idle_shutdown_minutes", 120),
    ("REAPER_BEDROCK_MODEL_UNIT_HOURLY_USD", "0", BedrockPtSettings, "model_unit_hourly_usd", 0.0),
    ("REAPER_AGENT_LIFECYCLE_CONFIG", "team-agent", NotebookSettings, "agent_lifecycle_config", "team-agent"),
    ("REAPER_AGENT_CHANNEL", "logs", NotebookSettings, "agent_channel", "logs"),
    ("REAPER_ATTACH_AGENT", "true", NotebookSettings, "attach_agent", True),
    ("REAPER_AGENT_PUBLISH_POLICY_ARN", "arn:aws:iam::1:policy/p", NotebookSettings, "agent_publish_policy_arn", "arn:aws:iam::1:policy/p"),
    ("REAPER_NOTEBOOK_EARLY_WARNING", "false", NotebookSettings, "notebook_early_warning", False),
    ("REAPER_TRAINING_DEFAULT_CEILINGS_ACT", "true", TrainingJobSettings, "training_default_ceilings_act", True),
    ("REAPER_STALLED_MINUTES", "90", TrainingJobSettings, "stalled_minutes", 90),
    ("REAPER_STALLED_JOB_ACTION", "stop", TrainingJobSettings, "stalled_job_action", "stop"),
    ("REAPER_CONVERGED_PATIENCE", "12", TrainingJobSettings, "converged_patience", 12),
    ("REAPER_CONVERGED_MIN_IMPROVEMENT", "0.05", TrainingJobSettings, "converged_min_improvement", 0.05),
    ("REAPER_CONVERGED_JOB_ACTION", "stop", TrainingJobSettings, "converged_job_action", "stop"),
    ("REAPER_SPOT_WITHOUT_CHECKPOINTS", "stop", TrainingJobSettings, "spot_without_checkpoints", "stop"),
    ("REAPER_WARM_POOL_MAX_MINUTES", "45", TrainingJobSettings, "warm_pool_max_minutes", 45),
    ("REAPER_CEILING_WARN_PERCENT", "90", TrainingJobSettings, "ceiling_warn_percent", 90.0),
    ("REAPER_DIVERGENCE_POINTS", "7", TrainingJobSettings, "divergence_points", 7),
    ("REAPER_DIVERGENCE_RATIO", "3.5", TrainingJobSettings, "divergence_ratio", 3.5),
    ("REAPER_GPU_IDLE_PERCENT", "40", TrainingJobSettings, "gpu_idle_percent", 40.0),
    ("REAPER_GPU_IDLE_MINUTES", "20", TrainingJobSettings, "gpu_idle_minutes", 20),
    ("REAPER_STORAGE_BACKUP_RETENTION_DAYS", "30", StorageSettings, "storage_backup_retention_days", 30),
    ("REAPER_STORAGE_IDLE_WEEKS", "13", StorageSettings, "storage_idle_weeks", 13),
]
# the variables read with others beside them, as the stack sets them (the endpoint's wake switches need the
# restore function and the Scheduler role: alone, they are refused)
BESIDE = {"REAPER_ENDPOINT_OFF_HOURS_RESTORE": WAKE_WIRED, "REAPER_ENDPOINT_LEARNED_WAKE": WAKE_WIRED}


@pytest.mark.parametrize(("var", "text", "model", "field", "value"), ROWS, ids=[r[0] for r in ROWS])
def test_each_kind_setting_is_read_from_its_variable(var, text, model, field, value):
    # Given the variable as the template sets it
    beside = BESIDE.get(var, {})
    settings = Settings.from_env({**beside, var: f" {text} "})
    # Then the kind's own model reads it, and its default stands without it
    assert getattr(settings.of(model), field) == value
    assert getattr(Settings.from_env(beside).of(model), field) == model.model_fields[field].default


def test_every_kind_variable_is_in_a_row_and_in_no_shared_field():
    kind_vars = {var for model in settings_models().values() for var in model.ENV_VARS}
    assert kind_vars == {r[0] for r in ROWS}
    assert not kind_vars & set(ENV_VARS)  # one field per variable: the shared Settings no longer has it
    assert not {r[3] for r in ROWS} & set(Settings.model_fields)
    assert set(KIND_SETTINGS) == set(settings_models())


def test_a_bad_kind_value_names_its_variable_when_the_runtime_is_built():
    # Given a value past the kind model's bound
    settings = Settings.from_env({"REAPER_FSX_STUCK_HOURS": "0"})
    # Then building the runtime (every function's cold start) fails in one line naming the variable
    with pytest.raises(ConfigError, match="REAPER_FSX_STUCK_HOURS") as err:
        wiring.build_runtime(settings, region="us-east-1")
    assert "\n" not in str(err.value)


def test_kind_settings_given_outright_outlive_a_replace():
    # Given a kind's settings given outright (the CLI, tests), then a shared change (the organisation's modes)
    settings = Settings().with_kind(Ec2Settings(cpu_only=True)).replace(mode="enforce")
    # Then the kind's own settings are still there, and the others are read from the environment
    assert settings.of(Ec2Settings).cpu_only is True and settings.of(FsxSettings).stuck_hours == 24.0


def _value(expr: Any, params: dict[str, Any]) -> str:
    """A variable's value as CloudFormation would render it with the parameters' defaults (resources: a name or ARN of the right shape)."""
    if isinstance(expr, (str, int, float)):
        return str(expr)
    (fn, arg), *_ = expr.items()
    if fn == "Ref":
        if arg in params:
            return str(params[arg].get("Default", ""))
        return ACCOUNT if arg == "AWS::AccountId" else f"mlreaper-{arg}"
    if fn == "GetAtt":
        return f"arn:aws:iam::{ACCOUNT}:role/{str(arg).split('.')[0]}"
    if fn == "Sub":
        text = arg if isinstance(arg, str) else arg[0]
        return re.sub(r"\$\{([^}]+)\}", lambda m: _value({"Ref": m.group(1)}, params), text).replace("mlreaper-AWS::", "")
    if fn == "If":
        return _value(arg[1], params)  # the condition's first branch
    raise AssertionError(f"unhandled {fn}")


FUNCTIONS = sorted(n for n, r in T["Resources"].items() if r["Type"] == "AWS::Serverless::Function")


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_shared_settings_parse_every_functions_environment_in_the_template(name):
    # Given the function's environment as the stack's defaults render it
    variables = {
        **T["Globals"]["Function"]["Environment"]["Variables"],
        **T["Resources"][name]["Properties"].get("Environment", {}).get("Variables", {}),
    }
    env = {k: _value(v, T["Parameters"]) for k, v in variables.items()}
    # Then the shared settings and every kind's own take it, and each REAPER_* variable is read by one of them
    settings = check_settings(Settings.from_env(env))
    assert settings.environ == {k: v for k, v in env.items() if k.startswith("REAPER_")}
    read = set(ENV_VARS) | {var for model in settings_models().values() for var in model.ENV_VARS}
    special = {"REAPER_KIND_MODES", "REAPER_KIND_GRACE_MINUTES", "REAPER_PROJECT_BUDGETS", "REAPER_OFF_HOURS", "REAPER_TIMEZONE"}
    special |= {"REAPER_WORK_START", "REAPER_WORK_END", "REAPER_WORK_DAYS", "REAPER_CLICK_TARGETS"}
    unread = {k for k in env if k.startswith("REAPER_") and k not in read | special and not k.startswith("REAPER_IDLE_MINUTES_")}
    assert unread == set()


def test_a_setting_that_moved_is_refused_not_ignored():
    # Given code that still hands the shared settings a field now in a kind's own model
    # Then it is refused in one line, never silently dropped (its default would stand unseen)
    with pytest.raises(ConfigError, match="fsx_stuck_hours"):
        Settings.validated({"fsx_stuck_hours": 6})
    with pytest.raises(ConfigError, match="cpu_onyl"):
        Ec2Settings.validated({"cpu_only": True, "cpu_onyl": False})


# Each moved setting refused as the shared Settings refused it before it moved (the same line, word for word:
# tests/unit/test_settings.py's one clear line), now when the runtime is built: every function's cold start.
MOVED_REFUSALS = [
    (
        {"REAPER_MLFLOW_IDLE_HOURS": "0"},
        "REAPER_MLFLOW_IDLE_HOURS (mlflow_idle_hours): Input should be greater than or equal to 1 (got '0')",
    ),
    (
        {"REAPER_MLFLOW_IDLE_HOURS": "2161"},
        "REAPER_MLFLOW_IDLE_HOURS (mlflow_idle_hours): Input should be less than or equal to 2160 (got '2161')",
    ),
    (
        {"REAPER_MLFLOW_IDLE_HOURS": "x"},
        "REAPER_MLFLOW_IDLE_HOURS (mlflow_idle_hours): Input should be a valid integer, unable to parse string as an integer (got 'x')",
    ),
    (
        {"REAPER_MLFLOW_READS": "maybe"},
        "REAPER_MLFLOW_READS (mlflow_reads): Input should be a valid boolean, unable to interpret input (got 'maybe')",
    ),
    (
        {"REAPER_GPU_SSM_READS": "sometimes"},
        "REAPER_GPU_SSM_READS (gpu_ssm_reads): Input should be a valid boolean, unable to interpret input (got 'sometimes')",
    ),
    (
        {"REAPER_ENDPOINT_WAKE_LEAD_MINUTES": "4"},
        "REAPER_ENDPOINT_WAKE_LEAD_MINUTES (endpoint_wake_lead_minutes): Input should be greater than or equal to 5 (got '4')",
    ),
    (
        {"REAPER_ENDPOINT_WAKE_LEAD_MINUTES": "721"},
        "REAPER_ENDPOINT_WAKE_LEAD_MINUTES (endpoint_wake_lead_minutes): Input should be less than or equal to 720 (got '721')",
    ),
    (
        {"REAPER_RESTORE_WAIT_MINUTES": "-1"},
        "REAPER_RESTORE_WAIT_MINUTES (restore_wait_minutes): Input should be greater than or equal to 0 (got '-1')",
    ),
    (
        {"REAPER_RESTORE_WAIT_MINUTES": "1441"},
        "REAPER_RESTORE_WAIT_MINUTES (restore_wait_minutes): Input should be less than or equal to 1440 (got '1441')",
    ),
    (
        {"REAPER_ENDPOINT_OFF_HOURS_RESTORE": "perhaps"},
        "REAPER_ENDPOINT_OFF_HOURS_RESTORE (endpoint_off_hours_restore): Input should be a valid boolean, unable to interpret "
        "input (got 'perhaps')",
    ),
    (
        {"REAPER_ENDPOINT_LEARNED_WAKE": "true"},
        "settings: REAPER_ENDPOINT_LEARNED_WAKE needs REAPER_RESTORE_FUNCTION_ARN and REAPER_SCHEDULER_ROLE_ARN (the schedule "
        "that brings an endpoint back invokes the restore function with that role)",
    ),
    (
        {"REAPER_ENDPOINT_OFF_HOURS_RESTORE": "true", "REAPER_ENDPOINT_LEARNED_WAKE": "false", "REAPER_RESTORE_FUNCTION_ARN": RESTORE_ARN},
        "settings: REAPER_ENDPOINT_OFF_HOURS_RESTORE needs REAPER_RESTORE_FUNCTION_ARN and REAPER_SCHEDULER_ROLE_ARN (the "
        "schedule invokes the restore function with that role)",
    ),
    (
        {"REAPER_STORAGE_IDLE_WEEKS": "0"},
        "REAPER_STORAGE_IDLE_WEEKS (storage_idle_weeks): Input should be greater than or equal to 1 (got '0')",
    ),
    (
        {"REAPER_STORAGE_IDLE_WEEKS": "105"},
        "REAPER_STORAGE_IDLE_WEEKS (storage_idle_weeks): Input should be less than or equal to 104 (got '105')",
    ),
    (
        {"REAPER_STORAGE_IDLE_WEEKS": "x"},
        "REAPER_STORAGE_IDLE_WEEKS (storage_idle_weeks): Input should be a valid integer, unable to parse string as an integer (got 'x')",
    ),
    (
        {"REAPER_STORAGE_BACKUP_RETENTION_DAYS": "0"},
        "REAPER_STORAGE_BACKUP_RETENTION_DAYS (storage_backup_retention_days): Input should be greater than or equal to 1 (got '0')",
    ),
    (
        {"REAPER_STORAGE_BACKUP_RETENTION_DAYS": "3651"},
        "REAPER_STORAGE_BACKUP_RETENTION_DAYS (storage_backup_retention_days): Input should be less than or equal to 3650 (got '3651')",
    ),
    (
        {"REAPER_STORAGE_BACKUP_RETENTION_DAYS": "1.5"},
        "REAPER_STORAGE_BACKUP_RETENTION_DAYS (storage_backup_retention_days): Input should be a valid integer, unable to parse "
        "string as an integer (got '1.5')",
    ),
]


@pytest.mark.parametrize(("env", "said"), MOVED_REFUSALS, ids=[" ".join(f"{k}={v}" for k, v in e.items()) for e, _ in MOVED_REFUSALS])
def test_a_moved_setting_is_refused_in_the_same_line_when_the_runtime_is_built(env, said):
    # Given a bad value (past a bound, not a number or a switch, or a wake with nothing to schedule it)
    settings = Settings.from_env(env)
    # Then building the runtime fails in the one line the shared settings said before the setting moved
    with pytest.raises(ConfigError) as err:
        wiring.build_runtime(settings, region="us-east-1")
    assert str(err.value) == f"bad configuration: {said}"


# The other side of each moved bound: accepted when the runtime is built, and read as given (blank: the default)
MOVED_ACCEPTED = [
    ("REAPER_STORAGE_IDLE_WEEKS", "1", StorageSettings, "storage_idle_weeks", 1),
    ("REAPER_STORAGE_IDLE_WEEKS", "104", StorageSettings, "storage_idle_weeks", 104),
    ("REAPER_STORAGE_BACKUP_RETENTION_DAYS", "1", StorageSettings, "storage_backup_retention_days", 1),
    ("REAPER_STORAGE_BACKUP_RETENTION_DAYS", "3650", StorageSettings, "storage_backup_retention_days", 3650),
    ("REAPER_STORAGE_BACKUP_RETENTION_DAYS", "", StorageSettings, "storage_backup_retention_days", None),  # the stack's default
]


@pytest.mark.parametrize(("var", "text", "model", "field", "value"), MOVED_ACCEPTED, ids=[f"{r[0]}={r[1]}" for r in MOVED_ACCEPTED])
def test_a_moved_setting_at_its_bound_is_accepted_when_the_runtime_is_built(var, text, model, field, value):
    # Given a value at the edge the shared settings accepted before the setting moved
    settings = Settings.from_env({var: text, "REAPER_LIVE_PRICES": "false"})
    # Then the runtime is built, and the kind's own model holds it
    runtime = wiring.build_runtime(settings, region="us-east-1")
    assert getattr(runtime.settings.of(model), field) == value


def test_learned_wake_is_on_by_default_only_where_a_wake_can_be_scheduled():
    # Given the endpoint function's environment (the restore function and the Scheduler role set), and a laptop's
    wired, bare = Settings.from_env(WAKE_WIRED).of(EndpointSettings), Settings.from_env({}).of(EndpointSettings)
    # Then learned wake is on where a wake can be scheduled, off where it cannot (the CLI with no restore function)
    assert wired.endpoint_learned_wake and not bare.endpoint_learned_wake
    assert EndpointSettings(restore_function_arn=RESTORE_ARN).endpoint_learned_wake is False  # one of the two is not enough


def test_the_shared_settings_no_longer_take_the_moved_fields():
    # Given code that still hands the shared settings a field now in the endpoint's, MLflow's, EC2's or storage's own model
    moved = (("endpoint_learned_wake", False), ("mlflow_idle_hours", 6), ("gpu_ssm_reads", True))
    moved += (("storage_idle_weeks", 13), ("storage_backup_retention_days", 30))
    for field, value in moved:
        # Then it is refused in one line naming the field, never kept at a default unseen
        with pytest.raises(ConfigError, match=field):
            Settings.validated({field: value})
