"""The one exception hierarchy of rounds.

Third-party errors (httpx, sqlite3, PyGithub, subprocess) are translated into these at the
boundary where they happen, so the CLI can turn any of them into a one-line message and exit 2.

    RoundsError
     ├── ConfigError            settings missing or invalid
     ├── SourceError            a telemetry source could not be read
     │    ├── SourceFormatError     a line or payload was malformed (skippable)
     │    └── SignozError           the SigNoz API refused or failed
     ├── StoreError             the signature database could not be opened or written
     │    └── SchemaTooNewError     the database was written by a newer rounds
     ├── TrackerError           the issue tracker (dry-run folder or GitHub) failed
     ├── DiagnosisError         the model could not be run
     ├── CommandError           a /rounds command was malformed or not allowed
     ├── FixError               a fix proposal could not be made (git, the worktree, the test command)
     └── NotifyError            a chat notification (Zulip) could not be sent
"""

from __future__ import annotations


class RoundsError(Exception):
    """Base of every error rounds raises on purpose; the message is meant for a human."""

    #: what the user can do about it, appended to the message by the CLI
    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base} ({self.hint})" if self.hint else base


class ConfigError(RoundsError):
    """Settings are missing or invalid."""


class SourceError(RoundsError):
    """A telemetry source could not be read."""


class SourceFormatError(SourceError):
    """One line or payload of a source was malformed; the rest can still be read."""


class SignozError(SourceError):
    """The SigNoz API refused a request or answered something unusable."""


class StoreError(RoundsError):
    """The signature database could not be opened, migrated or written."""


class SchemaTooNewError(StoreError):
    """The database was written by a newer version of rounds."""


class TrackerError(RoundsError):
    """The issue tracker could not be written."""


class DiagnosisError(RoundsError):
    """The diagnoser could not be run at all."""


class CommandError(RoundsError):
    """A /rounds command was malformed or not allowed."""


class FixError(RoundsError):
    """A fix proposal could not be made: git, the worktree or the test command failed."""


class NotifyError(RoundsError):
    """A chat notification could not be sent; the round itself is unaffected."""
