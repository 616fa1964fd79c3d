"""A V8 stack cut short by an attribute length limit (`OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`) may end in a frame
line's first letters (`    a`, `    at`): they are no cause named `at`, so occurrences of one error whose
messages differ in length, and so are cut at different places, are one problem."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
FRAMES = "".join(f"    at run{i} (/app/src/orders/step{i}.js:{10 + i}:5)\n" for i in range(40))


def _stack(message: str) -> str:
    return f"Error: {message}\n{FRAMES}"


@pytest.mark.parametrize("tail", ["\n    a", "\n    at", "\n    at "])
def test_a_frame_line_cut_to_its_first_letters_is_no_cause(tail: str) -> None:
    whole = _stack("order 7 not found")
    cut = whole[: whole.index("\n    at run9 ")] + tail
    trace = parse_stacktrace(cut)
    assert trace is not None
    assert [exception.type for exception in trace.exceptions] == ["Error"]
    assert len(trace.exceptions[0].frames) == 9


def test_occurrences_cut_at_any_length_are_one_problem() -> None:
    messages = [
        "order 1 not found",
        "order 123456789 not found in warehouse eu-west-1 after 3 retries",
        "order 77 not found",
        "order 9999999999999999 not found in warehouse us-east-2 after 12 retries (deadline 30000ms)",
        "order 5 not found in x",
        "order 31337 not found in warehouse ap-south-1",
    ]
    for limit in range(480, 620):  # every cut, through a few frame lines
        engine = GroupingEngine()
        signatures = {
            engine.assign(
                ErrorEvent(
                    event_id=f"e{n}",
                    timestamp=T0,
                    service="orders",
                    error_type="Error",
                    message=message,
                    stacktrace=_stack(message)[:limit],
                )
            ).signature_id
            for n, message in enumerate(messages)
        }
        assert len(signatures) == 1, limit
