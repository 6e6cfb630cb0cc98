"""The CLI's exit statuses, as the AWS CLI keeps them apart: what the user can fix in the command or
the configuration (2), in the credentials (3), or what AWS refused while the command ran (4).

`EXIT_STATUSES` is the one table of them: `reaper --help` points at it, and scripts/gen_docs.py writes it
into docs/reference/exit-codes.md, which README, docs/cli.md and docs/coverage.md link to.

botocore is never imported here: an exception of its kind can only exist once it was loaded.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

OK = 0
SOME_ERROR = 1  # some resource got verdict `error`; all are still printed
USAGE = 2  # bad usage or configuration (exit 2: docs/cli.md, Exit status)
CREDENTIALS = 3  # no AWS credentials, or credentials AWS refused (expired, unknown key)
AWS_ERROR = 4  # an AWS service error that stopped the command
INTERRUPTED = 130  # Ctrl-C: the shell's 128 + SIGINT


class ExitStatus(NamedTuple):
    status: int
    meaning: str
    examples: str


EXIT_STATUSES = (
    ExitStatus(OK, "done: every resource got a verdict other than `error`", "`reaper plan` with nothing failing"),
    ExitStatus(
        SOME_ERROR,
        "done, but some resource got verdict `error` (all are still printed), or the output could not be written",
        "an action AWS refused on one endpoint; a full disk under `> plan.txt`",
    ),
    ExitStatus(
        USAGE,
        "bad usage or configuration, said in one line",
        "a bad flag or value; an unknown profile or region; `AWS_ENDPOINT_URL` that is not a URL; "
        "an action-log table that does not exist; a bad `--query`",
    ),
    ExitStatus(
        CREDENTIALS,
        "AWS credentials missing, not loadable, or refused by AWS, said in one line",
        "no credentials; an expired SSO token; `ExpiredToken`, `InvalidClientTokenId`, `SignatureDoesNotMatch`",
    ),
    ExitStatus(
        AWS_ERROR,
        "an AWS service error stopped the command, said in one line",
        "access denied (`AccessDenied`, `UnauthorizedOperation`); throttling past botocore's retries; an endpoint that cannot be reached",
    ),
    ExitStatus(INTERRUPTED, "interrupted (Ctrl-C); each change made before it is already in the action log", "Ctrl-C"),
)

# The error codes AWS's "Common Errors" pages give for credentials that are expired, unknown or
# malformed (docs/aws-assumptions.md): a new token or key is the fix, not a change to the command.
CREDENTIAL_CODES = frozenset(
    {
        "ExpiredToken",
        "ExpiredTokenException",
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "MissingAuthenticationToken",
        "IncompleteSignature",
        "SignatureDoesNotMatch",
        "InvalidSignatureException",
        "AuthFailure",
    }
)
# Access denied, as the services say it (docs/aws-assumptions.md, "The CLI explains itself"): a grant is the fix
DENIED_CODES = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedAccess", "AuthorizationError"})
# botocore's standard retry mode treats these as throttling (botocore/retries/standard.py, _THROTTLED_ERROR_CODES)
THROTTLED_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    }
)
NO_CREDENTIALS = "no AWS credentials found (standard chain: AWS_PROFILE, environment, instance role)"
INVALID_ENDPOINT = "Invalid endpoint: "  # botocore's ValueError when a configured endpoint is not a URL


def one_line(text: object) -> str:
    return " ".join(str(text).split())


def exit_status(exc: BaseException) -> tuple[int | None, str]:
    """The status and the one line for an exception that ends a command; (None, "") for a bug."""
    from reaper.core.errors import ConfigError, CredentialsError, ReaperError, RestoreError, UsageError

    if isinstance(exc, CredentialsError):
        return CREDENTIALS, one_line(exc)
    if isinstance(exc, ConfigError | UsageError | RestoreError):
        return USAGE, one_line(exc)
    if isinstance(exc, ReaperError):
        return SOME_ERROR, one_line(exc)
    if isinstance(exc, ValueError) and str(exc).startswith(INVALID_ENDPOINT):  # an endpoint in ~/.aws/config
        url = str(exc)[len(INVALID_ENDPOINT) :]
        return USAGE, f"the AWS endpoint {url!r} is not a URL: give its scheme and host, e.g. http://localhost:4566"
    return _botocore_status(exc)


def _botocore_status(exc: BaseException) -> tuple[int | None, str]:
    botocore = sys.modules.get("botocore.exceptions")
    if botocore is None:
        return None, ""
    if isinstance(exc, botocore.NoCredentialsError):
        return CREDENTIALS, NO_CREDENTIALS
    if isinstance(exc, botocore.TokenRetrievalError | botocore.SSOError):
        return CREDENTIALS, one_line(f"AWS credentials could not be loaded: {exc}")
    if isinstance(exc, botocore.ClientError):
        return _client_error(exc)
    if isinstance(exc, botocore.EndpointConnectionError | botocore.ConnectTimeoutError):
        url = exc.kwargs.get("endpoint_url", "?")
        return AWS_ERROR, f"cannot reach AWS at {url}: check AWS_ENDPOINT_URL (unset it for AWS itself), the network and any proxy"
    if isinstance(exc, botocore.BotoCoreError):
        return AWS_ERROR, one_line(f"AWS call failed: {exc}")
    return None, ""


def _client_error(exc: Any) -> tuple[int, str]:
    error = exc.response.get("Error", {})
    code = str(error.get("Code", ""))
    said = one_line(error.get("Message", "")) or "no message"
    operation = getattr(exc, "operation_name", "?")
    if code in CREDENTIAL_CODES:
        return CREDENTIALS, f"AWS refused the credentials ({code}): renew them (aws sso login, or new keys) and run again"
    if code in DENIED_CODES:
        return AWS_ERROR, (
            f"AWS denied {operation} ({code}): {said}. `reaper iam --read-only` prints the policy plan and coverage need "
            "(docs/try-read-only.md)"
        )
    if code in THROTTLED_CODES:
        return AWS_ERROR, f"AWS throttled {operation} ({code}) past the retries: run again in a minute, or with fewer --kind/--region"
    return AWS_ERROR, f"AWS refused {operation} ({code}): {said}"
