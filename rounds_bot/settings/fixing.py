"""The fix proposals' settings, a part of the one settings object (`Settings` in
`settings/model.py` inherits them).

Each field is an environment variable documented in docs/settings.md like every other setting.
Fix pull requests are off until ROUNDS_FIX_TEST_COMMAND is set: a change nobody tested is never proposed.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode

from rounds_bot.settings.fields import env

DEFAULT_AUTHOR = "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"
_AUTHOR = re.compile(r"^(?P<name>[^<>]+?)\s*<(?P<email>[^<>\s]+@[^<>\s]+)>$")


class FixSettings(BaseSettings):
    """Settings of `rounds fix` and of the incident lifecycle after a fix ships."""

    fix_test_command: str | None = Field(
        default=None,
        validation_alias=env("ROUNDS_FIX_TEST_COMMAND"),
        description="The repository's own test command, run in the fix's worktree (e.g. `python -m pytest "
        "-x -q`); a fix is proposed only when it passes. Fix pull requests are off until it is set.",
    )
    fix_test_timeout_seconds: int = Field(
        default=900,
        ge=10,
        le=7_200,
        validation_alias=env("ROUNDS_FIX_TEST_TIMEOUT_SECONDS"),
        description="Wall-clock limit for the test command; it is stopped after it and the fix fails.",
    )
    fix_protected_paths: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        validation_alias=env("ROUNDS_FIX_PROTECTED_PATHS"),
        description="Comma-separated folders (ending in `/`), files or globs a fix may never change; "
        "`.github/`, `.rounds/`, `.claude/`, `.mcp.json`, `.gitmodules` and `.git` always are.",
    )
    fix_max_diff_lines: int = Field(
        default=200,
        ge=1,
        le=5_000,
        validation_alias=env("ROUNDS_FIX_MAX_DIFF_LINES"),
        description="A fix changing more lines than this (added plus deleted) is refused.",
    )
    fix_max_diff_bytes: int = Field(
        default=65_536,
        ge=1_024,
        le=10_485_760,
        validation_alias=env("ROUNDS_FIX_MAX_DIFF_BYTES"),
        description="A fix adding more bytes than this is refused, as is any binary file and any added line "
        "over 1,000 characters (minified or generated code).",
    )
    fix_local_tests_with_tokens: bool = Field(
        default=False,
        validation_alias=env("ROUNDS_FIX_LOCAL_TESTS_WITH_TOKENS"),
        description="Let `rounds fix` (all stages in one process) and `rounds fix test` run the test command "
        "while a token or key is in reach (GITHUB_TOKEN, ANTHROPIC_API_KEY, ...): the code the model wrote "
        "could read them. Off: they refuse to; in GitHub Actions the stages run as separate jobs instead.",
    )
    fix_keep_failed_branches: bool = Field(
        default=False,
        validation_alias=env("ROUNDS_FIX_KEEP_FAILED_BRANCHES"),
        description="Keep the local branch of a failed attempt (never pushed) in ROUNDS_REPO_PATH, with the "
        "attempted change committed, for a human to look at.",
    )
    fix_auto: bool = Field(
        default=False,
        validation_alias=env("ROUNDS_FIX_AUTO"),
        description="Propose fixes unasked for server bugs diagnosed with high confidence (at most "
        "ROUNDS_FIX_AUTO_PER_DAY a day); off: only on `/rounds fix`.",
    )
    fix_auto_per_day: int = Field(
        default=1,
        ge=0,
        le=50,
        validation_alias=env("ROUNDS_FIX_AUTO_PER_DAY"),
        description="At most this many automatic fix proposals a day (UTC).",
    )
    fix_quiet_hours: int = Field(
        default=168,
        ge=0,
        le=8_760,
        validation_alias=env("ROUNDS_FIX_QUIET_HOURS"),
        description="How long a problem must stay away after the release that carries its merged fix before "
        "its issue is closed as resolved, with an evaluation comment.",
    )
    fix_remote: str = Field(
        default="origin",
        min_length=1,
        validation_alias=env("ROUNDS_FIX_REMOTE"),
        description="The git remote of ROUNDS_REPO_PATH that fix branches are fetched from and pushed to.",
    )
    fix_base_branch: str | None = Field(
        default=None,
        validation_alias=env("ROUNDS_FIX_BASE_BRANCH"),
        description="The branch fixes start from and target. Default: the repository's default branch.",
    )
    fix_git_author: str = Field(
        default=DEFAULT_AUTHOR,
        validation_alias=env("ROUNDS_FIX_GIT_AUTHOR"),
        description="Author of fix commits, as `Name <email>`.",
    )

    @field_validator("fix_protected_paths", mode="before")
    @classmethod
    def _split_paths(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("fix_git_author")
    @classmethod
    def _author_has_a_name_and_an_email(cls, value: str) -> str:
        if _AUTHOR.match(value.strip()) is None:
            raise ValueError("must read `Name <email>`, e.g. `rounds <rounds@example.com>`")
        return value.strip()

    def fix_author(self) -> tuple[str, str]:
        match = _AUTHOR.match(self.fix_git_author)
        assert match is not None  # checked when the settings were read
        return match["name"], match["email"]
