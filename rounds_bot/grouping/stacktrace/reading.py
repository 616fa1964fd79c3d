"""For the parsers that read a trace line by line: the exception being read, until its header and
frames are complete, then the trace."""

from __future__ import annotations

from typing import Any

from rounds_bot.grouping.stacktrace.model import ParsedException, ParsedTrace, Relation, Runtime


def open_exception(type_: str, value: str, relation: Relation) -> dict[str, Any]:
    """An exception being read line by line: its header so far, and the frames found under it."""
    return {"type": type_, "value": value, "relation": relation, "frames": []}


def close_exception(current: dict[str, Any]) -> ParsedException:
    return ParsedException(current["type"], current["value"], tuple(current["frames"]), current["relation"])


def finish_trace(
    runtime: Runtime, exceptions: list[ParsedException], current: dict[str, Any] | None
) -> ParsedTrace | None:
    """The trace once every line is read, the exception still open included; None without a frame."""
    if current is not None:
        exceptions.append(close_exception(current))
    if not any(e.frames for e in exceptions):
        return None
    return ParsedTrace(runtime, tuple(exceptions))
