"""Configuration, validated once (at cold start or CLI start) from the environment.

Every value has the default the stack ships with; the template sets them from its parameters.
Logic never reads os.environ: it is handed a Settings.

`Settings` holds what more than one kind (or the sweep, the records, Slack) reads. A setting that one
kind alone reads is in that kind's own model beside it (kinds/<kind>/settings.py, a `KindSettings`),
read from the same REAPER_* variable (docs/configuration.md): `settings.of(Ec2Settings)`. The variables
are kept in `Settings.environ`, so each kind's model is read from exactly what the shared one was; the
runtime's construction (reaper.wiring) reads every kind's model at cold start, so a bad value still
fails the function's first call loudly.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import time
from typing import Any, ClassVar, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from reaper.core.errors import ConfigError
from reaper.core.model import Mode

KINDS = ("notebook", "endpoint", "training-job", "fsx", "studio-app", "ec2", "capacity", "bedrock-pt", "mlflow", "storage")
DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_TIME = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


def _csv(value: Any) -> Any:
    """A comma list, trimmed, lower case, each value once (a region named twice is swept once)."""
    if isinstance(value, str):
        value = [v.strip().lower() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        return tuple(dict.fromkeys(value))
    return value


# A grace longer than a year is a typo, and a warning's due time past datetime's range would end
# the sweep (timedelta overflows): GraceMinutes and TrainingGraceMinutes stop there too.
MAX_GRACE_MINUTES = 525_600
MIN_IDLE_MINUTES, MAX_IDLE_MINUTES = 5, 10_080  # as the reaper:idle-minutes tag (README.md, Tags)


class OffHours(BaseModel):
    """Working hours; outside them, off-hours policy (when enabled) stops dev resources."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = False
    timezone: str = "UTC"
    start: time = time(8, 0)
    end: time = time(19, 0)
    days: tuple[str, ...] = ("mon", "tue", "wed", "thu", "fri")

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown timezone {v!r}") from exc
        return v

    @field_validator("start", "end", mode="before")
    @classmethod
    def _hhmm(cls, v: Any) -> Any:
        if isinstance(v, str):
            m = _TIME.match(v.strip())
            if not m:
                raise ValueError(f"{v!r} is not HH:MM")
            return time(int(m.group(1)), int(m.group(2)))
        return v

    @field_validator("days", mode="before")
    @classmethod
    def _days(cls, v: Any) -> Any:
        days = _csv(v)
        if isinstance(days, tuple) and len(days) == 1 and "-" in days[0]:
            first, last = days[0].split("-", 1)
            if first in DAY_NAMES and last in DAY_NAMES:
                i, j = DAY_NAMES.index(first), DAY_NAMES.index(last)
                return DAY_NAMES[i : j + 1] if i <= j else DAY_NAMES[i:] + DAY_NAMES[: j + 1]
        for d in days:
            if d not in DAY_NAMES:
                raise ValueError(f"unknown day {d!r} (use mon..sun, or a range like mon-fri)")
        return days


class KindSettings(BaseModel):
    """One kind's own settings (kinds/<kind>/settings.py): its fields, and the REAPER_* variable of each."""

    model_config = ConfigDict(frozen=True, extra="forbid")  # a field that moved (or never was) is refused, never ignored

    ENV_VARS: ClassVar[dict[str, str]] = {}  # environment variable -> field

    @classmethod
    def from_env(cls: type[K], env: Mapping[str, str]) -> K:
        """Read its REAPER_* variables (blank ones keep the default). Raises ConfigError with one readable line."""
        raw = {name: env[var].strip() for var, name in cls.ENV_VARS.items() if env.get(var, "").strip()}
        return cls.validated(raw)

    @classmethod
    def validated(cls: type[K], raw: Mapping[str, Any]) -> K:
        try:
            return cls.model_validate(dict(raw))
        except ValidationError as exc:
            raise config_error(exc, {name: var for var, name in cls.ENV_VARS.items()}) from None


K = TypeVar("K", bound=KindSettings)


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")  # a field that moved (or never was) is refused, never ignored

    # the REAPER_* variables it was read from (Settings.from_env): each kind's own model is read from them
    environ: dict[str, str] = Field(default_factory=dict, repr=False)
    # kind settings given outright (`with_kind`: the CLI, tests), by model name; the rest come from `environ`
    kinds: dict[str, KindSettings] = Field(default_factory=dict, repr=False)
    _read: dict[type[KindSettings], KindSettings] = PrivateAttr(default_factory=dict)

    mode: Mode = Mode.DRY_RUN
    kind_modes: dict[str, Mode] = Field(default_factory=dict)
    grace_minutes: int = Field(default=60, ge=0, le=MAX_GRACE_MINUTES)
    # reaper report: beside list-price savings, what they come to after Savings Plans / RI coverage
    # (Cost Explorer, $0.01 a request: opt-in; reaper/aws/discounts.py)
    discounts: bool = False
    kind_grace_minutes: dict[str, int] = Field(default_factory=lambda: {"training-job": 0})
    idle_minutes: dict[str, int] = Field(
        default_factory=lambda: {
            "notebook": 60,
            "endpoint": 120,
            "fsx": 720,
            "studio-app": 60,
            "ec2": 60,
            "capacity": 1440,
            "bedrock-pt": 10_080,
        }
    )
    tag_prefix: str = "reaper:"
    production_stages: tuple[str, ...] = ("prod", "production")
    dev_stages: tuple[str, ...] = ("dev", "test", "sandbox", "staging")
    off_hours: OffHours = Field(default_factory=OffHours)
    regions: tuple[str, ...] = ()
    table: str | None = None
    queue_url: str | None = None
    slack_webhook_url: str | None = None
    slack_secret_arn: str | None = None
    # "bot": the secret holds a bot token; sweeps queue one message per owner (reaper.slack.owner_summary)
    slack_mode: str = Field(default="webhook", pattern="^(webhook|bot)$")
    # the organisation (docs/deploy-organisation.md): where a member sends its records, where the central log is
    central_event_bus_arn: str | None = Field(default=None, pattern=r"^arn:aws[a-z-]*:events:[a-z0-9-]+:\d{12}:event-bus/[\w.\-/]+$")
    org_table: str | None = None
    # per-account settings from the central account (docs/deploy-organisation.md, "Per-account settings"):
    # its settings table, whether this stack takes them (follow | dry-run-only | ignore), and this account's id
    central_settings_table_arn: str | None = Field(
        default=None, pattern=r"^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table/[a-zA-Z0-9_.-]{3,255}$"
    )
    central_settings: str = Field(default="follow", pattern="^(follow|dry-run-only|ignore)$")
    account_id: str | None = Field(default=None, pattern=r"^\d{12}$")
    org_settings_table: str | None = None  # the CLI's `reaper org set` (central credentials)
    # JupyterReads: read the Jupyter server of running notebooks without the agent, and of the Studio apps idle
    # shutdown does not cover (docs/jupyter-reads.md)
    jupyter_reads: bool = False
    # training-job ceilings
    max_hours: float = Field(default=24.0, gt=0, le=8_760)  # the ceiling tags' bounds (docs/safety.md, item 2)
    max_usd: float = Field(default=500.0, gt=0, le=1_000_000)
    # the EventBridge Scheduler group of the one-off schedules the kinds arrange (the endpoint's wakes, FSx's checks)
    schedule_group: str = "default"
    # a sweep too long for one invocation (reaper.sweep.continuation): the function's own schedule (how
    # often a full sweep starts), and the Scheduler group and role its next part is arranged with
    sweep_schedule: str | None = None
    continuation_schedule_group: str | None = None
    continuation_role_arn: str | None = None
    # DigestBill: the daily digest's weekly line beside what AWS billed (one Cost Explorer read a day: docs/bill.md)
    digest_bill: bool = False
    # Budgets per experiment: ml:project -> monthly USD (REAPER_PROJECT_BUDGETS
    # "proj-a=500,proj-b=2000"; projects are case-sensitive, as the cost-allocation tag), the SNS
    # topic the budgets notify, and whether 100 % acts (default: notify only, like default ceilings)
    project_budgets: dict[str, float] = Field(default_factory=dict)
    budget_topic_arn: str | None = None
    budget_enforce: bool = False
    # AnomalyAlerts=on: the SNS topic Cost Anomaly Detection alerts on the ML tags arrive on (the
    # notifier sets the monitors up and tells each alert's owner; docs/unit-costs.md), and the total
    # impact (USD) an anomaly needs before AWS alerts
    anomaly_topic_arn: str | None = None
    anomaly_threshold_usd: float = Field(default=100.0, ge=0, le=1_000_000)
    # LivePrices (docs/prices.md): list prices from the AWS Price List API, cached in the action-log table;
    # off: the shipped copy of AWS's price list alone. The API is served from these regions only.
    live_prices: bool = True
    pricing_region: str = Field(default="us-east-1", pattern="^(us-east-1|eu-central-1|ap-south-1)$")

    @field_validator("project_budgets")
    @classmethod
    def _budgets(cls, v: dict[str, float]) -> dict[str, float]:
        for project, usd in v.items():
            if not project or not 0 < usd <= 1_000_000:
                raise ValueError(f"project {project!r}: a budget from 0 to 1,000,000 USD expected")
        return v

    @field_validator("kind_grace_minutes")
    @classmethod
    def _kind_grace(cls, v: dict[str, int]) -> dict[str, int]:
        for kind, minutes in v.items():
            if not 0 <= minutes <= MAX_GRACE_MINUTES:
                raise ValueError(f"grace for {kind}: from 0 to {MAX_GRACE_MINUTES:,} minutes expected, got {minutes}")
        return v

    @field_validator("table")
    @classmethod
    def _table(cls, v: str | None) -> str | None:
        problem = table_name_problem(v) if v is not None else None
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("production_stages", "dev_stages", "regions", mode="before")
    @classmethod
    def _lists(cls, v: Any) -> Any:
        return _csv(v)

    @field_validator("tag_prefix")
    @classmethod
    def _prefix(cls, v: str) -> str:
        v = v.strip()
        if not v or len(v) > 64:
            raise ValueError("tag prefix must be 1..64 characters")
        return v

    @model_validator(mode="after")
    def _kinds_known(self) -> Settings:
        for name in (*self.kind_modes, *self.kind_grace_minutes, *self.idle_minutes):
            if name not in KINDS:
                raise ValueError(f"unknown kind {name!r} (kinds: {', '.join(KINDS)})")
        for name, minutes in self.idle_minutes.items():
            # the sane bounds for reaper:idle-minutes (docs/safety.md, item 2) hold for the stack's defaults too; past
            # them a window's start overflows datetime (REAPER_IDLE_MINUTES_NOTEBOOK=99999999999999999999999)
            if not MIN_IDLE_MINUTES <= minutes <= MAX_IDLE_MINUTES:
                raise ValueError(f"idle minutes for {name}: from {MIN_IDLE_MINUTES} to {MAX_IDLE_MINUTES:,} expected, got {minutes}")
        return self

    @model_validator(mode="after")
    def _central_settings_wired(self) -> Settings:
        if self.central_settings_table_arn and not self.account_id:
            raise ValueError(
                "REAPER_CENTRAL_SETTINGS_TABLE_ARN needs REAPER_ACCOUNT_ID (the key of this account's item; the stack sets it)"
            )
        return self

    def of(self, model: type[K]) -> K:
        """One kind's own settings: given by `with_kind`, else read from the environment (once)."""
        given = self.kinds.get(model.__name__)
        if isinstance(given, model):
            return given
        read = self._read.get(model)
        if not isinstance(read, model):
            read = model.from_env(self.environ)
            self._read[model] = read
        return read

    def with_kind(self, *models: KindSettings) -> Settings:
        """A copy with these kinds' own settings given outright."""
        return self.replace(kinds={**self.kinds, **{type(m).__name__: m for m in models}})

    def mode_for(self, kind: str) -> Mode:
        return self.kind_modes.get(kind, self.mode)

    def grace_for(self, kind: str) -> int:
        return self.kind_grace_minutes.get(kind, self.grace_minutes)

    def idle_for(self, kind: str) -> int:
        return self.idle_minutes.get(kind, 60)

    def tag(self, name: str) -> str:
        """The full tag key for a reaper tag name, e.g. tag('exempt') -> 'reaper:exempt'."""
        return f"{self.tag_prefix}{name}"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read REAPER_* variables. Raises ConfigError with one readable line."""
        env = os.environ if env is None else env
        raw: dict[str, Any] = {"environ": {k: v for k, v in env.items() if k.startswith("REAPER_")}}
        for var, name in ENV_VARS.items():
            value = env.get(var, "").strip()
            if value:
                raw[name] = value.lower() if name == "mode" else value
        kind_modes = _pairs(env.get("REAPER_KIND_MODES", ""), "REAPER_KIND_MODES")
        if kind_modes:
            raw["kind_modes"] = {k: v.lower() for k, v in kind_modes.items()}
        idle = dict(cls.model_fields["idle_minutes"].default_factory())  # type: ignore[misc,call-arg]
        for kind in KINDS:
            var = "REAPER_IDLE_MINUTES_" + kind.upper().replace("-", "_")
            if env.get(var, "").strip():
                idle[kind] = env[var].strip()
        raw["idle_minutes"] = idle
        grace = dict(cls.model_fields["kind_grace_minutes"].default_factory())  # type: ignore[misc,call-arg]
        grace.update(_pairs(env.get("REAPER_KIND_GRACE_MINUTES", ""), "REAPER_KIND_GRACE_MINUTES"))
        raw["kind_grace_minutes"] = grace
        budgets: dict[str, str] = {}
        for item in (p.strip() for p in env.get("REAPER_PROJECT_BUDGETS", "").split(",")):
            if item:
                project, sep, usd = item.rpartition("=")
                if not sep:
                    raise ConfigError(f"bad configuration: REAPER_PROJECT_BUDGETS: expected project=usd pairs, got {item!r}")
                budgets[project.strip()] = usd.strip()
        raw["project_budgets"] = budgets
        off: dict[str, Any] = {
            "enabled": env.get("REAPER_OFF_HOURS", "").strip().lower() in ("1", "true", "yes", "on"),
        }
        for var, name in (
            ("REAPER_TIMEZONE", "timezone"),
            ("REAPER_WORK_START", "start"),
            ("REAPER_WORK_END", "end"),
            ("REAPER_WORK_DAYS", "days"),
        ):
            if env.get(var, "").strip():
                off[name] = env[var].strip()
        raw["off_hours"] = off
        return cls.validated(raw)

    @classmethod
    def validated(cls, raw: dict[str, Any]) -> Settings:
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise config_error(exc, _VAR_OF) from None

    def replace(self, **changes: Any) -> Settings:
        """A copy with changes, validated like the original (CLI flags use this); the kinds' own settings kept."""
        return self.validated({**self.model_dump(exclude={"kinds"}), "kinds": dict(self.kinds), **changes})


def config_error(exc: ValidationError, var_of: Mapping[str, str]) -> ConfigError:
    """The first error in one line, naming the environment variable that set the field."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "settings"
    var = var_of.get(where) or (var_of.get(str(first["loc"][0])) if first["loc"] else None)
    named = f"{var} ({where})" if var else where
    got = f" (got {first['input']!r})" if var and isinstance(first.get("input"), (str, int, float)) else ""
    return ConfigError(f"bad configuration: {named}: {_plain(first['msg'])}{got}")


# pydantic prefixes what a validator raised with the exception's kind; the reader needs only the reason
# (https://docs.pydantic.dev/latest/errors/validation_errors/#value_error, #assertion_error)
LIBRARY_PREFIXES = ("Value error, ", "Assertion failed, ")


def _plain(message: str) -> str:
    for prefix in LIBRARY_PREFIXES:
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


# DynamoDB's naming rules: 3 to 255 of a-z A-Z 0-9 _ - . (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html);
# the data-plane calls also take the table's ARN (botocore's TableArn shape).
TABLE_NAME = re.compile(r"[a-zA-Z0-9_.-]{3,255}")
TABLE_ARN = re.compile(r"arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table/[a-zA-Z0-9_.-]{3,255}")


def table_name_problem(name: str) -> str | None:
    """Why `name` cannot be an action-log table (AWS would refuse every call with it), or None."""
    if TABLE_NAME.fullmatch(name) or TABLE_ARN.fullmatch(name):
        return None
    return "not a DynamoDB table name: 3 to 255 of the letters a-z, A-Z, digits, '_', '-' and '.'"


# environment variable -> setting (the template sets these; the CLI reads them too)
ENV_VARS: dict[str, str] = {
    "REAPER_MODE": "mode",
    "REAPER_DISCOUNTS": "discounts",
    "REAPER_GRACE_MINUTES": "grace_minutes",
    "REAPER_TAG_PREFIX": "tag_prefix",
    "REAPER_PRODUCTION_STAGES": "production_stages",
    "REAPER_DEV_STAGES": "dev_stages",
    "REAPER_REGIONS": "regions",
    "REAPER_TABLE": "table",
    "REAPER_QUEUE_URL": "queue_url",
    "REAPER_SLACK_WEBHOOK_URL": "slack_webhook_url",
    "REAPER_SLACK_SECRET_ARN": "slack_secret_arn",
    "REAPER_SLACK_MODE": "slack_mode",
    "REAPER_CENTRAL_EVENT_BUS_ARN": "central_event_bus_arn",
    "REAPER_ORG_TABLE": "org_table",
    "REAPER_CENTRAL_SETTINGS_TABLE_ARN": "central_settings_table_arn",
    "REAPER_CENTRAL_SETTINGS": "central_settings",
    "REAPER_ACCOUNT_ID": "account_id",
    "REAPER_ORG_SETTINGS_TABLE": "org_settings_table",
    "REAPER_JUPYTER_READS": "jupyter_reads",
    "REAPER_MAX_HOURS": "max_hours",
    "REAPER_MAX_USD": "max_usd",
    "REAPER_SCHEDULE_GROUP": "schedule_group",
    "REAPER_SWEEP_SCHEDULE": "sweep_schedule",
    "REAPER_CONTINUATION_SCHEDULE_GROUP": "continuation_schedule_group",
    "REAPER_CONTINUATION_ROLE_ARN": "continuation_role_arn",
    "REAPER_DIGEST_BILL": "digest_bill",
    "REAPER_LIVE_PRICES": "live_prices",
    "REAPER_PRICING_REGION": "pricing_region",
    "REAPER_BUDGET_TOPIC_ARN": "budget_topic_arn",
    "REAPER_BUDGET_ENFORCE": "budget_enforce",
    "REAPER_ANOMALY_TOPIC_ARN": "anomaly_topic_arn",
    "REAPER_ANOMALY_THRESHOLD_USD": "anomaly_threshold_usd",
}


def _pairs(text: str, var: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        if "=" not in item:
            raise ConfigError(f"bad configuration: {var}: expected kind=value pairs, got {item!r}")
        key, value = item.split("=", 1)
        pairs[key.strip().lower()] = value.strip()
    return pairs


_VAR_OF = {name: var for var, name in ENV_VARS.items()} | {
    "kind_modes": "REAPER_KIND_MODES",
    "kind_grace_minutes": "REAPER_KIND_GRACE_MINUTES",
    "project_budgets": "REAPER_PROJECT_BUDGETS",
    "idle_minutes": "REAPER_IDLE_MINUTES_<KIND>",
    "off_hours": "REAPER_OFF_HOURS",
    "off_hours.timezone": "REAPER_TIMEZONE",
    "off_hours.start": "REAPER_WORK_START",
    "off_hours.end": "REAPER_WORK_END",
    "off_hours.days": "REAPER_WORK_DAYS",
}
