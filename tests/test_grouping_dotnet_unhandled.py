""".NET's crash output: a process that dies of an exception prints it after the runtime's prefix,
`Unhandled exception. ` (.NET Core 3.0 and later) or `Unhandled Exception: ` (.NET Framework, earlier .NET
Core). The exception's own type and message are read after either, its inner exceptions too, the frames as
before; a text without the prefix reads as before; and a signature the previous release made from such a
text, when it read no type there, keeps receiving its events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import KnownStates, engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import ParsedException, ParsedTrace, parse_stacktrace
from rounds_bot.grouping.stacktrace.dotnet import UNHANDLED, as_read_before
from rounds_bot.grouping.stacktrace.model import NEWLY_READ
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)

FRAMES = """   at System.Linq.ThrowHelper.ThrowNoElementsException()
   at System.Linq.Enumerable.First[TSource](IEnumerable`1 source)
   at Shop.Orders.Checkout(Cart cart) in /src/Shop/Orders.cs:line 42
   at Shop.Program.Main(String[] args) in /src/Shop/Program.cs:line 10"""
CRASH = "Unhandled exception. System.InvalidOperationException: Sequence contains no elements\n" + FRAMES
#: an inner exception as .NET Core prints it (on its own line), then as .NET Framework does (on the same line)
INNER = """Unhandled exception. System.AggregateException: One or more errors occurred. (boom)
 ---> System.InvalidOperationException: boom
   at Shop.Worker.Run() in /src/Shop/Worker.cs:line 7
   --- End of inner exception stack trace ---
   at System.Threading.Tasks.Task.Wait()
   at Shop.Program.Main(String[] args) in /src/Shop/Program.cs:line 12"""
INNER_ON_ONE_LINE = """Unhandled Exception: System.AggregateException: One or more errors occurred. ---> System.InvalidOperationException: boom
   at Shop.Worker.Run() in C:\\src\\Shop\\Worker.cs:line 7
   --- End of inner exception stack trace ---
   at System.Threading.Tasks.Task.Wait()
   at Shop.Program.Main(String[] args) in C:\\src\\Shop\\Program.cs:line 12"""  # noqa: E501
#: an inner exception with no frame: every frame is the outermost exception's
INNER_WITHOUT_FRAMES = """Unhandled exception. System.AggregateException: One or more errors occurred. (boom)
 ---> System.InvalidOperationException: boom
   --- End of inner exception stack trace ---
   at Shop.Program.Main(String[] args) in /src/Shop/Program.cs:line 12"""

#: the hashes the previous release stored for a signature it made from each text, reading `CRASH` as a
#: `System.Exception` and `INNER` as its inner exception alone (its `GroupingEngine` assigned an event of
#: service `shop` with that stack trace, and its `state` of the signature held these)
PREVIOUS_RELEASE_HASHES = {
    CRASH: (
        "1087acee2dd930c41dc694ed367d56a08dec2057b8e7b894a95fdb82f144c792",
        "b944af7d76c9ebea0e1642dde01bd0d080516f9a5a6f3c02a758c378bb79eb2b",
        "9f587af1096c3cb85fb39f436facd15b03c6b404441b6c869851d827729fd790",
    ),
    INNER: (
        "00bb8b7cbae259d39ef5c5bee76eb2486ec481f06e735872f313534ad1d6102e",
        "5e6a5177bf7012b902bd37c9ea50ecdf066540233270cbf9a3b910120f8b28d8",
    ),
}
#: the same texts as the previous release read them: no prefix, the exception it read named as it was
READ_BEFORE_AS_TEXT = {
    CRASH: "System.Exception\n" + FRAMES,
    INNER: INNER.replace(INNER.splitlines()[0] + "\n ---> ", ""),
}


def _types(trace: ParsedTrace | None) -> list[tuple[str, str, str]]:
    assert trace is not None
    return [(e.type, e.value, e.relation) for e in trace.exceptions]


@pytest.mark.parametrize("prefix", ["Unhandled exception. ", "Unhandled Exception: "])
def test_the_exception_after_the_unhandled_prefix_is_read_with_its_type_message_and_frames(
    prefix: str,
) -> None:
    trace = parse_stacktrace(CRASH.replace("Unhandled exception. ", prefix))
    without_prefix = parse_stacktrace(CRASH.removeprefix("Unhandled exception. "))
    assert trace is not None and without_prefix is not None
    assert _types(trace) == [("System.InvalidOperationException", "Sequence contains no elements", "raised")]
    assert trace.exceptions[0].frames == without_prefix.exceptions[0].frames
    assert [f.function for f in trace.exceptions[0].frames] == [
        "ThrowNoElementsException",
        "First[TSource]",
        "Checkout",
        "Main",
    ]
    assert trace.notes == (UNHANDLED,)


@pytest.mark.parametrize("text", [INNER, INNER_ON_ONE_LINE])
def test_the_inner_exception_after_the_prefix_is_read_as_inner_with_its_own_frames(text: str) -> None:
    trace = parse_stacktrace(text)
    assert trace is not None
    assert [(t, r) for t, _, r in _types(trace)] == [
        ("System.AggregateException", "raised"),
        ("System.InvalidOperationException", "inner"),
    ]
    assert trace.exceptions[0].value.startswith("One or more errors occurred.")
    outer, inner = ([f.function for f in e.frames] for e in trace.exceptions)
    assert (outer, inner) == (["Wait", "Main"], ["Run"])


@pytest.mark.parametrize(
    ("text", "read"),
    [
        (  # Mono prints the prefix on a line of its own: the next line is the exception, as before
            "Unhandled Exception:\nSystem.TypeLoadException: Could not load type 'Shop.Plugin'\n" + FRAMES,
            [("System.TypeLoadException", "Could not load type 'Shop.Plugin'", "raised")],
        ),
        (  # no exception's header after the prefix
            "Unhandled exception. See the log above\n" + FRAMES,
            [("System.Exception", "", "raised")],
        ),
        (  # an exception read before the prefixed line: the prefix is the exception's text, as before
            "System.ApplicationException: wrapper\nUnhandled exception. System.InvalidOperationException: x\n"
            + FRAMES,
            [
                (
                    "System.ApplicationException",
                    "wrapper Unhandled exception. System.InvalidOperationException: x",
                    "raised",
                )
            ],
        ),
    ],
)
def test_a_text_without_the_prefix_before_its_exception_is_read_as_before(
    text: str, read: list[tuple[str, str, str]]
) -> None:
    trace = parse_stacktrace(text)
    assert _types(trace) == read
    assert trace is not None and not trace.notes and as_read_before(trace) is None


def test_the_previous_reading_is_without_the_exception_the_prefix_hid() -> None:
    crash, inner = parse_stacktrace(CRASH), parse_stacktrace(INNER)
    assert crash is not None and inner is not None
    assert as_read_before(crash) == ParsedTrace(
        "dotnet", (ParsedException("System.Exception", "", crash.exceptions[0].frames),)
    )
    assert as_read_before(inner) == ParsedTrace(
        "dotnet", (ParsedException("System.InvalidOperationException", "boom", inner.exceptions[1].frames),)
    )
    assert as_read_before(inner) == parse_stacktrace(READ_BEFORE_AS_TEXT[INNER])


def _event(n: int, stacktrace: str | None, message: str = "Sequence contains no elements") -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="System.InvalidOperationException",
        message=message,
        stacktrace=stacktrace,
    )


@pytest.mark.parametrize("text", [CRASH, INNER])
def test_the_pinned_hashes_are_those_the_previous_reading_gives(text: str) -> None:
    """What this version gives the text as the previous release read it is what that release stored: the
    pinned hashes stand for its signature."""
    engine = GroupingEngine()
    made = engine.assign(_event(0, READ_BEFORE_AS_TEXT[text]))
    assert tuple(engine.state(made.signature_id).hashes) == PREVIOUS_RELEASE_HASHES[text]


@pytest.mark.parametrize("how", ["given", "looked up"])
@pytest.mark.parametrize("text", [CRASH, INNER])
def test_a_signature_the_previous_release_made_from_the_crash_keeps_receiving_it(text: str, how: str) -> None:
    engine = engine_knowing(
        "sig_before", service="shop", title="Exception", hashes=PREVIOUS_RELEASE_HASHES[text], how=how
    )
    found = engine.assign_all([_event(1, text), _event(2, text)])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)
    # and it is registered under this version's hashes too, so the next round finds it by them
    registered = engine.state("sig_before").hashes
    assert set(PREVIOUS_RELEASE_HASHES[text]) < set(registered)
    assert found[0].fingerprint_hash in registered


def test_without_a_signature_before_the_crash_starts_one_of_its_own_type() -> None:
    found = GroupingEngine().assign_all([_event(1, CRASH), _event(2, CRASH)])
    assert found[0].signature_id == found[1].signature_id and found[0].tier == "new"
    assert found[0].fingerprint_hash not in PREVIOUS_RELEASE_HASHES[CRASH]
    assert "InvalidOperationException" in found[0].explanation


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_crash_whose_frames_the_previous_release_did_not_read_keeps_going_to_its_message_signature(
    how: str,
) -> None:
    """The previous release read only the frameless inner exception: the event went to its message's
    template, and that signature keeps receiving it."""
    message = "One or more errors occurred. (boom)"
    assert NEWLY_READ in (parse_stacktrace(INNER_WITHOUT_FRAMES) or ParsedTrace("dotnet", ())).notes
    before = GroupingEngine()
    made = before.assign(
        _event(0, None, message)
    )  # (what a trace with no frame read gave: the message alone)
    saved = [before.state(made.signature_id)]
    engine = GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))
    found = engine.assign_all(
        [_event(1, INNER_WITHOUT_FRAMES, message), _event(2, INNER_WITHOUT_FRAMES, message)]
    )
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}
