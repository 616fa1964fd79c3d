"""Rust panics whose backtrace names no Rust code: printed without one (`RUST_BACKTRACE` unset, the default),
or by a stripped binary (an empty short backtrace, a full one of `<unknown>` frames). The panic location is
then the trace's frame: one panic site is one signature, whatever the message's values, the thread or the
header's layout, and two sites are two, however generic their message. A `<unknown>` frame is no one's
code. A signature an earlier release made from such a panic keeps receiving its events: by its message's
template, when it read no frame there, or by the `<unknown>` frames it read as the app's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import KnownStates, engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import (
    Frame,
    ParsedException,
    ParsedTrace,
    as_read_before,
    parse_stacktrace,
)
from rounds_bot.grouping.stacktrace.model import NEWLY_READ
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
UNWRAP = "called `Option::unwrap()` on a `None` value"
NO_BACKTRACE_NOTE = "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
SHORT_NOTE = "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace."


def _without_backtrace(location: str, message: str = UNWRAP, thread: str = "'main'") -> str:
    """The default panic hook's output since Rust 1.73, with `RUST_BACKTRACE` unset."""
    return f"thread {thread} panicked at {location}:\n{message}\n{NO_BACKTRACE_NOTE}\n"


def _before_rust_1_73(location: str, message: str = UNWRAP) -> str:
    return f"thread 'main' panicked at '{message}', {location}\n{NO_BACKTRACE_NOTE}\n"


def _stripped_short(location: str, message: str = UNWRAP) -> str:
    """`RUST_BACKTRACE=1` in a stripped binary: the short backtrace starts at a symbol it cannot name."""
    return f"thread 'main' panicked at {location}:\n{message}\nstack backtrace:\n{SHORT_NOTE}\n"


def _stripped_full(
    location: str,
    message: str = UNWRAP,
    base: int = 0x55D4A1B20000,
    tail: str = "",
    thread: str = "'tokio-runtime-worker'",
) -> str:
    """`RUST_BACKTRACE=full` in a stripped binary (`-Cstrip=symbols`): an address and `<unknown>` a frame."""
    frames = "".join(f"  {i:2}:     {base + 0x1F3 * i:#x} - <unknown>\n" for i in range(14))
    return f"thread {thread} panicked at {location}:\n{message}\nstack backtrace:\n{frames}{tail}"


#: a stripped binary's frames among named ones: a C library's symbols, which the binary's stripping keeps
NAMED_TAIL = "  14:     0x7f3c2a894ac3 - start_thread\n  15:     0x7f3c2a926850 - clone3\n"
STRIPPED = _stripped_full("src/orders.rs:42:31")
#: the hashes the previous release stored for a signature it made from `STRIPPED` (its `GroupingEngine`
#: assigned an event of service `shop` with that stack trace, and its `state` of the signature held these)
PREVIOUS_RELEASE_HASHES = (
    "3eef804df548eb323347ef6cf0f7d32a486a5cdb839cd7c73c77294456a04866",
    "80ab13fe9a1e17a8bbb6cbacf1c255847a248eb9033e70808cf58b2f8b425759",
)


def _event(n: int, stacktrace: str | None, message: str = UNWRAP) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="panic",
        message=message,
        stacktrace=stacktrace,
    )


def _signatures(texts: list[str]) -> list[str]:
    found = GroupingEngine().assign_all([_event(n, text) for n, text in enumerate(texts)])
    return [assignment.signature_id for assignment in found]


def _frames(text: str) -> list[tuple[str | None, str | None, int | None]]:
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "rust"
    return [(f.module, f.function, f.lineno) for f in trace.exceptions[0].frames]


@pytest.mark.parametrize(
    "text",
    [
        _without_backtrace("src/orders.rs:42:17"),
        _without_backtrace("src/orders.rs:42:17", thread="'tokio-runtime-worker' (12345)"),
        _without_backtrace("src/orders.rs:42:17", thread="'<unnamed>'"),
        _before_rust_1_73("src/orders.rs:42:17"),
        _stripped_short("src/orders.rs:42:17"),
        "\n" + _without_backtrace("src/orders.rs:42:17"),  # the newest hook starts with a new line
    ],
)
def test_the_panic_location_is_the_frame_of_a_panic_without_a_backtrace(text: str) -> None:
    assert _frames(text) == [("src/orders.rs", "line 42", 42)]
    trace = parse_stacktrace(text)
    assert trace is not None and trace.exceptions[0].value == UNWRAP
    role = InAppRules().roles(trace).frames[0][0]
    assert role.role == "app"


def test_a_message_of_several_lines_before_rust_1_73_ends_at_its_location() -> None:
    message = "assertion failed: `(left == right)`\n  left: `1`,\n right: `2`"
    trace = parse_stacktrace(_before_rust_1_73("src/cart.rs:9:5", message))
    assert trace is not None
    assert trace.exceptions[0].value == message
    assert [(f.module, f.function) for f in trace.exceptions[0].frames] == [("src/cart.rs", "line 9")]


def test_panics_at_different_sites_are_different_signatures_however_generic_their_message() -> None:
    sites = ["src/orders.rs:42:31", "src/refunds.rs:88:14", "src/orders.rs:97:31"]
    texts = [_without_backtrace(site) for site in sites]
    texts += [_before_rust_1_73("src/auth.rs:7:22"), _stripped_short("src/stock.rs:5:9")]
    assert len(set(_signatures(texts))) == len(texts)


def test_one_panic_site_is_one_signature_whatever_its_values_thread_or_header() -> None:
    site = "src/cart.rs:17:9"
    texts = [
        _without_backtrace(site, "index out of bounds: the len is 3 but the index is 5"),
        _without_backtrace(
            site, "index out of bounds: the len is 8 but the index is 12", thread="'w' (4031)"
        ),
        _before_rust_1_73(site, "index out of bounds: the len is 0 but the index is 0"),
        _stripped_short(site, "index out of bounds: the len is 2 but the index is 2"),
    ]
    assert len(set(_signatures(texts))) == 1


def test_a_stripped_binarys_unknown_frames_are_no_ones_and_the_location_decides() -> None:
    trace = parse_stacktrace(STRIPPED)
    assert trace is not None
    location, *unknown = trace.exceptions[0].frames
    assert (location.module, location.function) == ("src/orders.rs", "line 42")
    assert len(unknown) == 14 and set(unknown) == {Frame(function="<unknown>", in_app=False)}
    roles = InAppRules().roles(trace).frames[0]
    assert [role.role for role in roles] == ["app"] + ["library"] * 14
    texts = [
        STRIPPED,
        _stripped_full("src/orders.rs:42:31", base=0x5612F0C40000),  # another process: other addresses
        _stripped_full("src/cart.rs:17:9", "index out of bounds: the len is 3 but the index is 7"),
        _stripped_full("src/stock.rs:88:5", "attempt to subtract with overflow"),
    ]
    first, again, *others = _signatures(texts)
    assert first == again and len({first, *others}) == 3


def test_unknown_frames_among_named_ones_keep_their_place() -> None:
    frames = _frames(_stripped_full("src/orders.rs:42:31", tail=NAMED_TAIL))
    assert frames[0] == ("src/orders.rs", "line 42", 42)
    assert frames[1:] == [(None, "<unknown>", None)] * 14 + [
        (None, "start_thread", None),
        (None, "clone3", None),
    ]


def test_a_backtrace_that_names_rust_code_is_read_as_before() -> None:
    text = (
        "thread 'main' panicked at src/orders.rs:42:9:\n"
        f"{UNWRAP}\n"
        "stack backtrace:\n"
        "   0: rust_begin_unwind\n"
        "   1: core::panicking::panic_fmt\n"
        "   2: core::option::unwrap_failed\n"
        "   3: shop::orders::place\n"
        "             at ./src/orders.rs:42:9\n"
        f"{SHORT_NOTE}\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None and not trace.notes and as_read_before(trace) is None
    assert [f.function for f in trace.exceptions[0].frames] == [
        "rust_begin_unwind",
        "panic_fmt",
        "unwrap_failed",
        "place",
    ]


def test_a_panic_no_release_before_read_a_frame_in_is_noted_so() -> None:
    for text in (_without_backtrace("src/orders.rs:42:17"), _stripped_short("src/orders.rs:42:17")):
        trace = parse_stacktrace(text)
        assert trace is not None and trace.notes == (NEWLY_READ,) and as_read_before(trace) is None
    stripped = parse_stacktrace(STRIPPED)
    assert stripped is not None and not stripped.notes  # they read its frames: `as_read_before` says how


def test_the_previous_reading_has_the_unknown_frames_as_the_apps_and_no_location() -> None:
    for text in (STRIPPED, _stripped_full("src/orders.rs:42:31", tail=NAMED_TAIL)):
        trace = parse_stacktrace(text)
        assert trace is not None
        # as the previous release read `<unknown>`: a symbol `unknown` of a module `unknown`
        as_text = parse_stacktrace(text.replace("<unknown>", "unknown::unknown"))
        assert as_read_before(trace) == as_text
    stripped = parse_stacktrace(STRIPPED)
    assert stripped is not None
    read_before = Frame(function="unknown", module="unknown")
    assert as_read_before(stripped) == ParsedTrace(
        "rust", (ParsedException("panic", UNWRAP, (read_before,) * 14),)
    )


def test_the_pinned_hashes_are_those_the_previous_reading_gives() -> None:
    """What this version gives the text as the previous release read it is what that release stored: the
    pinned hashes stand for its signature."""
    engine = GroupingEngine()
    made = engine.assign(_event(0, STRIPPED.replace("<unknown>", "unknown::unknown")))
    assert tuple(engine.state(made.signature_id).hashes) == PREVIOUS_RELEASE_HASHES


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_the_previous_release_made_from_a_stripped_backtrace_keeps_receiving_it(how: str) -> None:
    engine = engine_knowing(
        "sig_before", service="shop", title="panic", hashes=PREVIOUS_RELEASE_HASHES, how=how
    )
    found = engine.assign_all([_event(1, STRIPPED), _event(2, _stripped_full("src/orders.rs:42:31", base=0))])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)
    # and it is registered under this version's hashes too, so the next round finds it by them
    assert found[0].fingerprint_hash in engine.state("sig_before").hashes


def test_without_a_signature_before_a_stripped_backtrace_starts_one_of_its_site() -> None:
    found = GroupingEngine().assign_all([_event(1, STRIPPED)])
    assert found[0].tier == "new" and found[0].fingerprint_hash not in PREVIOUS_RELEASE_HASHES
    assert "src/orders.rs line 42" in found[0].explanation


@pytest.mark.parametrize("how", ["given", "looked up"])
@pytest.mark.parametrize(
    "text",
    [
        _without_backtrace("src/refunds.rs:88:14"),
        _stripped_short("src/refunds.rs:88:14"),
        _without_backtrace("src/refunds.rs:88:14", thread="'tokio-runtime-worker' (12345)"),
        # no release before read a header with the thread's id, nor a backtrace without an `at` line alone
        _stripped_full("src/refunds.rs:88:14", thread="'tokio-runtime-worker' (12345)"),
    ],
)
def test_a_panic_the_previous_release_read_no_frame_in_keeps_going_to_its_message_signature(
    text: str, how: str
) -> None:
    """The previous release read no trace there: the event went to its message's template, and that
    signature keeps receiving it."""
    before = GroupingEngine()
    made = before.assign(_event(0, None))  # (what a trace with no frame read gave: the message alone)
    saved = [before.state(made.signature_id)]
    engine = GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))
    found = engine.assign_all([_event(1, text), _event(2, text)])
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}


@pytest.mark.parametrize(
    "at",
    [
        # a backtrace of no crate's symbols: the header's location is the frame
        "thread 'main' panicked at src/cart.rs:{}:5:\nboom\nstack backtrace:\n   0: rust_begin_unwind\n"
        "             at /rustc/07dca489ac2d933c78d3c5158e3f43beefeb02ce/library/std/src/panicking.rs"
        ":645:5\n",
        # a message of several lines before Rust 1.73: its last line's
        "thread 'main' panicked at 'assertion failed: `(left == right)`\n  left: `a`,\n right: `b`', "
        f"src/cart.rs:{{}}:5\n{NO_BACKTRACE_NOTE}\n",
    ],
)
def test_two_panics_whose_texts_differ_only_in_their_locations_line_are_two_signatures(at: str) -> None:
    """Texts of one shape (their digits aside) whose frame lines agree are read once: the line that prints
    the location is one of them, or the second panic would be read at the first one's line."""
    first, second = _signatures([at.format(4), at.format(9)])
    assert first != second


def test_under_a_header_with_the_threads_id_the_frames_releases_before_read_are_looked_up() -> None:
    """They did not read that header: they read the backtrace alone, from its first symbol with a path."""
    short = (
        "thread 'tokio-runtime-worker' (12345) panicked at src/orders.rs:42:9:\n"
        f"{UNWRAP}\n"
        "stack backtrace:\n"
        "   0: rust_begin_unwind\n"
        "   1: core::panicking::panic_fmt\n"
        "   2: shop::orders::place\n"
        "             at ./src/orders.rs:42:9\n"
        f"{SHORT_NOTE}\n"
    )
    trace = parse_stacktrace(short)
    assert trace is not None and not trace.notes
    assert [f.function for f in trace.exceptions[0].frames] == ["rust_begin_unwind", "panic_fmt", "place"]
    before, alone = as_read_before(trace), parse_stacktrace(short.split("\n", 1)[1])
    assert before is not None and alone is not None
    assert before.exceptions[0].frames == alone.exceptions[0].frames  # `panic_fmt`, `place`
    stripped = parse_stacktrace(_stripped_full("src/orders.rs:42:31", thread="'w' (12345)"))
    assert stripped is not None and stripped.notes == (NEWLY_READ,) and as_read_before(stripped) is None
