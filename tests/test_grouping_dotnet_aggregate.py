""".NET's `AggregateException` (`Parallel.ForEach`, `Task.WhenAll(...).Wait()`): its numbered inner errors
(`---> (Inner Exception #1) ...<---`) are read as its inner exceptions, not as its own frames; the same error
raised by several tasks is one, whatever their count or order, and errors at other sites make another problem;
a signature the previous release made from such a trace keeps receiving it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import as_read_before, parse_stacktrace
from rounds_bot.grouping.stacktrace.dotnet import parse as read_as_before
from rounds_bot.grouping.stacktrace.model import trace_lines
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
_WORKER = (
    "   at System.Threading.Tasks.Parallel.<>c__DisplayClass19_0`2.<ForWorker>b__1("
    "RangeWorker& currentWorker, Int64 timeout, Boolean& replicationDelegateYieldedBeforeCompletion)"
)


def _aggregate(sites: list[str]) -> str:
    """`Parallel.ForEach` over items whose processing failed at `sites`, one per failed task, as
    `AggregateException.ToString()` prints it: the first inner exception as an inner one, the others
    numbered."""
    message = "One or more errors occurred. " + " ".join(f"(item {n} failed)" for n in range(len(sites)))
    first, *rest = sites
    text = (
        f"System.AggregateException: {message}\n"
        " ---> System.InvalidOperationException: item 0 failed\n"
        f"   at Acme.Jobs.Sync.{first}(Int32 id) in /src/Jobs/Sync.cs:line 40\n"
        f"{_WORKER}\n"
        "   --- End of inner exception stack trace ---\n"
        "   at System.Threading.Tasks.TaskReplicator.Run[TState](ReplicatableUserAction`1 action, "
        "ParallelOptions options, Boolean stopOnFirstFailure)\n"
        "   at Acme.Jobs.Sync.Run() in /src/Jobs/Sync.cs:line 22"
    )
    for n, site in enumerate(rest, 1):
        text += (
            f"\n ---> (Inner Exception #{n}) System.InvalidOperationException: item {n} failed\n"
            f"   at Acme.Jobs.Sync.{site}(Int32 id) in /src/Jobs/Sync.cs:line 40\n"
            f"{_WORKER}<---\n"
        )
    return text


def _functions(text: str) -> list[tuple[str, list[str | None]]]:
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "dotnet"
    return [(e.type, [f.function for f in e.frames]) for e in trace.exceptions]


def test_the_numbered_inner_errors_are_inner_exceptions_not_the_aggregates_frames() -> None:
    assert _functions(_aggregate(["ProcessItem", "Validate"])) == [
        ("System.AggregateException", ["Run[TState]", "Run"]),
        ("System.InvalidOperationException", ["ProcessItem", "<ForWorker>b"]),
        ("System.InvalidOperationException", ["Validate", "<ForWorker>b"]),
    ]


def test_the_same_error_of_several_tasks_is_read_once() -> None:
    assert _functions(_aggregate(["ProcessItem"] * 4)) == _functions(_aggregate(["ProcessItem"]))


def _event(n: int, sites: list[str]) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="jobs",
        error_type="System.AggregateException",
        message="One or more errors occurred. " + " ".join(f"(item {i} failed)" for i in range(len(sites))),
        stacktrace=_aggregate(sites),
    )


def test_errors_of_one_site_are_one_signature_whatever_their_count_or_order() -> None:
    runs = [["ProcessItem", "Validate"], ["Validate", "ProcessItem"], ["Validate", "ProcessItem", "Validate"]]
    placed = GroupingEngine().assign_all([_event(n, sites) for n, sites in enumerate(runs)])
    assert len({a.signature_id for a in placed}) == 1
    counts = GroupingEngine().assign_all([_event(n, ["ProcessItem"] * n) for n in (1, 2, 5)])
    assert len({a.signature_id for a in counts}) == 1


def test_errors_at_other_sites_are_another_signature() -> None:
    placed = GroupingEngine().assign_all([_event(1, ["ProcessItem"] * 2), _event(2, ["Validate"] * 2)])
    assert placed[0].signature_id != placed[1].signature_id


def test_the_previous_reading_is_kept_to_look_up() -> None:
    text = _aggregate(["ProcessItem", "Validate"])
    trace = parse_stacktrace(text)
    assert trace is not None
    assert as_read_before(trace) == read_as_before(trace_lines(text))
    alone = parse_stacktrace(_aggregate(["ProcessItem"]))
    assert alone is not None and as_read_before(alone) is None


#: the hashes the previous release stored for a signature it made from
#: `_event(1, ["ProcessItem", "Validate"])`
PREVIOUS_RELEASE_HASHES = (
    "7820ce190a38eb6830f37201fb6c0814f996f7e331fac242536f01f1ccb513ed",
    "39ef6e11d18be41ca2f88044f420aa0614bc7171f9c9c18f93a33f9ef1427f55",
    "3ece4cf794e505bfb91498b10abb13aadf70b2e541f9f81d1898e81cf4dc44b9",
)


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_the_previous_release_made_keeps_receiving_the_aggregate(how: str) -> None:
    engine = engine_knowing(
        "sig_before", service="jobs", title="AggregateException", hashes=PREVIOUS_RELEASE_HASHES, how=how
    )
    found = engine.assign_all([_event(1, ["ProcessItem", "Validate"])])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
