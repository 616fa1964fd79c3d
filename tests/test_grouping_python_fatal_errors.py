"""Python's fatal-error dumps (`faulthandler`: a crash in a C extension, an abort, a timeout's dump): read to
the frames of the thread that crashed, grouped by them, and found where an earlier release, which could not
read them, put their events (their message's signature)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import KnownStates

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _dump(site: str, line: int, thread: str = "0x00007f3b2c1d4740") -> str:
    return f"""Fatal Python error: Segmentation fault

Thread 0x00007f3b2c1d5700 (most recent call first):
  File "/app/shop/worker.py", line 30 in poll
  File "/usr/lib/python3.11/threading.py", line 975 in run

Current thread {thread} (most recent call first):
  File "/app/shop/native_bridge.py", line {line} in {site}
  File "/usr/local/lib/python3.11/site-packages/numpy/core/fromnumeric.py", line 88 in total
  File "/app/main.py", line 5 in <module>

Extension modules: numpy.core._multiarray_umath (total: 1)"""


def test_a_fatal_error_dump_is_read_to_the_current_threads_frames_crash_site_first() -> None:
    trace = parse_stacktrace(_dump("crash", 12))
    assert trace is not None and trace.runtime == "python"
    (exception,) = trace.exceptions
    assert (exception.type, exception.value) == ("Fatal Python error", "Segmentation fault")
    assert exception.frames == (
        Frame("crash", filename="/app/shop/native_bridge.py", lineno=12),
        Frame(
            "total",
            module="numpy.core.fromnumeric",
            filename="/usr/local/lib/python3.11/site-packages/numpy/core/fromnumeric.py",
            lineno=88,
        ),
        Frame("<module>", filename="/app/main.py", lineno=5),
    )


@pytest.mark.parametrize(
    ("text", "error_type", "first"),
    [
        (  # a dump of one thread
            'Fatal Python error: Aborted\n\nStack (most recent call first):\n  File "/app/a.py", line 3 in f',
            "Fatal Python error",
            "f",
        ),
        (  # a timeout's dump of every thread: none is current, the first is read
            'Timeout (0:00:05)!\nThread 0x01 (most recent call first):\n  File "/app/a.py", line 3 in wait\n'
            'Thread 0x02 (most recent call first):\n  File "/app/b.py", line 4 in other',
            "Timeout",
            "wait",
        ),
        (
            "Windows fatal exception: access violation\n\nCurrent thread 0x0000 (most recent call first):\n"
            '  File "C:\\\\app\\\\a.py", line 3 in f',
            "Windows fatal exception",
            "f",
        ),
    ],
)
def test_every_kind_of_dump_names_what_failed(text: str, error_type: str, first: str) -> None:
    trace = parse_stacktrace(text)
    assert trace is not None
    assert trace.exceptions[0].type == error_type
    assert trace.exceptions[0].frames[0].function == first


def test_a_traceback_is_read_as_before_when_a_dump_follows_it() -> None:
    text = 'Traceback (most recent call last):\n  File "/app/a.py", line 3, in f\n    g()\nValueError: bad'
    trace = parse_stacktrace(text)
    assert trace is not None and trace.exceptions[0].type == "ValueError" and not trace.notes


def _event(n: int, stacktrace: str | None) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="SIGSEGV",
        message="Fatal Python error: Segmentation fault",
        stacktrace=stacktrace,
    )


def test_one_crash_site_is_one_signature_whatever_the_thread_and_two_are_two() -> None:
    placed = GroupingEngine().assign_all(
        [
            _event(1, _dump("crash", 12)),
            _event(2, _dump("crash", 14, "0x00007f0000000001")),
            _event(3, _dump("free", 40)),
        ]
    )
    assert placed[0].signature_id == placed[1].signature_id != placed[2].signature_id


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_dumps(how: str) -> None:
    before = GroupingEngine()
    made = before.assign(_event(0, None))  # (what an unread dump gave: the message alone)
    saved = [before.state(made.signature_id)]
    engine = GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))
    found = engine.assign_all([_event(1, _dump("crash", 12)), _event(2, _dump("crash", 12))])
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}
