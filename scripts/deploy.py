"""`make deploy`: three questions (stack name, region, Slack), the rest from samconfig.toml, then SAM.

Everything else has a safe default: the stack deploys in dry-run (samconfig.toml's
parameter_overrides) and every other parameter keeps template.yaml's default
(docs/reference/parameters.md). It prints what it chose, then runs `sam build` and a
non-guided `sam deploy`. Standard library only: it runs with the SAM CLI's own Python.

    .venv-sam/bin/python scripts/deploy.py [--sam .venv-sam/bin/sam] [--dry-run]
"""

from __future__ import annotations

import argparse
import getpass
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# CloudFormation's stack name rule; AWS's region names; the template's SlackWebhookUrl AllowedPattern
STACK_NAME = re.compile(r"^[A-Za-z][-A-Za-z0-9]{0,127}$")
REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d$")
WEBHOOK = re.compile(r"^https://hooks\.slack\.com/\S+$")
ATTEMPTS = 3


def samconfig(path: Path) -> dict[str, dict[str, object]]:
    """The `default` environment's sections of samconfig.toml ({} when it is absent)."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    default: dict[str, dict[str, object]] = data.get("default", {})
    return {section: _parameters(values) for section, values in default.items()}


def _parameters(section: object) -> dict[str, object]:
    """A section's `parameters` table ({} when it has none)."""
    found = section.get("parameters", {}) if isinstance(section, dict) else {}
    return found if isinstance(found, dict) else {}


def ask(question: str, default: str, valid: re.Pattern[str], secret: bool = False) -> str:
    """One question, Enter keeps the default; a bad answer is asked again, at most ATTEMPTS times."""
    for _ in range(ATTEMPTS):
        prompt = f"? {question} [{default}]: "
        try:
            answer = (getpass.getpass(prompt) if secret and sys.stdin.isatty() else input(prompt)).strip()
        except EOFError:
            answer = ""
            print()
        answer = answer or default
        if valid.match(answer):
            return answer
        print(f"  {answer if not secret else 'that'} is not valid here", file=sys.stderr)
    raise SystemExit(f"deploy: no valid answer to {question!r}")


def overrides(configured: str, slack: str) -> list[str]:
    """samconfig.toml's parameter overrides, plus the Slack answer (`none` = no Slack)."""
    pairs = shlex.split(configured)
    pairs = [p for p in pairs if not p.startswith("SlackWebhookUrl=")]
    return [*pairs, f"SlackWebhookUrl={slack}"]


def shown(command: list[str]) -> str:
    """The command as printed: the webhook URL is a secret (the template keeps it NoEcho)."""
    return shlex.join(re.sub(r"^(SlackWebhookUrl=)(?!none$).+$", r"\1****", part) for part in command)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--sam", default=str(ROOT / ".venv-sam" / "bin" / "sam"), help="the SAM CLI to run")
    p.add_argument("--config", default=str(ROOT / "samconfig.toml"), help="where the other answers come from")
    p.add_argument("--build-dir", default=".aws-sam/build")
    p.add_argument("--dry-run", action="store_true", help="print the SAM commands instead of running them")
    args = p.parse_args(argv)
    config = samconfig(Path(args.config))
    stack_default = str(config.get("global", {}).get("stack_name", "mlreaper"))
    region_default = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    deploy = config.get("deploy", {})

    stack = ask("Stack name", stack_default, STACK_NAME)
    region = ask("AWS region", region_default, REGION)
    slack = ask(
        "Slack incoming-webhook URL (https://hooks.slack.com/..., or none)", "none", re.compile(rf"^none$|{WEBHOOK.pattern}"), secret=True
    )

    params = overrides(str(deploy.get("parameter_overrides", "")), slack)
    capabilities = str(deploy.get("capabilities", "CAPABILITY_IAM"))
    build = [args.sam, "build", "--parallel", "--build-dir", args.build_dir]
    template = str(Path(args.build_dir) / "template.yaml")
    deploy_cmd = [args.sam, "deploy", "--template-file", template, "--stack-name", stack, "--region", region]
    deploy_cmd += ["--capabilities", capabilities, "--resolve-s3", "--parameter-overrides", *params]
    if deploy.get("confirm_changeset") is not False:
        deploy_cmd.append("--confirm-changeset")
    print(f"\nDeploying stack {stack} in {region}, Slack {'off' if slack == 'none' else 'on (webhook)'}.")
    print(f"From {Path(args.config).name}: {' '.join(q for q in params if not q.startswith('SlackWebhookUrl='))}")
    print(f"  capabilities {capabilities}; every other parameter keeps its default (docs/reference/parameters.md)")
    print("  Switch to enforce later: rerun with Mode=enforce in samconfig.toml's parameter_overrides.\n")
    for command in (build, deploy_cmd):
        print(f"$ {shown(command)}", flush=True)
        if not args.dry_run:
            done = subprocess.run(command, cwd=ROOT, check=False)
            if done.returncode:
                return done.returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
