"""`reaper --debug`: botocore's and the reaper's debug lines on stderr, with secrets redacted.

botocore at DEBUG logs each request's headers and body; the reaper logs the webhook it posts to. A
debug log is pasted into tickets, so what would let someone post or sign as the user never reaches it:
Slack webhook paths and tokens, the Authorization header, session tokens, and signatures.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Callable

REDACTED = "***"
SECRET_PATTERNS = (
    re.compile(r"(hooks\.slack(?:-gov)?\.com/)[^\s'\"]+"),  # a webhook URL is itself the credential
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]+"),  # Slack bot, user and app tokens
    # a bytes repr's `b` only where a quote follows: a hex signature may itself begin with b
    re.compile(
        r"((?:Authorization|X-Amz-Security-Token|X-Amz-Signature|Signature)['\"]?\s*[:=]\s*(?:b(?=['\"]))?['\"]?)[^'\",&\s}]+", re.I
    ),
    re.compile(r"((?:aws_secret_access_key|aws_session_token|SecretAccessKey|SessionToken)['\"]?\s*[:=]\s*['\"]?)[^'\",\s}]+", re.I),
)
FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    for pattern in SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


class Redacting(logging.Formatter):
    """Formats as usual, then takes the secrets out of the whole line (message, arguments and traceback)."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        super().__init__(FORMAT)
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record), self.secrets)


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is at each line (a test that captures it sees the lines)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


LOGGERS = ("botocore", "boto3", "urllib3", "reaper")


def debug_logging() -> Callable[[], None]:
    """Turn on DEBUG for botocore, boto3, urllib3 and the reaper, one redacting handler on stderr;
    returns what turns it off again (the CLI runs in-process in the demo and the tests)."""
    secrets = tuple(os.environ.get(v, "") for v in ("REAPER_SLACK_WEBHOOK_URL", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"))
    handler = _CurrentStderr(sys.stderr)
    handler.setFormatter(Redacting(secrets))
    handler.setLevel(logging.DEBUG)
    levels = {name: logging.getLogger(name).level for name in LOGGERS}
    for name in LOGGERS:
        log = logging.getLogger(name)
        log.setLevel(logging.DEBUG)
        log.addHandler(handler)

    def undo() -> None:
        for name, level in levels.items():
            logging.getLogger(name).removeHandler(handler)
            logging.getLogger(name).setLevel(level)

    return undo
