"""V8's anonymous async frames: an `async (req, res) => ...` handler awaited below a library's error prints
`at async <location>`, often the only frame of the app's code in the stack (node-postgres' errors, which
the library raises from its own socket callback). It is read as a frame: different handlers are different
problems, one handler's errors one; and a signature the previous release made from such a trace, when it
read no frame there, keeps receiving its events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import KnownStates, engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import Frame, ParsedTrace, as_read_before, parse_stacktrace
from rounds_bot.grouping.stacktrace.model import NEWLY_READ
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _pg_error(message: str, route: str, line: int = 38) -> str:
    """A node-postgres error as Node prints it (`util.inspect`: its stack, then its own fields)."""
    return f"""error: {message}
    at /usr/src/app/node_modules/pg/lib/client.js:526:17
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
    at async /usr/src/app/routes/{route}:{line}:24 {{
  length: 108,
  severity: 'ERROR',
  code: '42P01'
}}"""


ORDERS = _pg_error('relation "employees" does not exist', "orders.js")
#: the hashes the previous release stored for a signature it made from `ORDERS` (its `GroupingEngine`
#: assigned an event of service `shop` with that stack trace, and its state of the signature held these):
#: the library's frames alone, the handler's line unread
PREVIOUS_RELEASE_HASHES = ("ac410ec294166faeb276963fc52f355d3cd65195cc5c78dd6adc72eb9ce16d20",)


def _event(
    n: int, stacktrace: str | None, message: str = 'relation "employees" does not exist'
) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="error",
        message=message,
        stacktrace=stacktrace,
    )


def test_an_anonymous_async_frame_is_read_with_its_file_and_line() -> None:
    trace = parse_stacktrace(ORDERS)
    assert trace is not None and trace.runtime == "node" and not trace.notes
    frames = trace.exceptions[0].frames
    assert [(f.function, f.filename, f.lineno) for f in frames] == [
        (None, "/usr/src/app/node_modules/pg/lib/client.js", 526),
        ("process.processTicksAndRejections", "node:internal/process/task_queues", 95),
        (None, "/usr/src/app/routes/orders.js", 38),
    ]
    assert [f.newly_read for f in frames] == [False, False, True]


def test_a_named_async_frame_reads_as_before() -> None:
    trace = parse_stacktrace("Error: x\n    at async Object.handler (/app/src/orders.js:10:15)\n")
    assert trace is not None
    assert trace.exceptions[0].frames == (
        Frame(function="Object.handler", filename="/app/src/orders.js", lineno=10),
    )
    assert as_read_before(trace) is None


def test_the_previous_reading_is_without_the_anonymous_async_frames() -> None:
    trace = parse_stacktrace(ORDERS)
    assert trace is not None
    before = as_read_before(trace)
    assert before is not None
    assert [f.filename for f in before.exceptions[0].frames] == [
        "/usr/src/app/node_modules/pg/lib/client.js",
        "node:internal/process/task_queues",
    ]


def test_errors_of_different_handlers_are_different_problems_and_one_handlers_are_one() -> None:
    found = GroupingEngine().assign_all(
        [
            _event(1, ORDERS),
            _event(2, _pg_error('relation "employees" does not exist', "orders.js")),
            _event(3, _pg_error('column "video_id" does not exist', "video_eval.js", 21)),
            _event(4, _pg_error("invalid input syntax for type uuid", "users.js", 77)),
        ]
    )
    assert found[0].signature_id == found[1].signature_id
    assert len({a.signature_id for a in found}) == 3


def test_the_pinned_hashes_are_those_the_previous_reading_gives() -> None:
    """What this version gives the text without its anonymous async frame (as the previous release read
    it) is what that release stored: the pinned hashes stand for its signature."""
    engine = GroupingEngine()
    made = engine.assign(_event(0, ORDERS.replace("    at async /usr/src/app/routes/orders.js:38:24 {", "{")))
    assert tuple(engine.state(made.signature_id).hashes) == PREVIOUS_RELEASE_HASHES


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_the_previous_release_made_keeps_receiving_the_trace(how: str) -> None:
    engine = engine_knowing(
        "sig_before", service="shop", title="error", hashes=PREVIOUS_RELEASE_HASHES, how=how
    )
    found = engine.assign_all([_event(1, ORDERS), _event(2, ORDERS)])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    # and it is registered under this version's hashes too, so the next round finds it by them
    assert found[0].fingerprint_hash in engine.state("sig_before").hashes


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_trace_of_anonymous_async_frames_alone_keeps_going_to_its_message_signature(how: str) -> None:
    """The previous release read no trace in a text whose only frames are anonymous async ones: its event
    went to its message's template, and that signature keeps receiving it."""
    text = "Error: checkout failed\n    at async /usr/src/app/routes/checkout.js:12:5"
    trace = parse_stacktrace(text)
    assert trace is not None and NEWLY_READ in trace.notes and as_read_before(trace) is None
    before = GroupingEngine()
    made = before.assign(_event(0, None, "checkout failed"))  # (a text read as no trace: the message alone)
    saved = [before.state(made.signature_id)]
    engine = GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))
    found = engine.assign_all([_event(1, text, "checkout failed"), _event(2, text, "checkout failed")])
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}


def test_the_earlier_reading_keeps_the_trace_other_runtimes_give() -> None:
    assert as_read_before(ParsedTrace("python", ())) is None
