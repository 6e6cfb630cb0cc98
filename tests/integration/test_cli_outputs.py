"""`--output table|json|csv|html`, `--version`, and the log's and report's filters, through the CLI."""

from __future__ import annotations

import csv
import io
import json
import sys
from datetime import UTC, datetime, timedelta
from importlib import metadata
from typing import Any

import pytest

from reaper import __version__
from reaper.cli.main import main
from reaper.record.actionlog import ActionLog
from reaper_devkit import seed
from tests.helpers.log_entries import record_stop, split

HOSTILE = '<script>alert("pwned")</script>, "quoted"\nsecond line'
LONG_REASON = "no activity for 3 h 05 m; " + "the agent reported 0 in every period, and nothing else said otherwise; " * 10


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in captured.err, captured.err
    assert captured.out == ""
    return err[0]


@pytest.fixture
def fleet(sm: Any, cw: Any) -> None:
    now = datetime.now(UTC)
    for name, owner, activity in (
        ("idle-ana", "ana@example.com", [0] * 20),
        ("idle-bo", "bo@example.com", [0] * 20),
        ("busy-ana", "ana@example.com", [1] * 20),
    ):
        seed.notebook(sm, name, {"ml:owner": owner, "ml:project": "llm team: v2"})
        seed.activity(cw, name, now, activity)


def log_entry(log: ActionLog, at: datetime, rid: str, reason: str = LONG_REASON, **given: Any) -> None:
    fields, evidence = split(given)
    record_stop(log, at, rid, reason=reason, project="llm", evidence=evidence, **fields)


@pytest.fixture
def logged(aws: Any, table: str, monkeypatch: pytest.MonkeyPatch) -> datetime:
    """An action log with stops over three days, a hostile owner, a job and a dry-run finding."""
    monkeypatch.setenv("REAPER_TABLE", table)
    log = ActionLog(aws.client("dynamodb"), table)
    now = datetime.now(UTC)
    log_entry(log, now - timedelta(days=2, hours=3), "nb-1")
    log_entry(log, now - timedelta(days=1), "nb-2", owner=HOSTILE, reason=HOSTILE)
    log_entry(log, now - timedelta(hours=30), "ep-1", kind="endpoint", hourly=1.5, owner="bo@example.com")
    log_entry(log, now - timedelta(hours=5), "job-1", kind="training-job", hourly=40.0, estimated_usd=100.0, max_usd=300.0)
    log_entry(log, now - timedelta(hours=2), "nb-3", verdict="warn", executed=False, owner="bo@example.com")
    log_entry(log, now - timedelta(hours=1), "nb-dry", executed=False)
    return now


# -- --version ------------------------------------------------------------------------------


def test_version_prints_the_installed_version(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out.strip()
    try:
        expected = metadata.version("mlreaper")
    except metadata.PackageNotFoundError:
        expected = __version__
    assert out == f"reaper (mlreaper) {expected}"


def test_version_falls_back_to_the_layers_constant_without_package_metadata(capsys, monkeypatch):
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"reaper (mlreaper) {__version__}"


# -- bad values: exit 2, one line -----------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["plan", "--output", "xml"], "--output"),
        (["sweep", "--output", "html"], "--output"),
        (["log", "--output", "yaml"], "--output"),
        (["report", "--output", "pdf"], "--output"),
        (["plan", "--json", "--output", "csv"], "--json"),
        (["report", "--by", "team"], "--by"),
        (["log", "--verdict", "maybe"], "--verdict"),
        (["log", "--kind", "spaceship"], "spaceship"),
        (["report", "--kind", "spaceship"], "spaceship"),
        (["report", "--out", "x.html"], "--out"),
        (["report", "--output", "csv", "--out", "x.html"], "--out"),
        (["log", "--since", "soon", "--output", "csv"], "--since"),
        (["plan", "--no-such-flag"], "--no-such-flag"),
        ([], "command"),
    ],
)
def test_bad_values_are_exit_2_with_one_line(aws, table, capsys, monkeypatch, argv, says):
    monkeypatch.setenv("REAPER_TABLE", table)
    assert main(argv) == 2
    assert says in one_error_line(capsys)


def test_html_to_a_file_that_cannot_be_written_is_one_line(logged, capsys, tmp_path):
    target = tmp_path / "no-such-dir" / "report.html"
    assert main(["report", "--output", "html", "--out", str(target)]) == 2
    assert str(target) in one_error_line(capsys)


def test_html_without_matplotlib_is_one_line_naming_the_pip_command(logged, capsys, monkeypatch, tmp_path):
    # Given an install without the report extra (an import of matplotlib fails)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    target = tmp_path / "r.html"
    # When the HTML report is asked for
    assert main(["report", "--output", "html", "--out", str(target)]) == 2
    # Then one line says how to get it, and nothing is written
    line = one_error_line(capsys)
    assert "pip install 'mlreaper[report]'" in line and "matplotlib" in line
    assert not target.exists()


# -- plan / sweep -----------------------------------------------------------------------------


def test_plan_csv_has_a_header_every_resource_and_whole_reasons(aws, fleet, capsys):
    assert main(["plan", "--kind", "notebook", "--output", "json"]) == 0
    as_json = {r["id"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert main(["plan", "--kind", "notebook", "--output", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["id"] for r in rows} == set(as_json) == {"idle-ana", "idle-bo", "busy-ana"}
    for r in rows:
        assert r["reason"] == as_json[r["id"]]["reason"] and r["owner"] == as_json[r["id"]]["owner"]
        assert r["project"] == "llm team: v2"
    assert {r["verdict"] for r in rows} == {"act", "keep"} and {r["executed"] for r in rows} == {"false"}


def test_json_is_the_alias_of_output_json(aws, fleet, capsys):
    assert main(["plan", "--kind", "notebook", "--json"]) == 0
    alias = capsys.readouterr().out
    assert main(["plan", "--kind", "notebook", "--output", "json", "--json"]) == 0
    assert sorted(json.loads(x)["id"] for x in capsys.readouterr().out.splitlines()) == sorted(
        json.loads(x)["id"] for x in alias.splitlines()
    )


def test_sweep_csv_keeps_the_filters(aws, fleet, capsys):
    assert main(["sweep", "--kind", "notebook", "--output", "csv", "--verdict", "act", "--owner", "BO@example.com"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["id"], r["verdict"]) for r in rows] == [("idle-bo", "act")]


# -- log ------------------------------------------------------------------------------------------


def test_log_filters_by_kind_verdict_and_owner(logged, capsys):
    assert main(["log", "--output", "json", "--kind", "notebook", "--verdict", "act", "--owner", "ANA@example.com"]) == 0
    ids = [json.loads(x)["id"] for x in capsys.readouterr().out.splitlines()]
    assert ids == ["nb-1", "nb-dry"]
    assert main(["log", "--output", "json", "--kind", "endpoint", "--kind", "training-job"]) == 0
    assert sorted(json.loads(x)["id"] for x in capsys.readouterr().out.splitlines()) == ["ep-1", "job-1"]
    assert main(["log", "--owner", "nobody@example.com"]) == 0
    assert "no actions logged matching the filters" in capsys.readouterr().out


def test_log_csv_parses_with_every_entry_and_whole_hostile_reasons(logged, capsys):
    assert main(["log", "--output", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["id"] for r in rows] == ["nb-1", "ep-1", "nb-2", "job-1", "nb-3", "nb-dry"]  # oldest first
    hostile = next(r for r in rows if r["id"] == "nb-2")
    assert hostile["owner"] == HOSTILE and hostile["reason"] == HOSTILE  # commas, quotes and a newline survive
    assert next(r for r in rows if r["id"] == "nb-1")["reason"] == LONG_REASON


@pytest.mark.parametrize("width", [120, 80, 50])
def test_log_table_fits_the_width_with_every_reason_whole(logged, capsys, monkeypatch, width):
    # Given a log whose first entry's reason is longer than any terminal line
    monkeypatch.setenv("COLUMNS", str(width))
    # When `reaper log` prints it as a table
    assert main(["log"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    # Then every line fits, nothing is cut with an ellipsis, and the long reason reads whole (wrapped)
    assert len(lines) >= 6 and all(len(line) <= width for line in lines), max(map(len, lines))
    assert "…" not in out
    assert " ".join(LONG_REASON.split()) in " ".join(out.split())


# -- report --------------------------------------------------------------------------------------


def test_report_csv_has_every_group_and_the_kind_filter(logged, capsys):
    assert main(["report", "--output", "csv", "--by", "owner"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["owner"] for r in rows} == {"ana@example.com", "bo@example.com", HOSTILE}
    assert set(rows[0]) == {"owner", "resources", "actions", "hours_off", "saved_usd", "unpriced", "jobs_stopped"}
    assert main(["report", "--output", "csv", "--by", "kind", "--kind", "endpoint"]) == 0
    (only,) = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert only["kind"] == "endpoint" and only["resources"] == "1" and 44 < float(only["saved_usd"]) < 46  # $1.5/h for 30 h


@pytest.mark.parametrize("width", [120, 80])
def test_report_table_fits_the_width_with_a_hostile_long_owner(logged, capsys, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(["report", "--by", "owner"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= width for line in lines), max(map(len, lines))
    assert any("…" in line and line.startswith("<script>") for line in lines)
    assert any(line.startswith("total: about $") for line in lines)


def test_report_html_has_the_chart_the_groups_and_escapes_what_users_wrote(logged, capsys, tmp_path, monkeypatch):
    # Given an action log with a hostile owner
    monkeypatch.chdir(tmp_path)
    # When the HTML report is written to its default file
    assert main(["report", "--output", "html", "--by", "owner"]) == 0
    said = capsys.readouterr().out
    page = (tmp_path / "mlreaper-report.html").read_text()
    # Then it says where, holds a chart, every group and the total, and no live markup from a tag
    assert "mlreaper-report.html" in said and "saved" in said
    assert page.count("<svg") == 1 and "<script" not in page.lower()
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in page
    assert "ana@example.com" in page and "bo@example.com" in page and "total" in page
    assert "at most what its ceiling" in page and "would have been acted on" in page
    # And the chart is per kind, and the page fetches nothing (no script, no link, no source)
    assert "notebook" in page and "endpoint" in page and "training-job" in page
    assert "src=" not in page and 'href="http' not in page and "<link" not in page and "@import" not in page


def test_report_html_of_an_empty_log_still_draws_its_chart(aws, table, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", table)
    out = tmp_path / "empty.html"
    assert main(["report", "--output", "html", "--out", str(out)]) == 0
    page = out.read_text()
    assert "<svg" in page and "Nothing was reclaimed" in page


# -- --query (JMESPath, as the AWS CLI's) ---------------------------------------------------------


def test_query_selects_from_each_json_object_of_the_log(logged, capsys):
    # When `reaper log` prints JSON with a JMESPath expression
    assert main(["log", "--output", "json", "--query", "{id: id, kind: kind}", "--kind", "endpoint"]) == 0
    # Then each line is what the expression selects from one entry
    assert [json.loads(x) for x in capsys.readouterr().out.splitlines()] == [{"id": "ep-1", "kind": "endpoint"}]
    assert main(["log", "--json", "--query", "id"]) == 0
    assert [json.loads(x) for x in capsys.readouterr().out.splitlines()] == ["nb-1", "ep-1", "nb-2", "job-1", "nb-3", "nb-dry"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["log", "--output", "json", "--query", "id[["], "not a JMESPath expression"),
        (["log", "--query", "id"], "--query selects from JSON"),
    ],
)
def test_a_query_that_cannot_apply_is_exit_2_in_one_line(logged, capsys, argv, said):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1 and said in captured.err
