"""The grouping settings' defaults, and the configuration the grouping engine is built with.

Every default of grouping is declared here once: the settings object (`settings/__init__.py`) shows them
as its own, and `GroupingConfig` (what the engine reads) starts from them. The defaults are the
configuration every data set gets.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from rounds_bot.errors import ConfigError
from rounds_bot.models import Frozen

#: attribute keys that hold a standardised code, in priority order
DEFAULT_ERROR_CODE_ATTRIBUTES: tuple[str, ...] = (
    "error.code",
    "error_code",
    "exception.code",
    "app.error.code",
)
#: "error code: E1234", "errorCode=ORA-00942", "ERROR_CODE [AUTH_EXPIRED]": an explicit label
#: followed by a code that has a digit or is written in capitals. Bare numbers elsewhere in a
#: message are values, not codes, and "error code is invalid" names no code.
DEFAULT_ERROR_CODE_PATTERN = (
    r"\b(?:[Ee]rror|ERROR)[ _-]?(?:[Cc]ode|CODE)\s{0,3}[:=#]?\s{0,3}\[?"
    r"((?=[\w.-]{0,63}\d)[A-Za-z0-9][\w.-]{0,63}+|[A-Z][A-Z0-9_]{1,63}+\b)"
)
#: TF-IDF cosine similarity at or above which an error joins a known signature (ROUNDS_MERGE_THRESHOLD)
MERGE_THRESHOLD = 0.6
#: similarity at or above which a new signature is linked as possibly related (ROUNDS_RELATED_THRESHOLD)
RELATED_THRESHOLD = 0.4


def compile_code_pattern(pattern: str) -> re.Pattern[str]:
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ConfigError(
            f"error code pattern {pattern!r} is not a valid regular expression: {exc}",
            hint="fix ROUNDS_ERROR_CODE_PATTERN",
        ) from exc
    if compiled.groups < 1:
        raise ConfigError(
            f"error code pattern {pattern!r} has no group",
            hint="wrap the code part in parentheses, e.g. 'code=(\\w+)'",
        )
    return compiled


class GroupingConfig(Frozen):
    """How events are grouped. The defaults are THE configuration: the round and `rounds group`
    use them unless the user overrides a field, and no data set gets settings of its own."""

    in_app_include: list[str] = Field(default_factory=list, description="prefixes forced in-app")
    in_app_exclude: list[str] = Field(default_factory=list, description="prefixes forced not in-app")
    error_code_attributes: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ERROR_CODE_ATTRIBUTES),
        description="attribute keys holding a standardised error code, in priority order",
    )
    error_code_pattern: str | None = Field(
        default=DEFAULT_ERROR_CODE_PATTERN,
        description="regex with one group over the message that extracts an error code",
    )
    merge_threshold: float = Field(default=MERGE_THRESHOLD, gt=0, le=1)
    related_threshold: float = Field(default=RELATED_THRESHOLD, gt=0, le=1)

    # Problems a user can make in settings are raised as ConfigError (pydantic lets it through),
    # so the CLI reports them in one line with what to do.
    @field_validator("error_code_pattern")
    @classmethod
    def _pattern_compiles(cls, value: str | None) -> str | None:
        if value:
            compile_code_pattern(value)
        return value

    @model_validator(mode="after")
    def _thresholds_ordered(self) -> GroupingConfig:
        if self.related_threshold > self.merge_threshold:
            raise ConfigError(
                f"related_threshold {self.related_threshold} is above merge_threshold "
                f"{self.merge_threshold}: the related band must lie below the merge threshold",
                hint="lower ROUNDS_RELATED_THRESHOLD or raise ROUNDS_MERGE_THRESHOLD",
            )
        return self
