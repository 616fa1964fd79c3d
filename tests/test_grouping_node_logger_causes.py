"""A Node error's cause as a logger prints it after the error's stack: `caused by: ` (pino's error
serializers) or `Caused by: ` (VError's `fullStack`, bunyan's serializer). The cause is an exception of its
own, as Node's `[cause]:` is: its frames are no part of the outer error's stack, so two root causes under one
wrapper are two problems and one root cause is one, whatever its values. A signature an earlier release made
from such a trace, which read the cause's frames as the outer error's, keeps receiving its events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import as_read_before, parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
OUTER = (
    "Error: failed to load order\n"
    "    at OrderService.load (/app/src/services/order.js:42:11)\n"
    "    at async /app/src/routes/orders.js:18:20\n"
)
REFUSED = (
    "Error: connect ECONNREFUSED 10.0.0.{host}:5432\n"
    "    at TCPConnectWrap.afterConnectMultiple [as oncomplete] (node:net:1607:16)\n"
    "    at Pool.connect (/app/src/db/pool.js:7:9)"
)
UNDEFINED_ROWS = (
    "TypeError: Cannot read properties of undefined (reading 'rows')\n"
    "    at mapOrder (/app/src/db/mappers.js:12:22)\n"
    "    at Pool.query (/app/src/db/pool.js:30:5)"
)


def _pino(cause: str, link: str = "caused by: ") -> str:
    """pino-std-serializers' `stack`: the error's stack, then `\\ncaused by: ` and the cause's."""
    return f"{OUTER}{link}{cause}"


REFUSED_TRACE = _pino(REFUSED.format(host=3))
#: the hashes the previous release stored for a signature it made from `REFUSED_TRACE` (its `GroupingEngine`
#: assigned `_event(1, REFUSED_TRACE)`, and its `state` of the signature held these)
PREVIOUS_RELEASE_HASHES = (
    "2e20ecafd7d36b8dcc73bb9953828702a84af22bd43c32d45a37ae628cbe453d",
    "099ba0d65c206b9f458836e41870f1ce5436fe3d9c35f97d4a751a0819b07941",
    "e4473d22825bc4bf8c5bafde6e98cddc64f818d6f60deb72c15685cf9ac67a8f",
)


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="Error",
        message="failed to load order",
        stacktrace=stacktrace,
    )


def _signatures(texts: list[str]) -> list[str]:
    found = GroupingEngine().assign_all([_event(n, text) for n, text in enumerate(texts)])
    return [assignment.signature_id for assignment in found]


@pytest.mark.parametrize("link", ["caused by: ", "Caused by: "])
def test_a_loggers_caused_by_is_the_errors_cause_with_its_own_frames(link: str) -> None:
    trace = parse_stacktrace(_pino(REFUSED.format(host=3), link))
    assert trace is not None and trace.runtime == "node"
    outer, cause = trace.exceptions
    assert (outer.type, outer.value, outer.relation) == ("Error", "failed to load order", "raised")
    assert [f.filename for f in outer.frames] == ["/app/src/services/order.js", "/app/src/routes/orders.js"]
    assert (cause.type, cause.value, cause.relation) == (
        "Error",
        "connect ECONNREFUSED 10.0.0.3:5432",
        "cause",
    )
    assert [f.function for f in cause.frames] == ["TCPConnectWrap.afterConnectMultiple", "Pool.connect"]


def test_each_cause_of_a_chain_is_read_in_turn() -> None:
    trace = parse_stacktrace(
        _pino(_pino(UNDEFINED_ROWS).replace("Error: failed to load", "Error: failed to map"))
    )
    assert trace is not None
    assert [(e.type, e.relation, len(e.frames)) for e in trace.exceptions] == [
        ("Error", "raised", 2),
        ("Error", "cause", 2),
        ("TypeError", "cause", 2),
    ]


def test_two_root_causes_under_one_wrapper_are_two_problems_and_one_is_one() -> None:
    texts = [
        _pino(REFUSED.format(host=3)),
        _pino(REFUSED.format(host=9)),  # another replica of the database: the same problem
        _pino(UNDEFINED_ROWS),
        _pino(
            REFUSED.format(host=3).replace(
                "Pool.connect (/app/src/db/pool.js:7:9)", "Pool.query (/app/src/db/pool.js:30:5)"
            )
        ),
    ]
    first, again, rows, other_site = _signatures(texts)
    assert first == again
    assert len({first, rows, other_site}) == 3


def test_the_previous_reading_has_the_causes_frames_as_the_errors() -> None:
    trace = parse_stacktrace(REFUSED_TRACE)
    assert trace is not None
    before = as_read_before(trace)
    assert before is not None and not before.notes
    (only,) = before.exceptions
    assert (only.type, only.value) == ("Error", "failed to load order")
    assert [f.function for f in only.frames] == [
        "OrderService.load",
        None,
        "TCPConnectWrap.afterConnectMultiple",
        "Pool.connect",
    ]


def test_a_caused_by_line_of_a_message_before_the_first_frame_is_read_as_before() -> None:
    text = (
        "Error: failed to load order\ncaused by: timeout\n"
        "    at OrderService.load (/app/src/services/order.js:42:11)"
    )
    trace = parse_stacktrace(text)
    assert trace is not None and as_read_before(trace) is None
    (only,) = trace.exceptions
    assert only.value == "failed to load order caused by: timeout" and len(only.frames) == 1


def test_a_trace_with_nodes_own_cause_only_is_read_as_before() -> None:
    outer = "Error: failed to load order\n    at OrderService.load (/app/src/services/order.js:42:11)\n"
    trace = parse_stacktrace(outer + "  [cause]: " + REFUSED.format(host=3))
    assert trace is not None and len(trace.exceptions) == 2 and as_read_before(trace) is None


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_the_previous_release_made_keeps_receiving_the_trace(how: str) -> None:
    engine = engine_knowing(
        "sig_before", service="shop", title="Error", hashes=PREVIOUS_RELEASE_HASHES, how=how
    )
    found = engine.assign_all([_event(1, REFUSED_TRACE), _event(2, _pino(REFUSED.format(host=9)))])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    # and it is registered under this version's hashes too, so the next round finds it by them
    assert found[0].fingerprint_hash in engine.state("sig_before").hashes


def test_without_a_signature_before_the_trace_starts_one_of_its_own() -> None:
    found = GroupingEngine().assign_all([_event(1, REFUSED_TRACE)])
    assert found[0].tier == "new" and found[0].fingerprint_hash not in PREVIOUS_RELEASE_HASHES
