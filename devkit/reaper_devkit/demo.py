"""`reaper demo`: the whole loop on a local, seeded account. No AWS account needed.

moto's server runs in this process (with the moto extensions), a local receiver stands in for
Slack, and every step runs the real CLI — the same code path as the deployed functions.

A demo never prints a traceback: whatever goes wrong is said in one line and the demo exits 1.
Each step's header and each line a scene says carry the demo's clock (time since it started), so
a slow step on a loaded machine is seen where it happened.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import pkgutil
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from reaper.cli import main as cli
from reaper.core.settings import Settings
from reaper.slack import post as slack
from reaper.wiring import build_runtime
from reaper_devkit import scenes
from reaper_devkit.local_aws import FAKE_ENV, local_account, session
from reaper_devkit.slack_receiver import SlackReceiver

TABLE = "mlreaper-demo-log"
EXCERPT = 200  # characters of a Slack message's first line shown per bullet
# the attributes every LogRecord has: what is left on a record is what the caller passed as `extra`
_RECORD_FIELDS = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}
BOLD, DIM, RESET = ("\033[1m", "\033[2m", "\033[0m") if sys.stdout.isatty() else ("", "", "")
_started = time.monotonic()


def clock() -> str:
    """The demo's clock: minutes and seconds since it started."""
    minutes, seconds = divmod(time.monotonic() - _started, 60)
    return f"[{int(minutes):02d}:{seconds:04.1f}]"


def step(title: str) -> None:
    print(f"\n{BOLD}━━ {title} {'━' * max(3, 70 - len(title))} {clock()}{RESET}", flush=True)


def say(line: str) -> None:
    print(f"  {DIM}{clock()}{RESET} {line}", flush=True)


def run(args: list[str]) -> int:
    print(f"{DIM}$ reaper {' '.join(args)}{RESET}", flush=True)
    code = cli.main(args)
    print(f"{DIM}(exit {code}){RESET}", flush=True)
    return code


def load_scenes() -> list[ModuleType]:
    order = ["notebook", "endpoint", "training_job", "fsx", "ec2"]
    names = [m.name for m in pkgutil.iter_modules(scenes.__path__)]
    names.sort(key=lambda n: (order.index(n) if n in order else len(order), n))
    return [importlib.import_module(f"reaper_devkit.scenes.{n}") for n in names]


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """At most `limit` characters of `text`, cut at the last whole word and marked with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if not text[limit - 1].isspace() and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:—-") + "…"


def show_slack(messages: list[dict[str, Any]], since: int) -> None:
    new = messages[since:]
    if not new:
        print("(no Slack messages)")
    for m in new:
        text = m.get("text", "").split("\n")[0]
        print(f"  • {excerpt(text)}")


class _DemoLogLine(logging.Handler):
    """A function's log record as one plain line on the demo's clock, never the JSON Lambda writes."""

    def emit(self, record: logging.LogRecord) -> None:
        extra = {k: v for k, v in record.__dict__.items() if k not in _RECORD_FIELDS and not k.startswith("_")}
        said = ", ".join(f"{k}={v}" for k, v in extra.items())
        say(f"{DIM}log {record.levelname.lower()}: {record.getMessage()}{f' ({said})' if said else ''}{RESET}")


@contextmanager
def routed_logs() -> Iterator[None]:
    """The functions' powertools Logger prints through the demo (say) for the block, then as before."""
    from reaper.core.observability import logger

    std = logger._logger  # the logging.Logger the powertools Logger writes through
    kept = (list(std.handlers), std.level, std.propagate)
    std.handlers, std.propagate = [_DemoLogLine()], False
    std.setLevel(logging.WARNING)  # info lines are Lambda's record; warnings tell the story here
    try:
        yield
    finally:
        std.handlers, std.propagate = kept[0], kept[2]
        std.setLevel(kept[1])


def run_demo(keep: bool = False) -> int:
    """The demo, with every failure said in one line (exit 1) and Ctrl-C in one line (exit 130)."""
    global _started
    _started = time.monotonic()
    try:
        with routed_logs():
            return _run_demo(keep)
    except KeyboardInterrupt:
        print(f"\ndemo: interrupted at {clock()}", file=sys.stderr, flush=True)
        return 130
    except Exception as exc:  # a demo never prints a traceback: one line says what and where
        said = (str(exc).strip().splitlines() or [""])[0]
        print(f"\ndemo: stopped at {clock()}: {type(exc).__name__}: {said}", file=sys.stderr, flush=True)
        return 1


def _run_demo(keep: bool) -> int:
    started = time.monotonic()
    now = datetime.now(UTC)
    with local_account() as url, SlackReceiver() as slack_hook:
        os.environ.update(REAPER_TABLE=TABLE, REAPER_SLACK_WEBHOOK_URL=slack_hook.url, REAPER_MODE="dry-run")
        for var in ("REAPER_QUEUE_URL", "REAPER_SLACK_SECRET_ARN", "REAPER_KIND_MODES"):
            os.environ.pop(var, None)
        step(f"A local AWS account (moto server at {url}) and a local Slack webhook")
        run(["init", "--table", TABLE])
        loaded = load_scenes()
        aws = session()
        for scene in loaded:
            expected: dict[str, str] = scene.seed(aws, now)
            print(f"\n{BOLD}{scene.KIND}{RESET}: seeded {len(expected)}")
            for rid, says in expected.items():
                print(f"  {rid:28} expect: {says}")
        kinds = [scene.KIND for scene in loaded]
        kind_args = [a for k in kinds for a in ("--kind", k)]

        step("1. reaper plan — what would happen (records and posts nothing)")
        run(["plan", *kind_args])

        # the full table once (the plan); the sweeps show only what they changed or could not
        step("2. Enforce, first sweep — reapable resources are warned, nothing is stopped yet (grace 60 min)")
        mark = len(slack_hook.messages)
        run(["sweep", *kind_args, "--mode", "enforce", "--grace-minutes", "60", "--verdict", "warn", "--verdict", "error"])
        print("\nSlack:")
        show_slack(slack_hook.messages, mark)

        step("3. Enforce after the grace period — the reaper acts")
        mark = len(slack_hook.messages)
        code = run(["sweep", *kind_args, "--mode", "enforce", "--grace-minutes", "0", "--verdict", "act", "--verdict", "error"])
        print("\nSlack:")
        show_slack(slack_hook.messages, mark)

        rt = build_runtime(Settings.from_env().replace(mode="enforce", grace_minutes=0, kind_grace_minutes={}))
        for scene in loaded:
            after: Callable[..., None] | None = getattr(scene, "after_sweep", None)
            if after is not None:
                step(f"4. {scene.KIND}: what comes next")
                mark = len(slack_hook.messages)
                # the real time, not the seeding time: what happens next is logged after the sweeps above
                after(rt, aws, datetime.now(UTC), say)
                if len(slack_hook.messages) > mark:
                    print("\nSlack:")
                    show_slack(slack_hook.messages, mark)

        step("5. One Slack message in full (Block Kit)")
        acted = [m for m in slack_hook.messages if m.get("text", "").startswith("Stopped notebook")]
        sample = (acted or slack_hook.messages or [{}])[0]
        for block in sample.get("blocks", []):
            text = block.get("text", {}).get("text") if "text" in block else None
            if text:
                print("  " + text.replace("\n", "\n  "))
            for field in block.get("fields", []) + block.get("elements", []):
                print("  " + field.get("text", ""))

        step("6. Bot mode: a Snooze click, end to end (local Slack Web API stand-in)")
        demo_click(aws, now)

        step("7. reaper log — the action log")
        run(["log", "--since", "1h"])

        step("8. reaper report — what was reclaimed and what it saved")
        run(["report", "--since", "1h", "--by", "kind"])
        html_report()

        step("9. reaper coverage — what it cannot judge, what that costs an hour, and the fix")
        run(["coverage", *kind_args])

        print(f"\n{BOLD}Demo finished in {time.monotonic() - started:.1f} s{RESET}: {len(slack_hook.messages)} Slack messages posted.")
        if keep:
            print(f"moto server still at {url}; in another terminal, point the CLI at it with:\n")
            print("\n".join(pointing_lines(url)) + "\n")
            print("then e.g. `reaper plan` or `reaper log --since 1h`; press Ctrl-C here to end")
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass
    return 0 if code in (0, 1) else code


def pointing_lines(url: str) -> list[str]:
    """The shell lines that point the CLI at the kept local account: its endpoint, its fake keys, its region and
    the demo's action log; a profile would win over the keys (the credential chain), so it is unset."""
    env = {"AWS_ENDPOINT_URL": url, **{k: FAKE_ENV[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")}}
    env["REAPER_TABLE"] = TABLE
    return ["unset AWS_PROFILE AWS_SESSION_TOKEN", "export " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())]


def html_report() -> None:
    """The same report as a page with its chart, when the report extra (matplotlib) is installed."""
    if importlib.util.find_spec("matplotlib") is None:
        print(f"{DIM}(the HTML report with its chart needs matplotlib: pip install 'mlreaper[report]'){RESET}")
        return
    out = Path(tempfile.gettempdir()) / "mlreaper-demo-report.html"
    run(["report", "--since", "1h", "--by", "kind", "--output", "html", "--out", str(out)])
    print(f"open {out.as_uri()} in a browser: the groups above, their totals and a chart of the savings per day")


def demo_click(aws: Any, now: datetime) -> None:
    """A notebook's owner clicks Snooze; then the same request is replayed, and a forged one sent."""
    from reaper.slack.bot import BotConfig, SlackBot
    from reaper.slack.interactions import handle_request
    from reaper_devkit.seed import notebook
    from reaper_devkit.slack_api import SlackApi
    from reaper_devkit.slack_click import click_body, signed_request

    secret = "demo-signing-secret"
    sm = aws.client("sagemaker")
    arn = notebook(sm, "click-me", {"ml:owner": "ana@example.com", "ml:stage": "dev"})
    rt = build_runtime(Settings.from_env().replace(mode="enforce", slack_webhook_url=None))
    with SlackApi({"ana@example.com": "U0ANA0001"}) as api:
        bot = SlackBot.build(BotConfig(bot_token="xoxb-demo", admin_channel="C0ADMIN", signing_secret=secret, base_url=api.url))
        body = click_body("reaper:snooze", arn, "notebook", "U0ANA0001", api.response_url("snooze"))
        request = signed_request(body, now, secret)

        def click(label: str, event: dict[str, Any]) -> None:
            answer = handle_request(event, rt, bot, datetime.now(UTC), lambda target, ev: None)
            print(f"  {label:34} -> HTTP {answer['statusCode']} {answer['body']}".rstrip())

        click("ana clicks Snooze 24 h", request)
        click("the same request, replayed", request)
        forged = signed_request(body.replace("U0ANA0001", "U0EVE0001"), now, "a-guessed-secret")
        click("a forged click (wrong secret)", forged)
        for said in api.responses:
            print(f"  answered in the thread: {said['text']}")
    tags = {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=arn)["Tags"]}
    print(f"  tags on click-me now: reaper:snooze-until={tags.get('reaper:snooze-until')}")


__all__ = ["demo_click", "excerpt", "html_report", "routed_logs", "run_demo", "slack"]
