"""`make deploy`: three questions (stack name, region, Slack), the rest from samconfig.toml, then SAM.

First it asks STS who is calling (GetCallerIdentity): without credentials it says so in one line
and exits 3, before any question or build. Everything else has a safe default: the stack deploys
in dry-run (samconfig.toml's parameter_overrides) and every other parameter keeps template.yaml's
default (docs/reference/parameters.md). It saves the stack name and region to samconfig.toml's
`default` environment (`[default.deploy.parameters]`), so a later plain `sam deploy` targets the
same stack; the webhook URL is never written there. Then it runs `sam build` and a non-guided
`sam deploy`. Standard library plus boto3, both in the SAM CLI's own Python.

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
NO_CREDENTIALS = 3  # exit status: no AWS credentials (nothing asked, built or deployed)
SAVED_KEYS = ("stack_name", "region")


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


def caller(region: str) -> str | None:
    """The caller's ARN from STS GetCallerIdentity, or None when there are no usable credentials.

    GetCallerIdentity needs no IAM permission (docs/aws-assumptions.md, deploy section).
    """
    import boto3  # the SAM CLI's environment has it; imported here so --help needs nothing
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        arn: str = boto3.client("sts", region_name=region).get_caller_identity()["Arn"]
    except (BotoCoreError, ClientError):
        return None
    return arn


def save_answers(path: Path, stack: str, region: str) -> None:
    """Write stack_name and region into samconfig.toml's [default.deploy.parameters], keeping every other line.

    A command's own section overrides [default.global.parameters] (the SAM CLI configuration file's
    precedence), so a plain `sam deploy` afterwards deploys this stack in this region.
    """
    lines = path.read_text().splitlines() if path.exists() else ["version = 0.1"]
    header = "[default.deploy.parameters]"
    values = {"stack_name": stack, "region": region}
    if header not in (line.strip() for line in lines):
        lines += ["", header]
    start = next(i for i, line in enumerate(lines) if line.strip() == header) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    section = [line for line in lines[start:end] if line.split("=")[0].strip() not in SAVED_KEYS]
    while section and not section[-1].strip():
        section.pop()
    section = [f'{key} = "{value}"' for key, value in values.items()] + section
    blank = [""] if end < len(lines) else []
    path.write_text("\n".join([*lines[:start], *section, *blank, *lines[end:]]).rstrip() + "\n")


def overrides(configured: str, slack: str) -> list[str]:
    """samconfig.toml's parameter overrides, plus the Slack answer (`none` = no Slack)."""
    pairs = shlex.split(configured)
    pairs = [p for p in pairs if not p.startswith("SlackWebhookUrl=")]
    return [*pairs, f"SlackWebhookUrl={slack}"]


def shown(command: list[str]) -> str:
    """The command as printed: the webhook URL is a secret (the template keeps it NoEcho)."""
    return shlex.join(re.sub(r"^(SlackWebhookUrl=)(?!none$).+$", r"\1****", part) for part in command)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--sam", default=str(ROOT / ".venv-sam" / "bin" / "sam"), help="the SAM CLI to run")
    p.add_argument("--config", default=str(ROOT / "samconfig.toml"), help="where the other answers come from, and go")
    p.add_argument("--build-dir", default=".aws-sam/build")
    p.add_argument(
        "--dry-run", action="store_true", help="print the SAM commands instead of running them (no credentials needed, nothing saved)"
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    config = samconfig(Path(args.config))
    deploy = config.get("deploy", {})
    stack_default = str(deploy.get("stack_name") or config.get("global", {}).get("stack_name", "mlreaper"))
    env_region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    region_default = str(deploy.get("region") or env_region or "us-east-1")
    if not args.dry_run:
        who = caller(region_default)
        if who is None:
            print("deploy: no AWS credentials (sts get-caller-identity failed): set AWS_PROFILE or run `aws configure`; nothing was built")
            return NO_CREDENTIALS
        print(f"Deploying as {who}")

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
    print("  Switch to enforce later: rerun with Mode=enforce in samconfig.toml's parameter_overrides.")
    if not args.dry_run:
        save_answers(Path(args.config), stack, region)
        print(f"  Saved stack_name and region to {Path(args.config).name} [default.deploy.parameters]: a plain `sam deploy` reuses them.")
    print()
    for command in (build, deploy_cmd):
        print(f"$ {shown(command)}", flush=True)
        if not args.dry_run:
            done = subprocess.run(command, cwd=ROOT, check=False)
            if done.returncode:
                return done.returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
