"""Following the Claude Code CLI's stream-json output while it runs.

Each event is forwarded for progress, and the token usage of every assistant message is kept, so
a run stopped by the timeout can still book what it spent (`spent`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rounds_bot.diagnosis.budget import ModelPrice
from rounds_bot.diagnosis.claude_result import token_usage
from rounds_bot.diagnosis.json_answer import json_object
from rounds_bot.diagnosis.model import TokenUsage

ProgressCallback = Callable[[dict[str, Any]], None]


def spent(usage: TokenUsage, price: ModelPrice) -> float:
    """What `usage` costs in USD at `price`, cache reads and writes included."""
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_input_tokens * price.cache_read
        + usage.cache_creation_input_tokens * price.cache_write
    ) / 1_000_000


class StreamWatcher:
    """Follows stream-json output: forwards events for progress and keeps the token usage, so a
    run stopped by the timeout can still book what it spent."""

    def __init__(self, on_progress: ProgressCallback | None) -> None:
        self._on_progress = on_progress
        self._usage_by_message: dict[str, dict[str, Any]] = {}

    @property
    def turns(self) -> int:
        return len(self._usage_by_message)

    def feed(self, line: str) -> None:
        event = json_object(line.strip())
        if event is None:
            return
        if event.get("type") == "assistant":
            message = event.get("message") or {}
            if isinstance(message, dict) and isinstance(message.get("usage"), dict):
                key = str(message.get("id") or len(self._usage_by_message))
                self._usage_by_message[key] = message["usage"]
        if self._on_progress is not None:
            self._on_progress(event)

    def usage(self) -> TokenUsage:
        totals = [token_usage(raw) for raw in self._usage_by_message.values()]
        return TokenUsage(
            input_tokens=sum(u.input_tokens for u in totals),
            output_tokens=sum(u.output_tokens for u in totals),
            cache_read_input_tokens=sum(u.cache_read_input_tokens for u in totals),
            cache_creation_input_tokens=sum(u.cache_creation_input_tokens for u in totals),
        )
