"""A Python traceback cut short before its exception line (an SDK's attribute length limit,
`OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`, or a log pipeline's record limit) keeps only the outermost frames: the
path every error of a view shares. It is grouped by its event's type and message, not by those frames:
before, the fragment the cut left (`  F` of a `  File` line) was read as its type and two bugs reached
through one view were one problem."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.logged_traces import logged_exception
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.grouping.stacktrace.python import CUT_SHORT
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)

#: Django's handlers, then the app's views: the outer frames both bugs below are reached through
OUTER = (
    "Traceback (most recent call last):\n"
    + "".join(
        f'  File "/usr/lib/python3.11/site-packages/django/core/handlers/h{i}.py", '
        f"line {10 + i}, in inner{i}\n"
        "    response = get_response(request)\n"
        for i in range(12)
    )
    + "".join(
        f'  File "/app/shop/views/v{i}.py", line {10 + i}, in view{i}\n    return handle{i}(request)\n'
        for i in range(6)
    )
)
DIVISION = (
    '  File "/app/shop/orders.py", line 40, in total\n    return sum(prices) / count\n'
    "ZeroDivisionError: division by zero\n"
)
MISSING_KEY = (
    '  File "/app/shop/coupons.py", line 12, in apply\n    return coupon["code"]\nKeyError: \'code\'\n'
)


def _event(number: int, error_type: str, message: str, trace: str) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{number}",
        timestamp=T0,
        service="shop",
        error_type=error_type,
        message=message,
        stacktrace=trace,
    )


@pytest.mark.parametrize("limit", [600, 1200, 1800, len(OUTER), len(OUTER) + 30])
def test_two_bugs_of_one_view_cut_before_their_crash_sites_stay_two_problems(limit: int) -> None:
    engine = GroupingEngine()
    division = engine.assign(_event(1, "ZeroDivisionError", "division by zero", (OUTER + DIVISION)[:limit]))
    missing = engine.assign(_event(2, "KeyError", "'code'", (OUTER + MISSING_KEY)[:limit]))
    assert division.signature_id != missing.signature_id


def test_two_bugs_of_one_type_and_view_cut_short_stay_apart_by_their_messages() -> None:
    engine = GroupingEngine()
    first = engine.assign(_event(1, "KeyError", "'code'", (OUTER + MISSING_KEY)[:1800]))
    second = engine.assign(_event(2, "KeyError", "'warehouse'", (OUTER + MISSING_KEY)[:1800]))
    assert first.signature_id != second.signature_id


def test_occurrences_of_one_bug_cut_anywhere_are_one_problem() -> None:
    chooser = random.Random(7)
    messages = [
        f"order {chooser.randint(1, 10**9)} not found after {chooser.randint(1, 30)} retries"
        for _ in range(6)
    ]
    for limit in range(500, len(OUTER) + 200, 37):
        engine = GroupingEngine()
        signatures = {
            engine.assign(
                _event(n, "LookupError", message, (OUTER + f"LookupError: {message}\n")[:limit])
            ).signature_id
            for n, message in enumerate(messages)
        }
        assert len(signatures) == 1, limit


def test_the_fragment_a_cut_leaves_is_never_read_as_the_exception_type() -> None:
    cut = (OUTER + DIVISION)[: len(OUTER) + 3]  # ends `\n  F`
    assert cut.endswith("\n  F")
    trace = parse_stacktrace(cut)
    assert trace is not None and CUT_SHORT in trace.notes
    assert trace.exceptions[0].type == "Exception" and trace.exceptions[0].value == ""
    # a log body cut so is still a logged exception (its frames say it is one), as before
    assert logged_exception(cut, {}) is not None


@pytest.mark.parametrize("indent", ["", "    ", "\t"])
def test_a_whole_traceback_is_not_cut_short_however_a_logger_indents_it(indent: str) -> None:
    lines = (OUTER + DIVISION).splitlines()
    text = "\n".join([lines[0], *(indent + line for line in lines[1:])]) + "\n"
    trace = parse_stacktrace(text)
    assert trace is not None and CUT_SHORT not in trace.notes
    assert trace.exceptions[0].type == "ZeroDivisionError"


def test_a_chain_cut_in_its_raised_traceback_is_cut_short_and_its_cause_still_read() -> None:
    cause = 'Traceback (most recent call last):\n  File "/app/shop/db.py", line 4, in read\n'
    cause += "KeyError: 'cart'\n\n"
    marker = "The above exception was the direct cause of the following exception:\n\n"
    text = (cause + marker + OUTER + DIVISION)[: len(cause + marker + OUTER) - 5]
    trace = parse_stacktrace(text)
    assert trace is not None and CUT_SHORT in trace.notes
    assert [exception.type for exception in trace.exceptions] == ["Exception", "KeyError"]
