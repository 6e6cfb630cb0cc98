"""The CLI's exit statuses, as the AWS CLI keeps them apart: what the user can fix in the command or
the configuration (2), in the credentials (3), or what AWS refused while the command ran (4).

botocore is never imported here: an exception of its kind can only exist once it was loaded.
"""

from __future__ import annotations

import sys

OK = 0
SOME_ERROR = 1  # some resource got verdict `error`; all are still printed
USAGE = 2  # bad usage or configuration (exit 2: docs/cli.md, Exit status)
CREDENTIALS = 3  # no AWS credentials, or credentials AWS refused (expired, unknown key)
AWS_ERROR = 4  # an AWS service error that stopped the command
INTERRUPTED = 130  # Ctrl-C: the shell's 128 + SIGINT

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
NO_CREDENTIALS = "no AWS credentials found (standard chain: AWS_PROFILE, environment, instance role)"


def exit_status(exc: BaseException) -> tuple[int | None, str]:
    """The status and the one line for an exception that ends a command; (None, "") for a bug."""
    from reaper.core.errors import ConfigError, CredentialsError, ReaperError, RestoreError, UsageError

    if isinstance(exc, CredentialsError):
        return CREDENTIALS, str(exc)
    if isinstance(exc, ConfigError | UsageError | RestoreError):
        return USAGE, str(exc)
    if isinstance(exc, ReaperError):
        return SOME_ERROR, str(exc)
    return _botocore_status(exc)


def _botocore_status(exc: BaseException) -> tuple[int | None, str]:
    botocore = sys.modules.get("botocore.exceptions")
    if botocore is None:
        return None, ""
    if isinstance(exc, botocore.NoCredentialsError):
        return CREDENTIALS, NO_CREDENTIALS
    if isinstance(exc, botocore.TokenRetrievalError | botocore.SSOError):
        return CREDENTIALS, f"AWS credentials could not be loaded: {exc}"
    if isinstance(exc, botocore.ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in CREDENTIAL_CODES:
            return CREDENTIALS, f"AWS refused the credentials ({code}): renew them (aws sso login, or new keys) and run again"
        return AWS_ERROR, f"AWS call failed: {exc}"
    if isinstance(exc, botocore.BotoCoreError):
        return AWS_ERROR, f"AWS call failed: {exc}"
    return None, ""
