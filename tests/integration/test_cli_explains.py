"""Issue 39: the CLI explains itself (help, choices, one exit table), fails in one line with the documented
status for every endpoint, credential, permission and throttling case, shows progress only on a terminal,
and gives a read-only policy for plan and coverage that is what they call."""

from __future__ import annotations

import argparse
import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from reaper import kinds
from reaper.cli import main as cli
from reaper.cli.exits import AWS_ERROR, CREDENTIALS, EXIT_STATUSES, USAGE
from reaper.cli.helptext import COMMAND_HELP
from reaper.cli.progress import ERASE
from reaper.core.kind_names import KIND_NAMES
from reaper.kinds.ec2 import catalog as ec2_catalog
from reaper.restore.run import restorable_kinds
from reaper.sweep.iam import NO_PERMISSION_NEEDED, is_read, read_only_permissions, untriggered_reads
from reaper_devkit import demo, seed, seed_ec2, seed_endpoint, seed_fsx, seed_storage, seed_studio
from reaper_devkit import seed_training as st
from reaper_devkit.calls import recording
from reaper_devkit.local_aws import local_account
from reaper_devkit.moto_ext import bedrock_imported, sagemaker_jobs
from reaper_devkit.moto_ext import capacity as capacity_ext
from tests.conftest import one_line

ROOT = Path(__file__).resolve().parents[2]
PYTHONPATH = os.pathsep.join(str(ROOT / p) for p in ("layers/reaper", "devkit", "."))


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A clean environment: fake keys, no profile, no config file, no reaper settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REAPER_", "AWS_"))}
    env.update(
        PYTHONPATH=PYTHONPATH,
        AWS_ACCESS_KEY_ID="k",
        AWS_SECRET_ACCESS_KEY="s",
        AWS_REGION="us-east-1",
        AWS_CONFIG_FILE=str(tmp_path / "none"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        AWS_EC2_METADATA_DISABLED="true",
    )
    env.update(extra)
    return env


def _reaper(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reaper", *argv], env=env, capture_output=True, text=True, timeout=300)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- help ---------------------------------------------------------------------------------------


def _subparsers(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sp in action.choices.items():
                yield f"{prefix}{name}", sp
                yield from _subparsers(sp, f"{prefix}{name} ")


def test_every_command_has_a_description_two_examples_and_help_for_every_option():
    commands = dict(_subparsers(cli._parser()))
    assert set(commands) == set(COMMAND_HELP)
    for name, sp in commands.items():
        assert sp.description and sp.epilog, name
        assert sp.epilog.count("\n  reaper ") == 2, (name, sp.epilog)
        assert all(line.startswith(f"reaper {name}") for line, _ in COMMAND_HELP[name][1]), name
        unexplained = [a.dest for a in sp._actions if not a.help and not isinstance(a, argparse._SubParsersAction)]
        assert unexplained == [], (name, unexplained)


def test_help_shows_the_description_and_examples(capsys):
    assert cli.main(["restore", "--help"]) == 0
    out = capsys.readouterr().out
    assert "Bring back a reaped endpoint" in out and "examples:\n  reaper restore my-endpoint" in out
    assert "NAME" in out and "the endpoint's name" in out


def test_kind_choices_are_the_registry_and_restore_kinds_the_restorers():
    assert list(KIND_NAMES) == sorted(kinds.REGISTRY)
    assert ", ".join(cli.RESTORE_KINDS) == restorable_kinds()


@pytest.mark.parametrize(("command", "forms"), [("log", "{table,json,csv}"), ("coverage", "{table,json}"), ("restore", "{table}")])
def test_each_command_offers_only_the_outputs_it_writes(capsys, command, forms):
    assert cli.main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"--output {forms}" in out and "html" not in out.split("--output", 1)[1].split("\n", 1)[0]
    assert cli.main([command, "x", "--output", "html"] if command == "restore" else [command, "--output", "html"]) == USAGE
    assert "invalid choice: 'html'" in one_line(capsys)[1]


def test_the_exit_table_is_generated_and_the_other_pages_link_to_it():
    page = (ROOT / "docs" / "reference" / "exit-codes.md").read_text()
    assert [int(line.split("|")[1]) for line in page.splitlines() if line.startswith("| ") and line[2].isdigit()] == [
        e.status for e in EXIT_STATUSES
    ]
    for other in ("README.md", "docs/cli.md", "docs/coverage.md"):
        text = (ROOT / other).read_text()
        assert "exit-codes.md" in text, other
        assert "| 3 |" not in text and "| 4 |" not in text, f"{other} keeps its own exit table"


# -- every error path of the exit table, through the real entry point -----------------------------


@pytest.mark.parametrize("argv", [["plan", "--kind", "notebook"], ["log", "--table", "mlreaper-log"], ["coverage"]])
def test_an_endpoint_that_is_not_a_url_is_exit_2_in_one_line(tmp_path, argv):
    done = _reaper(_env(tmp_path, AWS_ENDPOINT_URL="localhost:4566"), *argv)
    assert done.returncode == USAGE, done.stderr
    assert done.stderr.splitlines() == [
        "reaper: AWS_ENDPOINT_URL='localhost:4566' is not a URL: give its scheme and host, e.g. http://localhost:4566"
    ]


def test_each_configured_endpoint_is_checked_unless_botocore_ignores_them(tmp_path):
    import boto3

    from reaper.aws import preflight
    from reaper.core.errors import ConfigError

    s = boto3.session.Session(region_name="us-east-1")
    with pytest.raises(ConfigError, match="AWS_ENDPOINT_URL_STS='sts.local' is not a URL"):
        preflight.check_endpoints(s, {"AWS_ENDPOINT_URL": "http://localhost:4566", "AWS_ENDPOINT_URL_STS": "sts.local"})
    preflight.check_endpoints(s, {"AWS_ENDPOINT_URL": "localhost:4566", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"})
    config = tmp_path / "config"
    config.write_text("[profile local]\nendpoint_url = localhost:4566\nregion = us-east-1\n")
    done = _reaper(_env(tmp_path, AWS_CONFIG_FILE=str(config), AWS_PROFILE="local"), "log", "--table", "mlreaper-log")
    assert done.returncode == USAGE and done.stderr.splitlines() == [
        "reaper: endpoint_url of profile local='localhost:4566' is not a URL: give its scheme and host, e.g. http://localhost:4566"
    ]


@pytest.mark.parametrize("argv", [["plan", "--kind", "notebook"], ["log", "--table", "mlreaper-log"]])
def test_an_endpoint_that_cannot_be_reached_is_exit_4_in_one_line(tmp_path, argv):
    port = _closed_port()
    done = _reaper(_env(tmp_path, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}"), *argv)
    assert done.returncode == AWS_ERROR, done.stderr
    assert len(done.stderr.splitlines()) == 1 and f"cannot reach AWS at http://127.0.0.1:{port}" in done.stderr
    assert done.stdout == ""


@contextmanager
def answering(operation: str, code: str, message: str) -> Iterator[None]:
    """AWS answers `operation` with this error (after botocore's retries): every other call goes to moto."""
    original = BaseClient._make_api_call

    def refuse(self: BaseClient, name: str, params: Any) -> Any:
        if name == operation:
            raise ClientError({"Error": {"Code": code, "Message": message}}, name)
        return original(self, name, params)

    BaseClient._make_api_call = refuse  # type: ignore[method-assign]
    try:
        yield
    finally:
        BaseClient._make_api_call = original  # type: ignore[method-assign]


@pytest.mark.parametrize(
    ("argv", "operation", "code", "status", "said"),
    [
        (["log"], "Query", "AccessDeniedException", AWS_ERROR, "AWS denied Query (AccessDeniedException)"),
        (["log"], "Query", "ThrottlingException", AWS_ERROR, "AWS throttled Query (ThrottlingException) past the retries"),
        (["log"], "Query", "ExpiredTokenException", CREDENTIALS, "AWS refused the credentials (ExpiredTokenException)"),
        (["plan"], "GetCallerIdentity", "InvalidClientTokenId", CREDENTIALS, "AWS refused the credentials (InvalidClientTokenId)"),
        (["plan"], "GetCallerIdentity", "Throttling", AWS_ERROR, "AWS throttled GetCallerIdentity"),
        (["report"], "Query", "AccessDenied", AWS_ERROR, "reaper iam --read-only"),
    ],
)
def test_denied_throttled_and_refused_calls_are_their_exit_status_in_one_line(
    aws, table, capsys, monkeypatch, argv, operation, code, status, said
):
    # Given an action log, and AWS answering one call with the error
    monkeypatch.setenv("REAPER_TABLE", table)
    with answering(operation, code, "User: arn:aws:iam::123456789012:user/ana is not authorized\nto do this"):
        # When the command runs
        got = cli.main(argv)
    # Then its status is the table's, said in exactly one line
    out, err = one_line(capsys)
    assert got == status and said in err, err
    assert out == ""


def test_a_bad_setting_is_said_without_the_librarys_wording(tmp_path):
    done = _reaper(_env(tmp_path, REAPER_TIMEZONE="Mars/Olympus", AWS_ENDPOINT_URL=f"http://127.0.0.1:{_closed_port()}"), "plan")
    assert done.returncode == USAGE and len(done.stderr.splitlines()) == 1
    assert "unknown timezone 'Mars/Olympus'" in done.stderr and "Value error" not in done.stderr


# -- progress on a terminal -------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_one_updating_line_on_a_terminal_and_erased_at_the_end(aws, capsys, monkeypatch):
    # Given notebooks to sweep, and stderr a terminal
    seed.notebook(aws.client("sagemaker"), "nb-a")
    seed.notebook(aws.client("sagemaker"), "nb-b")
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    # When `reaper plan` sweeps
    assert cli.main(["plan", "--kind", "notebook"]) == 0
    shown = terminal.getvalue()
    # Then each step rewrote one line in place (no newline), found, read and decided, and the line was erased
    assert "\n" not in shown and shown.endswith(ERASE)
    steps = [s for s in shown.split(ERASE) if s]
    assert steps[0] == "… notebook us-east-1: 2 found, reading signals"
    assert "… notebook us-east-1: signals read for 2, deciding" in steps
    assert "… notebook us-east-1: 2 of 2 decided" in steps
    assert "nb-a" in capsys.readouterr().out


@pytest.mark.parametrize(("tty", "argv"), [(False, []), (True, ["--output", "json"])])
def test_progress_is_quiet_when_piped_or_for_json(aws, capsys, monkeypatch, tty, argv):
    seed.notebook(aws.client("sagemaker"), "nb-a")
    stderr = FakeTerminal() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    assert cli.main(["plan", "--kind", "notebook", *argv]) == 0
    assert stderr.getvalue() == ""


# -- try it read-only ---------------------------------------------------------------------------------


DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "vision"}
OTHER_REGION = "us-west-2"


def _seed_every_read_path(aws: Any, now: datetime) -> None:
    """Beyond the demo: the resources that make a dry run take each of its conditional reads."""
    sm, ec2, cw, logs = aws.client("sagemaker"), aws.client("ec2"), aws.client("cloudwatch"), aws.client("logs")
    seed_ec2.spot_instance(ec2, "persistent", "stop", DEV, now=now)  # ec2:DescribeSpotInstanceRequests
    st.transform_job(sm, "ro-transform", now, hours_ago=3, tags=DEV)  # running: sagemaker:DescribeTransformJob
    st.automl_job(sm, "ro-automl", now, hours_ago=3, tags=DEV)  # running: sagemaker:DescribeAutoMLJobV2
    pool = st.training_job(sm, "ro-pool", now, hours_ago=2, tags=DEV)  # a warm pool: sagemaker:DescribeTrainingJob
    sagemaker_jobs.retain_warm_pool(pool, now - timedelta(minutes=30), 1800)
    st.training_job(sm, "ro-ckpt", now, hours_ago=3, tags=DEV, checkpoints=True)  # s3:ListBucket
    st.checkpoint_objects(aws.client("s3"), "s3://ml-artifacts/ro-ckpt/checkpoints", now, [170, 120])
    st.training_job(sm, "ro-stall", now, hours_ago=3, tags=DEV)  # CPU quiet: logs:DescribeLogStreams
    st.job_log(logs, st.LOG_GROUP, "ro-stall/algo-1-1764662400", now, [170, 150, 125])
    st.utilization(cw, st.LOG_GROUP, "ro-stall/algo-1", now, 1.0)
    capacity_ext.training_plan(  # a training plan's tags: sagemaker:ListTags
        "us-east-1", "ro-plan", instance_type="ml.p5.48xlarge", total=1, in_use=0,
        start=now - timedelta(days=1), end=now + timedelta(days=3), upfront_fee=1000.0, tags=DEV,
    )  # fmt: skip
    subnet, group = seed_fsx.network(ec2)  # an export begun: fsx:DescribeDataRepositoryTasks
    seed_fsx.file_system(aws.client("fsx"), subnet, group, tags={**DEV, "reaper:export-task": "task-0123456789abcdef0"})
    # a volume whose snapshot phase 1 took: ec2:DescribeSnapshots
    seed_storage.volume(ec2, now - timedelta(days=30), tags={**DEV, "reaper:snapshot-id": "snap-0123456789abcdef0"})
    # a backup begun: fsx:DescribeBackups; a backup the reaper made, of a file system gone: fsx:DescribeFileSystems
    seed_fsx.file_system(aws.client("fsx"), subnet, group, tags={**DEV, "reaper:backup-id": "backup-0123456789abcdef0"})
    seed_storage.reaper_backup(aws.client("fsx"), subnet, group, now - timedelta(days=60))
    seed_storage.stopped_gpu_box(ec2, now - timedelta(days=30), now=now)  # its type: ec2:DescribeInstanceTypes
    bedrock_imported.imported_model("ro-imported", now - timedelta(days=90), DEV)  # its tags: bedrock:ListTagsForResource
    # a Studio space with no app: when its apps last started (cloudtrail:LookupEvents)
    seed_studio.space(sm, seed_studio.domain(sm, "ro-studio", tags=DEV), "ro-appless", size_gib=5)
    # a Capacity Block ending within the hour: who runs on it (ec2:DescribeInstances)
    capacity_ext.capacity_block(ec2, "p5.48xlarge", 1, start=now - timedelta(days=1), end=now + timedelta(minutes=50), tags=DEV)
    # alone in its region, a quiet dev endpoint's one model is described, not listed: sagemaker:DescribeModel
    seed_endpoint.classic(aws.client("sagemaker", region_name=OTHER_REGION), "ro-alone", DEV)
    seed_endpoint.age("ro-alone", now, 190, region=OTHER_REGION)


def _plan_and_coverage(capsys: Any, *kind_args: str) -> set[str]:
    """The IAM actions `reaper plan` and `reaper coverage` call, in both regions, each from a fresh start: a command
    is its own process, so the instance-type catalogue it keeps per process (kinds/ec2/catalog.py) is read again."""
    regions = ("--region", "us-east-1", "--region", OTHER_REGION)
    ec2_catalog._cache.clear()
    with recording() as made:
        cli.main(["plan", *kind_args, *regions])
        cli.main(["coverage", *kind_args, *regions])
    capsys.readouterr()
    return made.actions - NO_PERMISSION_NEEDED


def _read_only_policy(capsys: Any, *kind_args: str) -> set[str]:
    assert cli.main(["iam", "--read-only", *kind_args]) == 0
    policy = json.loads(capsys.readouterr().out)
    assert policy["Statement"][0]["Effect"] == "Allow" and policy["Statement"][0]["Resource"] == "*"
    return set(policy["Statement"][0]["Action"])


def test_the_read_only_policy_is_exactly_what_plan_and_coverage_call_and_no_write(aws, capsys):
    # Given an account with every kind's demo resources, and those that make each conditional read of a dry run
    now = datetime.now(UTC)
    for scene in demo.load_scenes():
        scene.seed(aws, now)
    _seed_every_read_path(aws, now)
    # When plan and coverage run, for every kind and for each kind alone, every AWS call recorded
    called = _plan_and_coverage(capsys)
    granted = _read_only_policy(capsys)
    untriggered = set(untriggered_reads(KIND_NAMES))
    # Then the policy is what they called, but the reads the kinds declare the kit cannot bring about (and those
    # were not called: one that is called leaves that list); all are reads, and the policy grants only reads
    assert granted == read_only_permissions(KIND_NAMES) and all(is_read(p) for p in granted)
    assert called == granted - untriggered, (sorted(called - granted), sorted(granted - untriggered - called))
    assert not called & untriggered and untriggered <= granted
    page = (ROOT / "docs" / "try-read-only.md").read_text()
    assert f"{len(granted)} actions" in page and all(f"`{p}`" in page for p in untriggered)  # the page says it as it is
    # ... and so is each kind's policy (`reaper iam --read-only --kind K`) for `plan --kind K`
    for name in KIND_NAMES:
        alone, policy = _plan_and_coverage(capsys, "--kind", name), _read_only_policy(capsys, "--kind", name)
        own_untriggered = set(untriggered_reads([name]))
        assert alone == policy - own_untriggered, (name, sorted(alone - policy), sorted(policy - own_untriggered - alone))
        assert f"{name} {len(policy)}" in page


def test_the_demos_kept_account_is_reached_with_the_lines_it_prints(tmp_path):
    # Given the demo's local account, kept, with its action log; and a shell whose profile would win over keys
    with local_account() as url:
        assert cli.main(["init", "--table", demo.TABLE]) == 0
        lines = demo.pointing_lines(url)
        env = _env(tmp_path, AWS_PROFILE="work", AWS_ACCESS_KEY_ID="real", AWS_ENDPOINT_URL="")
        # When a user pastes the printed lines and runs the CLI
        script = "\n".join([*lines, f"{sys.executable} -m reaper log --since 1h"])
        done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=300)
    # Then it reads the demo's log in the local account
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no actions logged since") and done.stderr == ""
