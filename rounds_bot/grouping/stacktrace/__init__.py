"""Stack-trace parsers, one module per runtime, behind one function: `parse_stacktrace`.

The runtime is recognised from the text itself (OpenTelemetry's `exception.stacktrace` is the
runtime's own format). A text no parser understands gives None, never an error: grouping then
falls back to the exception type and message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from rounds_bot.grouping.stacktrace import (
    browser,
    dart,
    dotnet,
    dotnet_aggregate,
    elixir,
    go,
    haskell,
    hotspot_error,
    java,
    julia,
    logcat,
    lua,
    native,
    node,
    node_fatal,
    node_report,
    ocaml,
    perl,
    php,
    powershell,
    python,
    python_groups,
    ruby,
    rust,
    swift_backtrace,
    ubsan,
    unread_reports,
    valgrind,
)
from rounds_bot.grouping.stacktrace.model import (
    NEWLY_READ,
    Frame,
    ParsedException,
    ParsedTrace,
    Runtime,
    trace_lines,
)
from rounds_bot.grouping.stacktrace.reading import memoised_by_line

__all__ = [
    "Frame",
    "LineVotes",
    "ParsedException",
    "ParsedTrace",
    "Runtime",
    "as_read_before",
    "detect_runtime",
    "frame_lines",
    "line_votes",
    "parse_stacktrace",
]

#: the lines read first to recognise a trace's runtime
_HEAD_LINES = 60
_GO_FILE = re.compile(r"^\s+\S+\.go:\d+(?: \+0x[0-9a-f]+)?" + go.FRAME_POINTERS + "$")
_RUBY_FRAME = re.compile(r"\.rb:\d+:in [`']")
#: (Elixir's frames, and Erlang's as `erl_error` prints them, `x.erl:12` or before OTP 24 `x.erl, line 12`,
#: and in a term, `{file,"x.erl"}`: `erlang`)
_ELIXIR_FILES = (".ex:", ".exs:", ".erl:", ".erl, line ", ".ex, line ", '.erl"', '.ex"', '.exs"')
_OCAML_FRAME = re.compile(r"^\s*(?:Raised at|Called from|Re-raised at|Raised by primitive operation at) ")
#: the words an OCaml frame line starts with (after its white space)
_OCAML_WORDS = ("Raised ", "Called ", "Re-raised ")

_PARSERS = {
    "python": python_groups.parse,
    "java": java.parse,
    "node": node.parse_with_fatal_errors,
    "go": go.parse,
    "dotnet": dotnet_aggregate.parse,
    "ruby": ruby.parse,
    "ocaml": ocaml.parse,
    "rust": rust.parse,
    "php": php.parse,
    "elixir": elixir.parse,
    "native": swift_backtrace.parse,  # Swift's backtracer's reports, then `native`'s layouts
    "dart": dart.parse,
    "perl": perl.parse,
    "powershell": powershell.parse,
    "julia": julia.parse,
    "haskell": haskell.parse,
    "lua": lua.parse,
}

#: per runtime, whether a line prints a frame
_FRAME_LINE_TESTS: dict[Runtime, Callable[[str], bool]] = {
    "python": python.is_frame_line,
    "java": java.is_frame_line,
    "node": node.is_frame_line,
    "go": go.is_frame_line,
    "dotnet": dotnet.is_frame_line,
    "ruby": ruby.is_frame_line,
    "ocaml": ocaml.is_frame_line,
    "rust": rust.is_frame_line,
    "php": php.is_frame_line,
    "elixir": elixir.is_frame_line,
    # (a stackless UBSan diagnostic's line is its site: texts differing there must not share a parse)
    "native": lambda line: (
        native.is_frame_line(line)
        or swift_backtrace.is_frame_line(line)
        or valgrind.is_frame_line(line)
        or ubsan.is_diagnostic_line(line)
    ),
    "dart": dart.is_frame_line,
    "perl": perl.is_frame_line,
    "powershell": powershell.is_frame_line,
    "julia": julia.is_frame_line,
    "haskell": haskell.is_frame_line,
    "lua": lua.is_frame_line,
}
#: the same, kept per line: a bug's frame lines recur in every
#: occurrence's trace)
_FRAME_LINES = {runtime: memoised_by_line(test) for runtime, test in _FRAME_LINE_TESTS.items()}


def detect_runtime(lines: list[str]) -> Runtime | None:
    """The runtime whose frame syntax the trace's lines use most: its first lines decide when
    they show a frame; otherwise every line is looked at (up to `MAX_TRACE_LINES`), as an
    assertion may print a dump of any length before the first frame."""
    return (
        _runtime_of_lines(lines[:_HEAD_LINES])
        or (_runtime_of_lines(lines[_HEAD_LINES:]) if len(lines) > _HEAD_LINES else None)
        or _script_runtime(lines)
    )


def _script_runtime(lines: list[str]) -> Runtime | None:
    """Perl's or PowerShell's, for a text in which no other runtime's frame is found, then Julia's, GHC's or
    Lua's: their lines are asked last and apart, so a text another runtime's parser read before reads as
    before (`perl`, `powershell`, and the three newer ones after those two); never for a Valgrind report,
    which `valgrind` reads when no runtime does."""
    if any(valgrind.is_frame_line(line) for line in lines):
        return None
    for line in lines:
        if perl.looks_like_perl_line(line):
            return "perl"
        if powershell.looks_like_powershell_line(line):
            return "powershell"
    return next((runtime for line in lines if (runtime := _newer_script_line(line)) is not None), None)


def _newer_script_line(line: str) -> Runtime | None:
    """Julia's, GHC's or Lua's frame line (each tested only when a substring its lines need is there)."""
    if ("@ " in line or " at " in line) and julia.looks_like_julia_line(line):
        return "julia"
    if ", called at " in line and haskell.looks_like_haskell_line(line):
        return "haskell"
    if ": in " in line and lua.looks_like_lua_line(line):
        return "lua"
    return None


def _runtime_of_lines(lines: list[str]) -> Runtime | None:
    if any(python.HEADER in line or python.looks_like_frame(line) for line in lines):
        return "python"
    votes: dict[Runtime, int] = {}
    unread = len(lines)
    for line in lines:
        unread -= 1
        runtime = _runtime_of_line(line)
        if runtime is not None:
            count = votes[runtime] = votes.get(runtime, 0) + 1
            # a lead the unread lines cannot make up decides it now: a trace's frames, one runtime's, are
            # most of its lines (the count is compared to the others' only once it outnumbers those lines)
            if count > unread and all(count > n + unread for r, n in votes.items() if r != runtime):
                return runtime
    if not votes:
        return None
    return max(votes, key=lambda r: votes[r])


def runtime_of_line(line: str) -> Runtime | None:
    """The runtime whose frame syntax one line shows, if any (`detect_runtime` counts these)."""
    # The runtimes most traces come from are tried first; a newer one only when a cheap substring allows it.
    stripped = line.lstrip()
    if stripped.startswith("at "):
        if ".rs:" in line and rust.looks_like_rust_line(line):
            return "rust"  # before V8's, whose bare `at file:line:col` frames look the same
        if java.looks_like_jvm_frame(line):
            return "java"
        if node.looks_like_v8_frame(line):
            return "node"
        if dotnet.looks_like_dotnet_frame(line):
            return "dotnet"
        if ".php" in line and php.looks_like_php_line(line):
            return "php"
        return None
    # Each pattern below is tried only when a substring it needs is there (a Go file line starts with white
    # space, a Ruby frame holds `.rb:`, an OCaml one starts with a word of its phrases, every Elixir marker
    # holds `.e`, a browser's `fn@url:line:col` frame holds `@`): a message's line, asked of every repeat
    # of a trace (`trace_cut`), is then read in a few substring tests.
    if stripped.startswith("goroutine ") or (len(stripped) < len(line) and _GO_FILE.match(line)):
        return "go"
    if ".rb:" in line and _RUBY_FRAME.search(line):
        return "ruby"
    if stripped.startswith(_OCAML_WORDS) and _OCAML_FRAME.match(line):
        return "ocaml"
    if stripped.startswith("thread '") and rust.looks_like_rust_line(line):
        return "rust"
    if stripped.startswith(("#", "PHP ")) and php.looks_like_php_line(line):
        return "php"
    if (
        ".e" in line
        and any(marker in line for marker in _ELIXIR_FILES)
        and elixir.looks_like_elixir_frame(line)
    ):
        return "elixir"
    if "@" in line and browser.looks_like_frame(line):
        return "node"  # Firefox's or Safari's frame of the same language (`fn@url:line:col`)
    if _may_be_native(stripped) and native.looks_like_frame(line):
        return "native"
    # Tried last, so no line another runtime claims changes hands: Dart's frames hold `.dart` (a numbered one
    # is neither PHP's nor a native one), a Node fatal error's native frames start with their number and `: `.
    if ".dart" in line and dart.looks_like_frame(line):
        return "dart"
    if stripped[:1].isdigit() and ": " in stripped[:6] and node_fatal.is_fatal_frame(line):
        return "node"
    return None


def _may_be_native(stripped: str) -> bool:
    """Whether a line may print a native frame (`native.py`'s layouts): numbered (`#3 `, `3# `, Apple's
    `3   image   0x...`), or glibc's `module(function+0x1c) [0x400a3c]`. (Valgrind's lines cast no vote: its
    report is read only when no runtime's is, `parse_stacktrace`.)"""
    first = stripped[:1]
    return (
        first == "#" or (first.isdigit() and ("# " in stripped[:8] or " 0x" in stripped)) or "[0x" in stripped
    )


_runtime_of_line = memoised_by_line(runtime_of_line)
#: a UBSan diagnostic printed without its stack, read by its site (`ubsan`)
_runtime_error_site = ubsan.parse


#: what reading a trace decides from one line on its own (see `line_votes`)
LineVotes = tuple[bool, Runtime | None, bool]


def line_votes(line: str, runtime: Runtime) -> LineVotes:
    """Everything reading a trace decides from one line on its own: whether it shows Python's
    header or a Python frame, which runtime's frame syntax it shows, and whether it prints a
    frame of `runtime` (not memoised: for a line seen once)."""
    python_line = python.HEADER in line or python.looks_like_frame(line)
    return python_line, runtime_of_line(line), _FRAME_LINE_TESTS[runtime](line)


def parse_stacktrace(text: str | None) -> ParsedTrace | None:
    """The exceptions and frames of a trace, or None when no parser understands it. A trace printed by
    Android's logcat is read without its lines' prefixes (`logcat`), as no earlier release read it
    (`NEWLY_READ`)."""
    if not text or not text.strip():
        return None
    lines = trace_lines(text)
    if hotspot_error.is_report(lines) and (fatal := hotspot_error.parse(lines)) is not None:
        return fatal  # a JVM's fatal error log, whose frames no frame test reads; without one, read as before
    if (stack := node_report.as_v8_stack(text, lines)) is not None:
        return node_report.parse(stack)  # Node's stack after `FROM` or in a report's JSON (`node_report`)
    # (logcat's prefixes, or a Julia logger's box: `julia.unboxed`)
    bare = logcat.unprefixed(lines) or julia.unboxed(lines)
    runtime = detect_runtime(bare or lines)
    trace = None if runtime is None else _PARSERS[runtime](bare or lines)
    if trace is None:
        # a Valgrind report only when no runtime reads the text: a program's own crash printed among its lines
        # (a Rust panic, `backtrace_symbols`) was read before, and still is (`valgrind`); then a UBSan
        # diagnostic without its stack, by the site it names (`ubsan`); then the reports no runtime's frame
        # lines announce (`unread_reports`: PHP's fatal line, the kernel's segfault line, Apple's JSON report)
        return (
            valgrind.parse(bare or lines)
            or _runtime_error_site(bare or lines)
            or unread_reports.parse(text, lines)
        )
    if bare is not None and trace is not None and NEWLY_READ not in trace.notes:
        return replace(trace, notes=(*trace.notes, NEWLY_READ))
    return trace


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """The trace releases before this one read from the same text, when they read it otherwise (None when
    they read it so): the signatures they made keep receiving it (`fingerprint.looked_up_first`). .NET's
    after the unhandled-exception prefix (`dotnet.as_read_before`), an `AggregateException`'s numbered
    errors (`dotnet_aggregate.as_read_before`); Python's exception groups (`python_groups.as_read_before`);
    PHP's closures with their arguments or line (`php.as_read_before`); Ruby's with a compiled template's
    numbers (`ruby.as_read_before`); Node's with a logger's `caused by:` (`node.as_read_before`); Go's with a
    call's lone argument in its frame's name and every panic typed `panic` (`go.as_read_before`); a
    tombstone's frames of a deleted mapping or of ART's JIT named as printed (`native.as_read_before`); any
    runtime's with frames printed in a syntax they did not read (`Frame.newly_read`), without those frames."""
    if trace.runtime == "dotnet" and (before := dotnet_aggregate.as_read_before(trace)) is not None:
        return before  # an AggregateException's numbered errors read as its frames (`dotnet_aggregate`)
    if trace.runtime == "dotnet" and (before := dotnet.as_read_before(trace)) is not None:
        return before
    if trace.runtime == "rust" and (before := rust.as_read_before(trace)) is not None:
        return before  # a stripped binary's `<unknown>` frames, then the app's (`rust.as_read_before`)
    if trace.runtime == "java" and (before := java.as_read_before(trace)) is not None:
        return before  # a Scala closure's number kept in its name (`java.as_read_before`)
    if trace.runtime == "python" and (before := python_groups.as_read_before(trace)) is not None:
        return before  # an exception group block by block (`python_groups.as_read_before`)
    if trace.runtime == "php" and (before := php.as_read_before(trace)) is not None:
        return before  # a closure's arguments or line kept in its name (`php.as_read_before`)
    if trace.runtime == "ruby" and (before := ruby.as_read_before(trace)) is not None:
        return before  # a compiled template's numbers kept in its name (`ruby.as_read_before`)
    if trace.runtime == "node" and (before := node.as_read_before(trace)) is not None:
        return before  # a logger's `caused by:` cause read into the error before it (`node.as_read_before`)
    if trace.runtime == "go" and (before := go.as_read_before(trace)) is not None:
        return before  # a call's lone argument in its frame's name, a panic of any kind `panic` (`go`)
    if trace.runtime == "native" and (before := swift_backtrace.as_read_before(trace)) is not None:
        return before  # Swift's backtracer's report, read before as Apple's frames (`swift_backtrace`)
    if trace.runtime == "native" and (before := native.as_read_before(trace)) is not None:
        return before  # a tombstone's deleted mapping or JIT frame named as printed (`native.as_read_before`)
    if not any(frame.newly_read for exception in trace.exceptions for frame in exception.frames):
        return None
    before = replace(
        trace,
        exceptions=tuple(
            replace(exception, frames=tuple(frame for frame in exception.frames if not frame.newly_read))
            for exception in trace.exceptions
        ),
    )
    # with no frame left, they read no trace at all: the message's template (`NEWLY_READ`) finds theirs
    return before if before.frame_count else None


def frame_lines(lines: list[str], runtime: Runtime) -> list[bool]:
    """For each line, whether it prints (part of) a frame in the runtime's format: location,
    source and caret lines, `... N more`."""
    is_frame = _FRAME_LINES[runtime]
    return [is_frame(line) for line in lines]
