"""Tier 1's defaults: where a standardised error code is read from, and how a configured pattern is checked.

The grouping engine (`grouping/error_codes.py`) reads codes with them; the settings show them as defaults.
"""

from __future__ import annotations

import re

from rounds_bot.errors import ConfigError

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
