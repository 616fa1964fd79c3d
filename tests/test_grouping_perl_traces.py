"""Perl's errors as `die` prints them (` at FILE line N.`, perldoc -f die) and as Carp's `confess` and `cluck`
print them (`\tSUB(ARGS) called at FILE line N`, Carp.pm): one crash site is one signature, two behind one
message are two, arguments are never part of a frame, core modules are a library's, and a signature an
earlier release made from the message (it read no frame) keeps receiving them."""

from __future__ import annotations

import pytest
from crash_texts import crash_event, placed_by_engines_knowing_an_earlier_signature, signatures_of

from rounds_bot.grouping import stacktrace
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace
from rounds_bot.models import ErrorEvent

MESSAGE = 'Can\'t call method "id" on an undefined value'


def _confessed(module: str, sub: str, line: int, address: int, depth: int = 1) -> str:
    handler = "/app/lib/Shop/Handler.pm"
    lines = [f"{MESSAGE} at /app/lib/Shop/{module}.pm line {line}."]
    lines.append(
        f"\tShop::{module}::{sub}(Shop::{module}=HASH(0x{address:x}), 3) called at {handler} line 20"
    )
    lines += [
        f"\tShop::Handler::dispatch(Shop::Handler=HASH(0x{address + i:x})) called at {handler} line {30 + i}"
        for i in range(depth)
    ]
    lines.append("\tmain::run() called at /app/bin/shop.pl line 8")
    return "\n".join(lines) + "\n"


def _died(module: str, line: int, handle: str = "") -> str:
    return f"Died at /app/lib/Shop/{module}.pm line {line}{handle}.\n"


def _event(n: int, stacktrace: str, message: str = MESSAGE) -> ErrorEvent:
    return crash_event(n, stacktrace, error_type="die", message=message)


def test_a_confessed_trace_is_read_innermost_first_without_its_arguments() -> None:
    trace = parse_stacktrace(_confessed("Cart", "total", 42, 0x55D4C1A2B3C4))
    assert trace is not None and trace.runtime == "perl"
    error = trace.exceptions[0]
    assert (error.type, error.value) == ("die", MESSAGE)
    assert error.frames == (
        Frame("total", module="Shop::Cart", filename="/app/lib/Shop/Cart.pm", lineno=42),
        Frame("dispatch", module="Shop::Handler", filename="/app/lib/Shop/Handler.pm", lineno=20),
        Frame("run", module="main", filename="/app/lib/Shop/Handler.pm", lineno=30),
        Frame(None, filename="/app/bin/shop.pl", lineno=8),
    )


@pytest.mark.parametrize("handle", ["", ", <STDIN> line 5", ", <$fh> chunk 3"])
def test_a_bare_die_line_is_left_to_its_message(handle: str) -> None:
    """A `die` or `croak` line names a file and no sub: read as a frame, every bug died in one module
    would be one problem; left to its message, two messages stay two."""
    assert parse_stacktrace(_died("Cart", 42, handle)) is None


def test_two_bugs_died_in_one_module_are_two_problems() -> None:
    texts = (
        f"{MESSAGE} at /app/lib/Shop/Cart.pm line 42.\n",
        "Not a HASH reference at /app/lib/Shop/Cart.pm line 97.\n",
    )
    messages = (MESSAGE, "Not a HASH reference")
    ids = signatures_of(texts, lambda n, text: _event(n, text, messages[n]))
    assert ids[0] != ids[1]


def test_a_valgrind_report_around_a_perl_error_is_read_as_valgrinds() -> None:
    text = "\n".join(
        (
            "==123== Invalid read of size 4",
            "==123==    at 0x10916C: parse (parser.c:42)",
            "==123==    by 0x1091A2: main (main.c:5)",
            f"{MESSAGE} at /app/x.pl line 3.",
            "\tmain::run() called at /app/x.pl line 8",
        )
    )
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "native"


def test_a_string_evals_number_is_no_part_of_its_frame() -> None:
    """`(eval N)` counts the string evals the process ran so far: another N is the same code."""
    text = f"{MESSAGE} at (eval 1234) line 5.\n\tmain::run() called at /app/x.pl line 8\n"
    trace = parse_stacktrace(text)
    assert trace is not None and trace.exceptions[0].frames[0].filename == "(eval)"


def test_a_long_text_of_die_lines_is_read_to_its_one_carp_trace() -> None:
    # (its time, linear since the callers are collected once, is measured by hand, not here)
    text = "x at /a line 1.\n" * 19_000 + "y at /a.pl line 2.\n\tmain::f(1) called at /app/x.pl line 2\n"
    text += "a line b at " + "/" * 5000 + "z\n"
    trace = parse_stacktrace(text)
    assert trace is not None and trace.exceptions[0].frames[0].lineno == 2


def test_prose_ending_in_a_line_number_is_no_perl_error() -> None:
    assert parse_stacktrace("Meet me at the station line 4.\nthanks") is None


@pytest.mark.parametrize(
    "path",
    [
        "/usr/local/share/perl/5.36.0/JSON.pm",
        "/usr/local/lib/x86_64-linux-gnu/perl/5.36.0/DBI.pm",
        "/usr/lib/aarch64-linux-gnu/perl/5.36/DBI.pm",
        "/System/Library/Perl/5.30/Carp.pm",
        "C:\\Strawberry\\perl\\site\\lib\\DBI.pm",
        "/app/local/lib/perl5/Mojo/Base.pm",
    ],
)
def test_an_installed_modules_frame_is_a_librarys(path: str) -> None:
    assert InAppRules().decide(Frame("f", filename=path, lineno=1), "perl")[0] is False


def test_a_directory_ending_in_perl5_is_the_apps() -> None:
    assert InAppRules().decide(Frame("f", filename="/home/deploy/myperl5/lib/Shop.pm", lineno=1), "perl")[0]


def test_a_core_modules_frame_is_a_librarys() -> None:
    frame = Frame("confess", module="Carp", filename="/usr/share/perl/5.36/Carp.pm", lineno=289)
    assert InAppRules().decide(frame, "perl")[0] is False
    assert InAppRules().decide(Frame("total", filename="/app/lib/Shop/Cart.pm", lineno=4), "perl")[0] is True


@pytest.mark.parametrize(
    "texts",
    [
        (
            _confessed("Cart", "total", 42, 0x55D4C1A2B3C4),
            _confessed("Cart", "total", 42, 0x56E4C1A2C3C4, depth=3),
            _confessed("Order", "discount", 17, 0x55D4C1A2B3C4),
        ),
    ],
)
def test_one_crash_site_is_one_signature_and_two_behind_one_message_are_two(texts: tuple[str, ...]) -> None:
    ids = signatures_of(texts, _event)
    assert ids[0] == ids[1] != ids[2]


def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No release before read Perl's errors (none recognised their lines): their events went to their
    message's template, and that signature keeps receiving them (it is not split into trace signatures,
    which would file duplicates)."""
    texts = [
        _confessed("Cart", "total", 42, 0x1),
        _confessed("Cart", "total", 42, 0x2, depth=3),
        _confessed("Order", "discount", 17, 1),
    ]
    made, found = placed_by_engines_knowing_an_earlier_signature(
        monkeypatch, stacktrace, "_script_runtime", lambda lines: None, texts, _event
    )
    for placed in found.values():
        assert placed == [(made, "fingerprint")] * 2


def test_an_anonymous_subs_frame_is_named_without_its_arguments_or_where_it_was_defined() -> None:
    # the debugger's name for an anonymous sub (`$^P & 0x200`), and Carp's `(unknown)`
    def text(address: int) -> str:
        return (
            "oops at /app/x.pl line 3.\n"
            f"\tmain::__ANON__[/app/x.pl:5](HASH(0x{address:x})) called at /app/x.pl line 9\n"
            f"\t(unknown)(HASH(0x{address:x})) called at /app/x.pl line 12\n"
        )

    first, second = (parse_stacktrace(text(address)) for address in (0x55D4C1A2B3C4, 0x77AA11223344))
    assert first is not None and first == second
    assert [frame.function for frame in first.exceptions[0].frames] == ["__ANON__", "(unknown)", None]


def test_a_later_carp_block_is_another_errors_not_this_traces() -> None:
    text = (
        "Deprecated call at /app/lib/A.pm line 5.\n\tA::old() called at /app/x.pl line 3\n"
        "Can't locate object method at /app/lib/B.pm line 9.\n\tB::run() called at /app/x.pl line 10\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert [(f.function, f.filename, f.lineno) for f in trace.exceptions[0].frames] == [
        ("old", "/app/lib/A.pm", 5),
        (None, "/app/x.pl", 3),
    ]
