"""`make demo` end to end: it runs, its log is in the order things happened, it ends with the report."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reaper.cli import main as cli
from reaper_devkit import demo
from reaper_devkit.seed import aligned

ROOT = Path(__file__).resolve().parents[2]

PLAN_ROW = re.compile(r"^(\S+)\s+(\S+)\s+\S+\s+(act|warn|keep|exempt|error)\s", re.M)
EXPECT = re.compile(r"^  (\S+(?: \S+)?)\s+expect: (.*)$", re.M)
EXPECTED_VERDICT = {"stopped": "act", "deleted": "act", "kept": "keep", "exempt": "exempt", "error": "error"}
LOG_LINE = re.compile(r"^(\S+Z)\s+(act|warn|error|notice|keep|exempt)\s+(.*?)\s+(\S+) (\S+) \((\S+)\) — ")


@pytest.mark.slow
def test_the_demo_log_puts_each_warning_before_the_action_it_announced():
    # As a user runs it (`make demo`): its own interpreter, so no other test's moto state or patches reach it
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REAPER_", "AWS_"))}
    paths = [str(ROOT / "layers" / "reaper"), str(ROOT / "devkit"), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env["COLUMNS"] = "200"  # a wide terminal: one log entry a line, whatever the machine running the test has
    done = subprocess.run([sys.executable, "-m", "reaper", "demo"], env=env, capture_output=True, text=True, timeout=1800, cwd=ROOT)
    ended = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stdout + done.stderr
    # No raw JSON log line from the functions: what they log is said in the demo's own lines
    assert '{"level"' not in done.stdout + done.stderr
    out = done.stdout
    log = out.split("7. reaper log", 1)[1].split("8. reaper report", 1)[0]
    # Every entry in the action log is stamped within the demo, none after it ended
    stamps = [m.group(1) for m in (LOG_LINE.match(line.strip()) for line in log.splitlines()) if m]
    assert stamps and max(stamps) <= ended, f"{max(stamps)} is after the demo ended at {ended}"
    first_warn: dict[str, str] = {}
    acted = 0
    for line in log.splitlines():
        m = LOG_LINE.match(line.strip())
        if not m:
            continue
        at, verdict, action, kind, rid = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)
        if verdict == "warn":
            first_warn.setdefault(f"{kind} {rid}", at)
        if verdict == "act" and not action.startswith("would"):
            acted += 1
            warned = first_warn.get(f"{kind} {rid}")
            if kind == "fsx" or warned:
                # the message carries the resource's log lines and step 2's table: what a flake needs to be read
                seen = "\n".join(x for x in log.splitlines() if rid in x)
                step2 = out.split("2. Enforce", 1)[1].split("3. Enforce", 1)[0]
                assert warned is not None and warned <= at, f"{kind} {rid} acted at {at} before its warning:\n{seen}\n{step2}"
    assert acted > 0
    # Each scene's "expect:" says what the plan then shows: stopped/deleted = act, kept = keep, …
    plan_verdicts = {
        m.group(2).rstrip("…"): m.group(3) for m in PLAN_ROW.finditer(out.split("1. reaper plan", 1)[1].split("2. Enforce", 1)[0])
    }
    checked = 0
    for rid, says in EXPECT.findall(out.split("2. Enforce", 1)[0]):
        verdict = EXPECTED_VERDICT.get(re.split(r"[:,]", says, maxsplit=1)[0])
        shown = [v for cut, v in plan_verdicts.items() if rid.split()[0].startswith(cut)]
        if verdict and shown:
            checked += 1
            assert shown[0] == verdict, f"{rid}: the demo says {says!r}, the plan shows {shown[0]}"
    assert checked >= 30, checked
    report = out.split("8. reaper report", 1)[1]
    assert "8. reaper report" in out and "total: about $" in report
    # The full table once (the plan); the sweeps show only what they warned, acted on or failed
    assert len(re.findall(r"^\d+ resources: ", out, re.M)) == 3 and out.count("(showing ") == 2
    plan = out.split("1. reaper plan", 1)[1].split("2. Enforce", 1)[0]
    assert " keep " in plan and " keep " not in out.split("2. Enforce", 1)[1].split("Slack:", 1)[0]
    # An honest savings line: what is still off costs so much an hour, not a month of a job's price
    assert re.search(r"off now: \d+ resource\(s\) that cost \$[\d,.]+/h together", report)
    # And the page with its chart, when matplotlib is there
    import importlib.util

    if importlib.util.find_spec("matplotlib") is not None:
        page = re.search(r"wrote (\S+\.html)", report)
        assert page is not None
        with open(page.group(1), encoding="utf-8") as f:
            assert "<svg" in f.read()


@pytest.mark.slow
@pytest.mark.parametrize("before", [timedelta(seconds=1), timedelta(minutes=15)], ids=["a-boundary-between", "15-minutes-between"])
def test_each_scene_shows_what_it_said_when_the_plan_runs_in_a_later_5_minute_period(aws, capsys, before):
    # Given every scene seeded just before a 5-minute boundary (or 15 minutes before it: a loaded machine)
    # and the plan run after it, at the real clock: the flake once seen, nb-idle-gpu kept where the scene said stopped
    seeded_at = aligned(datetime.now(UTC)) - before
    said: dict[str, str] = {}
    scenes = demo.load_scenes()
    for scene in scenes:
        said.update({rid.split()[0]: says for rid, says in scene.seed(aws, seeded_at).items()})
    capsys.readouterr()
    # When the plan runs, as the demo's step 1 does
    cli.main(["plan", *[a for scene in scenes for a in ("--kind", scene.KIND)], "--output", "json"])
    shown = {row["id"]: row["verdict"] for row in map(json.loads, capsys.readouterr().out.splitlines())}
    # Then every scene's "expect:" is what the plan shows
    expected = {rid: EXPECTED_VERDICT.get(re.split(r"[:,]", says, maxsplit=1)[0]) for rid, says in said.items()}
    wrong = {rid: (said[rid], shown.get(rid)) for rid, verdict in expected.items() if verdict and shown.get(rid) != verdict}
    assert sum(1 for v in expected.values() if v) >= 30 and not wrong, wrong
