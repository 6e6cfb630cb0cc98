"""What each command's `--help` says beyond its flags: a description and two examples to copy.

scripts/gen_docs.py puts the same text in docs/reference/cli.md, so the page and `--help` cannot differ.
"""

from __future__ import annotations

# {command: (description, (example, example))}; an example is a command line, then what it does
COMMAND_HELP: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "sweep": (
        "Discover every resource of the kinds, decide a verdict for each, act on it in enforce mode "
        "(after the grace period), record it in the action log and post it to Slack when those are "
        "configured. The same code path as the deployed functions.",
        (
            ("reaper sweep --kind notebook --region eu-west-1", "a dry-run sweep of one kind (the default mode)"),
            ("reaper sweep --mode enforce --grace-minutes 60 --json", "act, one JSON object per resource"),
        ),
    ),
    "plan": (
        "A dry-run sweep shown as a table: what would be stopped, kept or reported, and why. "
        "Reads only: it records and posts nothing, and changes nothing in AWS (docs/try-read-only.md).",
        (
            ("reaper plan", "every kind, in AWS_REGION"),
            ("reaper plan --kind endpoint --region us-east-1 --region eu-west-1 --verdict act", "only what would be acted on"),
        ),
    ),
    "coverage": (
        "A dry-run sweep that says what the reaper can judge, what it cannot (and what that costs an hour), "
        "and the fix for each. Reads only.",
        (
            ("reaper coverage", "every kind, in AWS_REGION"),
            ("reaper coverage --kind studio-app --output json", "one JSON object per row"),
        ),
    ),
    "log": (
        "The action log: each verdict, action and notice recorded by a sweep, newest last, with its whole reason.",
        (
            ("reaper log --since 1d --verdict act", "what was acted on in the last day"),
            ("reaper log --output json --query owner", "each entry's owner, one per line"),
        ),
    ),
    "report": (
        "What was reclaimed and what it saved, from the action log, grouped by owner, kind or project; "
        "with --bill, what AWS billed beside it.",
        (
            ("reaper report --since 30d --by project", "a month's savings per ml:project"),
            ("reaper report --output html --out report.html", "the same as a page with a chart"),
        ),
    ),
    "restore": (
        "Bring back a reaped endpoint (by name) or FSx file system (by id) from its restore record in the action log.",
        (
            ("reaper restore my-endpoint", "recreate the endpoint from its kept config"),
            ("reaper restore fs-0123456789abcdef0 --kind fsx", "the file system, from its confirmed backup"),
        ),
    ),
    "init": (
        "Create the action-log DynamoDB table, to run sweep, log and restore from the CLI without the stack.",
        (
            ("reaper init --table mlreaper-log", "create it in AWS_REGION"),
            ("reaper init --table mlreaper-log --region eu-west-1", "create it in another region"),
        ),
    ),
    "demo": (
        "The whole loop on a local, seeded account: a moto server with notebooks, endpoints and jobs, "
        "then plan, sweep, log and restore against it. Needs moto (the demo extra).",
        (
            ("reaper demo", "run it and stop the server at the end"),
            ("reaper demo --keep", "leave the server running and print the lines that point the CLI at it"),
        ),
    ),
    "iam": (
        "Print the IAM policy (JSON) a command needs, derived from the AWS calls the code makes.",
        (
            ("reaper iam --read-only", "the read-only policy that `reaper plan` and `reaper coverage` need"),
            ("reaper iam --read-only --kind notebook > policy.json", "the same for one kind, into a file"),
        ),
    ),
    "org": (
        "The organisation's central account: per-account and per-OU settings (docs/deploy-organisation.md).",
        (
            ("reaper org set --account 123456789012 --mode enforce --reason 'pilot'", "enforce in one account"),
            ("reaper org set --ou ou-ab12-cd34ef56 --clear --reason 'back to the default'", "clear an OU's setting"),
        ),
    ),
    "org set": (
        "Set (or --clear) an account's or an OU's mode and kind modes, without a redeploy.",
        (
            ("reaper org set --account 123456789012 --mode enforce --reason 'pilot'", "enforce in one account"),
            ("reaper org set --ou r-ab12 --kind-mode notebook=enforce --reason 'notebooks first'", "one kind, everywhere"),
        ),
    ),
}


def description(command: str) -> str:
    return COMMAND_HELP[command][0]


def examples(command: str) -> str:
    """The epilog of the command's --help."""
    lines = ["examples:"]
    for line, what in COMMAND_HELP[command][1]:
        lines += [f"  {line}", f"      {what}"]
    return "\n".join(lines)
