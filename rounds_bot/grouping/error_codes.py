"""Tier 1: standardised error codes.

A code is read, first found wins, from the event's own `error_code`, then the configured
attributes in order, then the configured message pattern (its first group). The same code in
the same service is one signature, whatever the message or stack trace says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rounds_bot.grouping.normalize import truncate
from rounds_bot.grouping.placement import MessageFacts
from rounds_bot.models import ErrorEvent
from rounds_bot.settings.error_codes import (
    DEFAULT_ERROR_CODE_PATTERN,
    compile_code_pattern,
)

_MAX_CODE = 64


@dataclass(frozen=True)
class ErrorCode:
    code: str
    where: str  # which field or attribute it came from


class ErrorCodeReader:
    def __init__(self, attributes: list[str] | tuple[str, ...], pattern: str | None) -> None:
        self._attributes = tuple(attributes)
        self._pattern = compile_code_pattern(pattern) if pattern else None
        # Every match of the default pattern contains "code" in some case: a substring test
        # skips the regular expression for the many messages that cannot match.
        self._needs_code_word = pattern == DEFAULT_ERROR_CODE_PATTERN

    def message_may_hold_code(self, message: str) -> bool:
        """False when the message pattern surely finds nothing (cheap: decides the hot path)."""
        if self._pattern is None or not message:
            return False
        return not self._needs_code_word or "ode" in message or "ODE" in message

    def shape_test(self) -> Callable[[str], bool] | None:
        """A test whose answer holds for every message of a shape, or None when the configured
        pattern gives no such guarantee. The default pattern uses digits only as classes, so
        whether it can match a message does not depend on the digits."""
        if self._pattern is None:
            return lambda _message: False
        if self._needs_code_word:
            pattern = self._pattern
            return lambda text: pattern.search(text) is not None
        return None

    def read(self, event: ErrorEvent | MessageFacts) -> ErrorCode | None:
        if event.error_code and event.error_code.strip():
            return ErrorCode(_clean(event.error_code), "error_code")
        attributes = event.attributes
        if attributes:
            for key in self._attributes:
                value = attributes.get(key)
                if value is not None and not isinstance(value, bool) and str(value).strip():
                    return ErrorCode(_clean(str(value)), f"attribute {key}")
        message = event.message
        pattern = self._pattern
        if pattern is not None and self.message_may_hold_code(message):
            # the pattern reads what normalisation reads: the first lines, cut to a bound
            match = pattern.search(truncate(message))
            if match and match.group(1):
                return ErrorCode(_clean(match.group(1)), "message pattern")
        return None


def _clean(code: str) -> str:
    return " ".join(code.split())[:_MAX_CODE]
