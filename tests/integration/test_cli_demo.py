"""The demo under load: it waits for the state a step needs instead of assuming the step before got there,
and whatever goes wrong is one line and exit 1, never a traceback."""

from __future__ import annotations

from datetime import UTC, datetime

from reaper.core.errors import RestoreError
from reaper.core.settings import Settings
from reaper.wiring import build_runtime
from reaper_devkit import demo
from reaper_devkit.scenes import fsx as fsx_scene


def test_the_fsx_scene_restores_only_a_file_system_it_saw_deleted(aws, table, monkeypatch):
    # Given the FSx scene seeded, and the enforce sweep before it deferred the kind (a loaded machine):
    # no backup was started, so the first sweep of the scene starts it instead of deleting
    monkeypatch.setenv("REAPER_TABLE", table)
    now = datetime.now(UTC)
    fsx_scene.seed(aws, now)
    fs_id = fsx_scene._seeded["llm-pretrain-cache"]
    rt = build_runtime(Settings.from_env().replace(mode="enforce", grace_minutes=0, kind_grace_minutes={}), session=aws)
    said: list[str] = []
    # When the scene's next step runs
    fsx_scene.after_sweep(rt, aws, now, said.append)
    # Then it swept until the file system was deleted, and only then restored it (no RestoreError)
    text = "\n".join(said)
    assert fsx_scene.deleted(aws.client("fsx"), fs_id)
    assert f"$ reaper restore {fs_id}" in text and "reaper: " not in text, text
    restored = [fs for fs in aws.client("fsx").describe_file_systems()["FileSystems"] if fs["FileSystemId"] != fs_id]
    assert any(t["Value"] == "llm-pretrain-cache" for fs in restored for t in fs.get("Tags", []) if t["Key"] == "Name"), text


def test_a_scene_that_never_gets_its_state_says_so_and_restores_nothing(aws, table, monkeypatch):
    # Given a sweep that never deletes (the kind refuses every change in this run)
    monkeypatch.setenv("REAPER_TABLE", table)
    now = datetime.now(UTC)
    fsx_scene.seed(aws, now)
    fs_id = fsx_scene._seeded["llm-pretrain-cache"]
    rt = build_runtime(Settings.from_env().replace(mode="dry-run"), session=aws)
    said: list[str] = []
    # When the scene's next step runs
    fsx_scene.after_sweep(rt, aws, now, said.append)
    # Then it waited a bounded number of sweeps, said why, and did not try the restore
    text = "\n".join(said)
    assert f"{fs_id} is not deleted after {fsx_scene.PHASE_2_ROUNDS} sweeps" in text
    assert "$ reaper restore" not in text


def test_a_failing_demo_is_one_line_and_exit_1_never_a_traceback(capsys, monkeypatch):
    # Given a step that raises (the crash once seen: a restore of a file system not yet deleted)
    def crash(keep: bool) -> int:
        raise RestoreError("fs-0123 has no backup to restore from\nsecond line")

    monkeypatch.setattr(demo, "_run_demo", crash)
    # When the demo runs
    status = demo.run_demo()
    # Then it says what stopped it, in one line with the demo's clock, and exits 1
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(err) == 1 and "Traceback" not in err[0]
    assert err[0].startswith("demo: stopped at [00:") and "RestoreError: fs-0123 has no backup" in err[0]


def test_ctrl_c_in_the_demo_is_one_line_and_130(capsys, monkeypatch):
    def interrupted(keep: bool) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(demo, "_run_demo", interrupted)
    assert demo.run_demo() == 130
    assert capsys.readouterr().err.strip().startswith("demo: interrupted at [00:")


def test_a_slack_excerpt_ends_at_a_whole_word_with_an_ellipsis(capsys):
    # Given a Slack message longer than the demo shows (one the enforce sweep posts)
    text = (
        "Will scale-to-zero endpoint `ep-batch-dev-async` when the grace period ends, unless that changes: 0 requests"
        " processed in at least 3 h 03 m, nothing queued; asynchronous: autoscaling minimum to 0, wake-on-backlog policy added"
    )
    # When the demo shows it as a bullet
    demo.show_slack([{"text": text}, {"text": "short and whole"}], 0)
    long_line, short_line = capsys.readouterr().out.splitlines()
    shown = long_line.removeprefix("  • ")
    # Then it is cut at a word, never mid-word, and says it was cut; a short one is whole
    assert shown.endswith("…") and len(shown) <= demo.EXCERPT
    kept = shown.removesuffix("…")
    assert text.startswith(kept) and text[len(kept)] in " ,;:", repr(kept[-20:])
    assert short_line == "  • short and whole"


def test_the_click_step_says_the_handlers_warnings_as_plain_lines_on_the_demo_clock(aws, table, monkeypatch, capsys):
    # Given the demo's Snooze-click step through the real Slack interactions handler (it logs a replay and a forgery)
    from reaper.core.observability import logger

    monkeypatch.setenv("REAPER_TABLE", table)
    handlers = list(logger._logger.handlers)
    # When it runs with the demo's logs routed
    with demo.routed_logs():
        demo.demo_click(aws, datetime.now(UTC))
    out = capsys.readouterr()
    # Then each warning is one plain line with the demo's clock, never the functions' JSON
    said = [line for line in out.out.splitlines() if "log warning: " in line]
    assert any("Slack request replayed" in line for line in said) and any("Slack request refused" in line for line in said), out.out
    assert all(line.lstrip().startswith("[00:") or "[00:" in line.split("log warning")[0] for line in said)
    assert '{"level"' not in out.out + out.err
    # and afterwards the Logger writes as it did before (Lambda's JSON)
    assert logger._logger.handlers == handlers
