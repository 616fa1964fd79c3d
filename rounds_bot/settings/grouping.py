"""The grouping configuration: its defaults are the configuration every data set gets.

Every default of grouping is declared once, here and in `error_codes.py`: the settings object
(`settings/model.py`) shows them as its own, and `GroupingConfig` (what the engine reads) starts from them.
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from rounds_bot.errors import ConfigError
from rounds_bot.models import Frozen
from rounds_bot.settings.error_codes import (
    DEFAULT_ERROR_CODE_ATTRIBUTES,
    DEFAULT_ERROR_CODE_PATTERN,
    compile_code_pattern,
)

#: TF-IDF cosine similarity at or above which an error joins a known signature (ROUNDS_MERGE_THRESHOLD)
MERGE_THRESHOLD = 0.6
#: similarity at or above which a new signature is linked as possibly related (ROUNDS_RELATED_THRESHOLD)
RELATED_THRESHOLD = 0.4


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
