"""Typed errors. ConfigError and UsageError end the CLI with exit status 2, CredentialsError with 3."""


class ReaperError(Exception):
    """Base of the reaper's own errors."""


class ConfigError(ReaperError):
    """The configuration (environment, template parameters, CLI flags) cannot be used."""


class CredentialsError(ConfigError):
    """No AWS credentials, or credentials that cannot be loaded (an expired SSO token): the CLI's exit 3."""


class UsageError(ReaperError):
    """The command line asks for something that cannot be done."""


class OutputError(ReaperError):
    """The CLI's output could not be written (a full disk, a closed terminal); exit status 1."""


class BadEventError(ReaperError):
    """An event that is not of a shape the handler knows; nothing is changed."""


class RestoreError(ReaperError):
    """A restore that cannot go ahead; the message says what is missing."""


class NoRestoreRecord(RestoreError):
    """The action log has no restore record for that name: the reaper never deleted it."""


class ActionRefused(ReaperError):
    """An action that will not go ahead, decided at the last moment (the pipeline makes it an
    `error` verdict, reported like a failed call, and the sweep goes on). Nothing was changed."""

    def __init__(self, operation: str, reason: str) -> None:
        super().__init__(reason)
        self.operation = operation
        self.reason = reason
