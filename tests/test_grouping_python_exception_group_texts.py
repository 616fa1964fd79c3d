"""Python exception groups' texts as they may arrive: cut short by a length limit, printed by a plain
exception whose message holds a group's rules, or holding thousands of errors. Each is printed by a real
program (`python_group_programs`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from python_group_programs import coupon_text, printed, task_group_text

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import (
    Frame,
    ParsedTrace,
    as_read_before,
    parse_stacktrace,
    python,
    python_groups,
)
from rounds_bot.grouping.stacktrace.model import trace_lines
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _read(text: str) -> ParsedTrace:
    trace = parse_stacktrace(text)
    assert trace is not None
    return trace


ERRORS = {
    "a": lambda: ValueError("card declined for order 7"),
    "b": lambda: KeyError("sku-7"),
    "c": lambda: TypeError("bad total for order 7"),
}


def _group_event(n: str, text: str) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"g{n}",
        timestamp=T0,
        service="shop",
        error_type="ExceptionGroup",
        message="unhandled errors in a TaskGroup (3 sub-exceptions)",
        stacktrace=text,
    )


def _cuts(text: str) -> list[str]:
    """The text as a length limit cuts it: at 75% and 90% of it, and at an attribute's usual limits."""
    return [text[: int(len(text) * share)] for share in (0.75, 0.9)] + [
        text[:limit] for limit in (4_096, 32_768) if limit < len(text)
    ]


@pytest.mark.parametrize("depth", [12, 120])
def test_a_group_cut_short_is_the_problem_its_whole_text_is(depth: int) -> None:
    """An attribute's length limit cuts a group's text inside one of its errors: that error is not read (no
    phantom `Exception`, no `Fi` of a cut `File "` line), so the title names a real error and the cut text is
    the problem the whole one is, in any order the tasks failed in."""
    texts = {
        order: task_group_text(depth, [ERRORS[key] for key in order])
        for order in ("abc", "cab", "bca", "acb")
    }
    engine = GroupingEngine()
    whole = {engine.assign(_group_event(order, text)).signature_id for order, text in texts.items()}
    assert len(whole) == 1
    read_whole = {(e.type, e.frames) for e in _read(texts["abc"]).exceptions}
    errors = {"ExceptionGroup", "ValueError", "KeyError", "TypeError"}
    for order, text in texts.items():
        for n, cut in enumerate(_cuts(text)):
            trace = _read(cut)
            assert {(e.type, e.frames) for e in trace.exceptions} <= read_whole, (order, len(cut))
            found = engine.assign(_group_event(f"{order} cut {n}", cut))
            assert found.signature_id in whole, (order, len(cut))
            assert found.title.split(":")[0] in errors, (order, len(cut), found.title)


def test_a_member_cut_after_its_exception_line_is_not_read() -> None:
    """Without the group's closing line, its last error's line may itself be cut (`TypeError: bad tot`)."""
    text = task_group_text(2, [ERRORS["a"], ERRORS["c"]])
    cut = text[: text.rindex("+---")]
    assert [e.type for e in _read(cut).exceptions] == ["ValueError"]
    assert [e.type for e in _read(text).exceptions] == [
        "ExceptionGroup",
        "TypeError",
        "ValueError",
    ]


RULES_IN_A_MESSAGE = [
    "X\n  +-+---------------- 1 ----------------\n    | PermissionError: admin token leaked\n"
    "    +------------------------------------",
    "X\n  +-+---------------- 1 ----------------\n    | Traceback (most recent call last):\n"
    '    |   File "/app/admin.py", line 3, in grant\n    | PermissionError: admin token leaked\n'
    "    +---------------- 2 ----------------\n    | KeyError: 'root'\n"
    "    +------------------------------------",
    # a whole group's print, after the exception's line
    "X\n  + Exception Group Traceback (most recent call last):\n"
    '  |   File "/app/admin.py", line 3, in grant\n  | ExceptionGroup: leaked (1 sub-exception)\n'
    "  +-+---------------- 1 ----------------\n    | PermissionError: admin token leaked\n"
    "    +------------------------------------",
]


@pytest.mark.parametrize("user", RULES_IN_A_MESSAGE)
def test_rules_in_a_plain_exceptions_message_read_as_a_plain_traceback(user: str) -> None:
    """A message is printed bare, behind no margin, and a group's value ends in its count of errors
    (`(1 sub-exception)`): rules a message holds make no group, and the text reads as it always did."""
    text = coupon_text(user)
    trace = parse_stacktrace(text)
    assert trace == python.parse(trace_lines(text))
    found = GroupingEngine().assign(
        ErrorEvent(
            event_id="c",
            timestamp=T0,
            service="shop",
            error_type="ValueError",
            message=f"invalid coupon {user}",
            stacktrace=text,
        )
    )
    assert "PermissionError" not in found.title.split(":")[0]


def test_rules_in_a_members_message_stay_in_its_message() -> None:
    """A member's message is printed behind its margin, every line: its rules are no member of the group."""
    text = task_group_text(1, [lambda: ValueError(RULES_IN_A_MESSAGE[0])])
    assert [e.type for e in _read(text).exceptions] == ["ValueError"]


#: a job that fails in its own file: each job's error is another error, of one frame
JOBS = """\
def main(members):
    errors = []
    for n in range(members):
        job = "try:\\n    raise ValueError('job failed')\\n"
        job += "except ValueError as error:\\n    errors.append(error)\\n"
        exec(compile(job, f"/app/jobs/job_{n}.py", "exec"), {"errors": errors})
    raise ExceptionGroup("jobs failed", errors)
"""


def test_a_group_of_thousands_of_errors_is_read_in_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """6,000 distinct errors: the reading releases before gave is matched to this one's through a table, not
    by a search of this reading for each of its exceptions (some 18 million frame comparisons). (Read whole:
    a stored trace is read up to `MAX_TRACE_LINES`, fewer than this group prints.)"""
    members = 6_000
    lines = printed(JOBS, "/app/jobs/run.py", members, max_group_width=members).splitlines()
    compared = 0
    equal = Frame.__eq__

    def counted(frame: Frame, other: object) -> bool:
        nonlocal compared
        compared += 1
        return equal(frame, other)

    monkeypatch.setattr(Frame, "__eq__", counted)
    trace = python_groups.parse(lines)
    assert trace is not None and len(trace.exceptions) == members + 1
    assert as_read_before(trace) is not None
    assert compared <= 10 * members


def test_a_nested_group_cut_short_keeps_the_errors_it_printed_whole() -> None:
    program = (
        "def main():\n"
        "    inner = ExceptionGroup('inner', [KeyError('sku-7'), TypeError('bad total')])\n"
        "    raise ExceptionGroup('outer', [ValueError('card declined'), inner])\n"
    )
    text = printed(program, "/app/shop/cart.py")
    cut = text[: text.index("TypeError: bad") + len("TypeError: b")]
    assert [e.type for e in _read(text).exceptions] == [
        "ExceptionGroup",
        "KeyError",
        "TypeError",
        "ValueError",
    ]
    assert [e.type for e in _read(cut).exceptions] == ["ExceptionGroup", "KeyError", "ValueError"]
