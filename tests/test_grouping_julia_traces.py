"""Julia's uncaught errors as the REPL and `julia script.jl` print them (base/errorshow.jl): `ERROR: ...`,
then `Stacktrace:` and numbered frames, `@ Module file:line` under each since Julia 1.6, ` at file:line` on
the frame's line before; `caused by:` chains. One crash site is one signature, two behind one message are
two, Base's and the standard library's frames are a library's, and a signature an earlier release made from
the message keeps receiving them."""

from __future__ import annotations

import pytest
from crash_texts import crash_event, placed_by_engines_knowing_an_earlier_signature, signatures_of

from rounds_bot.grouping import stacktrace
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace
from rounds_bot.models import ErrorEvent

MESSAGE = "attempt to access 5-element Vector{Int64} at index [9]"


def _julia(function: str, file: str, line: int, index: int = 9, depth: int = 1) -> str:
    lines = [
        f"ERROR: LoadError: BoundsError: attempt to access 5-element Vector{{Int64}} at index [{index}]",
        "Stacktrace:",
        " [1] getindex",
        "   @ ./essentials.jl:13 [inlined]",
        f" [2] {function}(x::Vector{{Int64}})",
        f"   @ Main /app/src/{file}.jl:{line}",
    ]
    for i in range(depth):
        lines += [f" [{3 + i}] run(n::Int64)", f"   @ Main /app/src/main.jl:{20 + i}"]
    lines.append("in expression starting at /app/src/main.jl:40")
    return "\n".join(lines) + "\n"


def _event(n: int, text: str, message: str = MESSAGE) -> ErrorEvent:
    return crash_event(n, text, error_type="BoundsError", message=message)


def test_a_julia_error_is_read_with_its_frames_innermost_first() -> None:
    trace = parse_stacktrace(_julia("total", "cart", 12))
    assert trace is not None and trace.runtime == "julia"
    error = trace.exceptions[0]
    assert (error.type, error.value) == ("BoundsError", MESSAGE)
    assert error.frames == (
        Frame("getindex", filename="./essentials.jl", lineno=13),
        Frame("total", module="Main", filename="/app/src/cart.jl", lineno=12),
        Frame("run", module="Main", filename="/app/src/main.jl", lineno=20),
    )


def test_the_layout_before_julia_1_6_is_read_alike() -> None:
    text = (
        "ERROR: LoadError: BoundsError: attempt to access 5-element Array{Int64,1} at index [9]\n"
        "Stacktrace:\n"
        " [1] getindex at ./array.jl:731 [inlined]\n"
        " [2] total(::Array{Int64,1}) at /app/src/cart.jl:12\n"
        " [3] top-level scope at none:0\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "julia"
    assert [(f.function, f.filename, f.lineno) for f in trace.exceptions[0].frames] == [
        ("getindex", "./array.jl", 731),
        ("total", "/app/src/cart.jl", 12),
        ("top-level scope", "none", 0),
    ]


def test_a_caused_by_chain_is_read_as_the_errors_cause() -> None:
    text = (
        'ERROR: KeyError: key "sku" not found\n'
        "Stacktrace:\n"
        " [1] lookup(d::Dict{String, Int64})\n"
        "   @ Main /app/src/cart.jl:30\n"
        "\n"
        "caused by: ArgumentError: invalid base 10 digit 'x' in \"1x\"\n"
        "Stacktrace:\n"
        " [1] parse(s::String)\n"
        "   @ Main /app/src/cart.jl:8\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert [(e.type, e.relation, e.frames[0].lineno) for e in trace.exceptions] == [
        ("KeyError", "raised", 30),
        ("ArgumentError", "cause", 8),
    ]


def test_an_anonymous_functions_number_is_no_part_of_its_frame() -> None:
    def text(number: int) -> str:
        call = f'(::var"#{number}#{number + 1}")(x::Int64)'
        return f"ERROR: oops\nStacktrace:\n [1] {call}\n   @ Main /app/x.jl:3\n"

    first, second = (parse_stacktrace(text(n)) for n in (3, 17))
    assert first is not None and first == second


@pytest.mark.parametrize(
    ("frame", "in_app"),
    [
        (Frame("getindex", module="Base", filename="./array.jl", lineno=861), False),
        (
            Frame(
                "mul!",
                module="LinearAlgebra",
                filename="/usr/share/julia/stdlib/v1.10/LinearAlgebra/src/m.jl",
            ),
            False,
        ),
        (
            Frame("f", module="DataFrames", filename="~/.julia/packages/DataFrames/58MUJ/src/x.jl", lineno=2),
            False,
        ),
        (Frame("total", module="Main", filename="/app/src/cart.jl", lineno=12), True),
    ],
)
def test_base_the_standard_library_and_installed_packages_are_a_librarys(frame: Frame, in_app: bool) -> None:
    assert InAppRules().decide(frame, "julia")[0] is in_app


def test_one_crash_site_is_one_signature_and_two_behind_one_message_are_two() -> None:
    texts = (
        _julia("total", "cart", 12),
        _julia("total", "cart", 12, index=7, depth=3),
        _julia("tax", "order", 40),
    )
    ids = signatures_of(texts, _event)
    assert ids[0] == ids[1] != ids[2]


def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = [
        _julia("total", "cart", 12),
        _julia("total", "cart", 12, index=4, depth=3),
        _julia("tax", "order", 40),
    ]
    made, found = placed_by_engines_knowing_an_earlier_signature(
        monkeypatch, stacktrace, "_script_runtime", lambda lines: None, texts, _event
    )
    for placed in found.values():
        assert placed == [(made, "fingerprint")] * 2


def _task_failure(function: str, file: str, levels: int = 1) -> str:
    """A task's error as `fetch`/`wait` rethrow it (base/task.jl: each `nested task error:` indented four
    more spaces per level)."""
    lines = [
        "ERROR: TaskFailedException",
        "Stacktrace:",
        " [1] wait",
        "   @ ./task.jl:345 [inlined]",
        " [2] fetch",
        "   @ ./task.jl:360 [inlined]",
        " [3] main()",
        "   @ Main /app/src/main.jl:10",
    ]
    for level in range(1, levels):
        pad = "    " * level
        lines += ["", f"{pad}nested task error: TaskFailedException", f"{pad}Stacktrace:"]
        lines += [f"{pad} [1] wait", f"{pad}   @ ./task.jl:345 [inlined]"]
        lines += [f'{pad} [2] (::var"#3#4")()', f"{pad}   @ Main /app/src/main.jl:{14 + level}"]
    pad = "    " * levels
    lines += [
        "",
        f"{pad}nested task error: BoundsError: attempt to access 3-element Vector{{Int64}} at index [5]",
        f"{pad}Stacktrace:",
        f"{pad} [1] getindex",
        f"{pad}   @ ./array.jl:861 [inlined]",
        f"{pad} [2] {function}()",
        f"{pad}   @ Main /app/src/{file}.jl:12",
        f'{pad} [3] (::var"#1#2")()',
        f"{pad}   @ Main /app/src/main.jl:8",
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("levels", [1, 3])
def test_a_failed_tasks_innermost_nested_error_is_the_exception(levels: int) -> None:
    trace = parse_stacktrace(_task_failure("total", "cart", levels))
    assert trace is not None and trace.runtime == "julia"
    assert [(e.type, e.value) for e in trace.exceptions] == [
        ("BoundsError", "attempt to access 3-element Vector{Int64} at index [5]")
    ]
    assert [(f.function, f.filename, f.lineno) for f in trace.exceptions[0].frames] == [
        ("getindex", "./array.jl", 861),
        ("total", "/app/src/cart.jl", 12),
        ("##", "/app/src/main.jl", 8),
    ]


def test_two_task_bugs_at_two_sites_are_two_problems() -> None:
    texts = (_task_failure("total", "cart"), _task_failure("tax", "order"))
    ids = signatures_of(texts, lambda n, text: _event(n, text, "TaskFailedException"))
    assert ids[0] != ids[1]


@pytest.mark.parametrize("parameter", ["Int64", "Float64"])
def test_a_closure_is_named_without_its_type_parameters(parameter: str) -> None:
    text = (
        "ERROR: oops\nStacktrace:\n"
        f' [1] (::var"#7#8"{{{parameter}}})(y::{parameter})\n   @ Main /app/src/cart.jl:12\n'
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert trace.exceptions[0].frames[0].function == "##"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (["ERROR: StackOverflowError:"], ("StackOverflowError", "")),
        (
            ["ERROR: DomainError with -1.0:", "sqrt was called with a negative real argument"],
            ("DomainError", "-1.0: sqrt was called with a negative real argument"),
        ),
    ],
)
def test_a_headers_type_is_read_whatever_showerror_prints_after_it(
    header: list[str], expected: tuple[str, str]
) -> None:
    text = "\n".join(
        [*header, "Stacktrace:", " [1] f(n::Int64) (repeats 79984 times)", "   @ Main /app/x.jl:1"]
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert (trace.exceptions[0].type, trace.exceptions[0].value) == expected


def test_a_repl_frame_is_the_apps() -> None:
    frame = Frame("top-level scope", module="Main", filename="./REPL[1]", lineno=1)
    assert InAppRules().decide(frame, "julia")[0] is True


def test_a_c_programs_numbered_log_lines_are_not_julias() -> None:
    assert parse_stacktrace("[1] error at main.c:12\n[2] warn at util.c:40\n") is None


@pytest.mark.parametrize(
    ("path", "in_app"),
    [
        ("/opt/julia/packages/CSV/jFiCn/src/file.jl", False),
        ("/root/.julia/packages/CSV/jFiCn/src/file.jl", False),
        ("/depot/packages/DataFrames/58MU/src/x.jl", False),
        ("/opt/julia/dev/Shop/src/cart.jl", True),
        ("/app/src/packages/cart.jl", True),
    ],
)
def test_a_package_in_any_depot_is_a_librarys_and_a_developed_one_the_apps(path: str, in_app: bool) -> None:
    frame = Frame("parse", module="CSV", filename=path, lineno=12)
    assert InAppRules().decide(frame, "julia")[0] is in_app


def _logged(function: str, file: str, line: int, index: int = 5) -> str:
    """An error logged by `@error "..." exception=(e, catch_backtrace())`, in Logging's ConsoleLogger box."""
    return (
        "┌ Error: checkout failed\n"
        "│   exception =\n"
        f"│    BoundsError: attempt to access 3-element Vector{{Int64}} at index [{index}]\n"
        "│    Stacktrace:\n"
        "│     [1] getindex\n"
        "│       @ ./array.jl:861 [inlined]\n"
        f"│     [2] {function}(x::Vector{{Int64}})\n"
        f"│       @ Main /app/src/{file}.jl:{line}\n"
        "└ @ Main /app/src/main.jl:20\n"
    )


def test_an_error_logged_in_the_console_loggers_box_is_read() -> None:
    trace = parse_stacktrace(_logged("total", "cart", 12))
    assert trace is not None and trace.runtime == "julia"
    error = trace.exceptions[0]
    assert (error.type, error.value) == (
        "BoundsError",
        "attempt to access 3-element Vector{Int64} at index [5]",
    )
    assert error.frames == (
        Frame("getindex", module=None, filename="./array.jl", lineno=861),
        Frame("total", module="Main", filename="/app/src/cart.jl", lineno=12),
    )


def test_two_logged_errors_at_two_sites_are_two_problems_and_at_one_one() -> None:
    texts = (_logged("total", "cart", 12), _logged("total", "cart", 12, index=9), _logged("tax", "order", 40))
    ids = signatures_of(texts, _event)
    assert ids[0] == ids[1] != ids[2]
