"""Rust panics with their backtrace, as the standard library prints them (`RUST_BACKTRACE=1` or `full`).

    thread 'tokio-runtime-worker' panicked at src/orders.rs:42:9:
    called `Option::unwrap()` on a `None` value
    stack backtrace:
       0: rust_begin_unwind
                 at /rustc/07dca489ac2d933c78d3c5158e3f43beefeb02ce/library/std/src/panicking.rs:645:5
       1: core::panicking::panic_fmt
       2: shop::orders::place
                 at ./src/orders.rs:42:9
       3: <shop::Handler as tower::Service<Req>>::call::{{closure}}
    note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.

Before Rust 1.73 the message stood on the first line: `thread 'main' panicked at 'boom', src/main.rs:4:5`
(a message of several lines, `assert_eq!`'s, ends on the line with the location). Newer releases print the
thread's id after its name (`thread 'main' (12345) panicked at`); neither names a frame.
A full backtrace prints an address before each symbol (`4:     0x55d0c1a2b3c4 - shop::main::h3a5b...`) and
symbols carry a hash (`::h0123456789abcdef`): neither reaches a frame.

The panic location (the panic hook's `{location}`, `default_hook` in the standard library's
library/std/src/panicking.rs) is where the backtrace's first frames (the panic machinery) lead, so a
backtrace that names Rust code holds it as a frame already. One that names none has nothing else to say
where the panic was: no backtrace (`RUST_BACKTRACE` unset, the default, prints a note instead); a stripped
binary's (`-Cstrip=symbols`, Cargo's `strip = true`) short one, empty (library/std/src/sys/backtrace.rs
prints it from the frame named `__rust_end_short_backtrace`, a name a stripped binary lacks); or its full
one, every frame `<unknown>` (rust-lang/rust#147846). The location is then the innermost frame, named by
its file and line (`location_frame`): `called Option::unwrap() on a None value` or `attempt to subtract
with overflow` is every such panic's message, so the location is the only evidence of which bug it is. A
frame printed `<unknown>` names no code: it is kept in its place, no one's (`in_app=False`), so it is
never the app's, nor its crash site.

A symbol mangled the v0 way (`-C symbol-mangling-version=v0`) prints, in a full backtrace, each crate with
its disambiguator (`shop[5e4d3c2b1a098765]::orders::place`: the standard library's backtrace printer,
backtrace-rs's `print.rs`, writes a symbol's alternate form only in a short backtrace, and rustc-demangle's
`v0.rs` leaves the disambiguator out of that form alone), a hash of the crate's metadata that Cargo changes
with its version, features and profile; and a closure with its index among its parent's closures
(`{closure#0}`), which another closure written above it changes. Both are left out, the closure named as the
legacy mangling names it (`{{closure}}`): one panic site is one problem in every build, mangled either way.

Releases before this one read no trace in a panic without a frame (its message's template: `NEWLY_READ`),
never the location (`Frame.newly_read`), a `<unknown>` frame as the app's `unknown::unknown`
(`as_read_before`), a v0 symbol with its disambiguators and closure index (`RENAMED`), and no header with
the thread's id (`_as_read_without_header`): the signatures they
made keep receiving their events.
"""

from __future__ import annotations

import re
from dataclasses import replace

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace
from rounds_bot.grouping.stacktrace.reading import named_before, renamed_note

#: the thread's id, after its name, in newer releases' header
_PANIC = re.compile(
    r"^thread '(?P<thread>[^']{0,256})'(?P<id> \(\d{1,20}\))? panicked at (?P<rest>.{0,4000})$"
)
#: `'message', src/main.rs:4:5` (before Rust 1.73), or the last line of a message of several lines
_OLD_STYLE = re.compile(r"^'(?P<value>.*)', (?P<file>[^\s:]{1,2048}):(?P<line>\d{1,9}):\d{1,9}$")
_OLD_STYLE_END = re.compile(r"^(?P<value>.*)', (?P<file>[^\s:]{1,2048}):(?P<line>\d{1,9}):\d{1,9}$")
_LOCATION_ONLY = re.compile(r"^(?P<file>[^\s:]{1,2048}):(?P<line>\d{1,9}):\d{1,9}:$")
_BACKTRACE = "stack backtrace:"
_SYMBOL = re.compile(r"^\s{0,16}(?P<index>\d{1,6}):\s+(?:0x[0-9a-f]{1,16} - )?(?P<symbol>\S.{0,2047})$")
_AT = re.compile(r"^\s+at (?P<file>.{1,2048}?):(?P<line>\d{1,9})(?::\d{1,9})?$")
_HASH = re.compile(r"::h[0-9a-f]{16}$")
_GENERICS = re.compile(r"<[^<>]*>")
#: a v0 symbol's crate disambiguator (hexadecimal, after the crate's name) and closure index (module doc)
_DISAMBIGUATOR = re.compile(r"(?<=\w)\[[0-9a-f]{1,16}\]")
_V0_CLOSURE = re.compile(r"\{closure#\d{1,9}\}")
#: the note of a frame whose v0 symbol lost its disambiguators or closure index, `RENAMED + "<exception>
#: <frame> <name>"` and its module (`reading.renamed_note`): releases before kept them
RENAMED = "a frame's v0 symbol printed a crate's disambiguator or a closure's index: "
#: what the backtrace prints for a frame it found no symbol for (a stripped binary's)
UNKNOWN = "<unknown>"
#: how releases before this one read a `<unknown>` frame: a function `unknown` of a module `unknown`
_UNKNOWN_READ_BEFORE = Frame(function="unknown", module="unknown")


def looks_like_rust_line(line: str) -> bool:
    """A panic header, or an `at` line of a Rust source file."""
    if line.startswith("thread '") and " panicked at " in line:
        # (newer releases print the thread's id between its name and `panicked`)
        return "' panicked at " in line or _PANIC.match(line) is not None
    at = _AT.match(line)
    return at is not None and at["file"].endswith(".rs")


def is_frame_line(line: str) -> bool:
    """A symbol of Rust code, its `at` line, or a line that prints the panic location: the frame of a
    backtrace that names no Rust code (`parse`), so two texts that differ there read otherwise."""
    return (
        _AT.match(line) is not None
        or (_SYMBOL.match(line) is not None and "::" in line)
        or _prints_location(line)
    )


def _prints_location(line: str) -> bool:
    """The panic header, or the last line of a message of several lines before Rust 1.73."""
    stripped = line.strip()
    if stripped.startswith("thread '"):
        return _PANIC.match(stripped) is not None
    return "', " in line and _OLD_STYLE_END.match(line) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    value_lines: list[str] = []
    frames: list[Frame] = []
    #: each frame's symbol as printed (the frames the location is put before)
    symbols: list[str] = []
    location: Frame | None = None
    state = "start"  # start -> message (or old-message) -> backtrace
    pending: str | None = None
    #: a header with the thread's id; the first frame of a symbol with a path (`::`); an `at` line of Rust's
    with_id, first_path, rust_at = False, None, False
    for line in lines:
        if state == "start" and _SYMBOL.match(line) and "::" in line:
            state = "backtrace"  # a backtrace printed alone (`std::backtrace::Backtrace`), no panic header
        if state == "start":
            panic = _PANIC.match(line.strip())
            if panic:
                state, location, first_lines = _read_header(panic["rest"])
                value_lines.extend(first_lines)
                with_id = panic["id"] is not None
            continue
        if line.strip() == _BACKTRACE:
            state = "backtrace"
            continue
        if state == "old-message":
            end = _OLD_STYLE_END.match(line)
            value_lines.append(end["value"] if end else line)
            if end:
                state, location = "backtrace-next", location_frame(end["file"], int(end["line"]))
            continue
        if state in ("message", "backtrace-next"):
            if state == "message" and not line.startswith("note: "):
                value_lines.append(line)
            continue
        symbol = _SYMBOL.match(line)
        if symbol:
            if pending is not None:
                frames.append(_frame(pending, None, None))
                symbols.append(pending)
            if first_path is None and "::" in line:
                first_path = len(frames)
            pending = symbol["symbol"]
            continue
        at = _AT.match(line)
        rust_at = rust_at or (at is not None and at["file"].endswith(".rs"))
        if at and pending is not None:
            frames.append(_frame(pending, at["file"], int(at["line"])))
            symbols.append(pending)
            pending = None
    if pending is not None:
        frames.append(_frame(pending, None, None))
        symbols.append(pending)
    if with_id:
        frames = _as_read_without_header(frames, first_path if rust_at else None)
    if location is not None and not any(frame.module for frame in frames):
        # the backtrace names no Rust code (none printed, or only `<unknown>` and symbols of no crate)
        frames.insert(0, location)
    if not frames:
        return None
    value = "\n".join(value_lines).strip()
    read_before = (NEWLY_READ,) if all(frame.newly_read for frame in frames) else ()
    notes = (*read_before, *_renamed_v0_symbols(symbols, len(frames) - len(symbols)))
    return ParsedTrace("rust", (ParsedException("panic", value, tuple(frames), "raised"),), notes)


def _renamed_v0_symbols(symbols: list[str], first: int) -> tuple[str, ...]:
    """The notes (`RENAMED`) of the frames whose v0 symbols lost a disambiguator or a closure's index, with
    the name and module releases before read (`first`: the index of the first symbol's frame)."""
    notes = []
    for index, symbol in enumerate(symbols):
        if ("[" in symbol or "{closure#" in symbol) and _v0_free(symbol) != symbol:
            module, function = split_symbol(symbol, v0=True)
            notes.append(renamed_note(RENAMED, 0, first + index, function or None, module or None))
    return tuple(notes)


def _as_read_without_header(frames: list[Frame], first_read: int | None) -> list[Frame]:
    """The frames under a header with the thread's id, which no release before this one read as a header:
    they read a backtrace alone from its first symbol with a path (`::`), and only when an `at` line of a
    Rust file said whose it was (`first_read`: None when they read no frame). The frames above it, or all of
    them, are `newly_read`."""
    start = len(frames) if first_read is None else first_read
    return [replace(frame, newly_read=True) for frame in frames[:start]] + frames[start:]


def _read_header(rest: str) -> tuple[str, Frame | None, list[str]]:
    """What follows `panicked at `: the location then `:` (the message on the next lines), or before Rust
    1.73 the quoted message then the location (`'boom', src/main.rs:4:5`; the message may go on over the
    next lines). The state the next lines are read in, the location's frame, and the message read here."""
    old = _OLD_STYLE.match(rest)
    if old:
        return "backtrace-next", location_frame(old["file"], int(old["line"])), [old["value"]]
    new = _LOCATION_ONLY.match(rest)
    if new:
        return "message", location_frame(new["file"], int(new["line"])), []
    if rest.startswith("'"):
        return "old-message", None, [rest[1:]]
    return "message", None, []


def location_frame(filename: str, lineno: int) -> Frame:
    """The panic location as a frame: its file is its module, its line names it (a line number never
    contributes to a frame, and two panics of one file are two places). No release before this one read
    it (`Frame.newly_read`)."""
    return Frame(
        function=f"line {lineno}", module=filename, filename=filename, lineno=lineno, newly_read=True
    )


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """How releases before this one read a trace with a `<unknown>` frame or a v0 symbol they named otherwise
    (`RENAMED`): each `<unknown>` frame the app's `unknown::unknown`, each v0 symbol with its disambiguators
    and closure index, and no panic location (None for any other trace)."""
    renamed = named_before(trace, RENAMED)
    read = renamed or trace
    if renamed is None and not any(
        _is_unknown(frame) for exception in read.exceptions for frame in exception.frames
    ):
        return None
    before = replace(
        read,
        exceptions=tuple(
            replace(
                exception,
                frames=tuple(
                    _UNKNOWN_READ_BEFORE if _is_unknown(frame) else frame
                    for frame in exception.frames
                    if not frame.newly_read
                ),
            )
            for exception in read.exceptions
        ),
    )
    return before if before.frame_count else None  # (none read: the message's template, `NEWLY_READ`)


def _is_unknown(frame: Frame) -> bool:
    return frame.function == UNKNOWN and frame.module is None and frame.in_app is False


def split_symbol(symbol: str, v0: bool = False) -> tuple[str, str]:
    """`shop::orders::place::h0123…` -> (`shop::orders`, `place`);
    `<shop::Handler as tower::Service<Req>>::call` -> (`shop::Handler`, `call`): the implementing type owns
    a trait method. A v0 symbol's disambiguators and closure indexes are left out (`v0`: kept, as releases
    before read them)."""
    symbol = _HASH.sub("", symbol.strip() if v0 else _v0_free(symbol.strip()))
    if symbol.startswith("<"):
        depth, end = 0, -1
        for index, char in enumerate(symbol):
            depth += (char == "<") - (char == ">")
            if depth == 0:
                end = index
                break
        if end > 0:
            inner, rest = symbol[1:end], symbol[end + 1 :].lstrip(":")
            owner = _without_generics(inner.split(" as ", 1)[0])
            return owner, rest or owner
    plain = _without_generics(symbol)
    # a closure or an async block belongs to the function it is written in
    parts = [part for part in plain.split("::") if part]
    closures = []
    while parts and parts[-1].startswith("{{"):
        closures.append(parts.pop())
    if len(parts) < 2:
        return "", "::".join(parts + closures[::-1]) or symbol
    return "::".join(parts[:-1]), "::".join([parts[-1], *closures[::-1]])


def _v0_free(symbol: str) -> str:
    """A symbol without a v0 mangling's crate disambiguators, its closures named as the legacy mangling
    names them."""
    return _V0_CLOSURE.sub("{{closure}}", _DISAMBIGUATOR.sub("", symbol))


def _without_generics(symbol: str) -> str:
    previous = None
    while previous != symbol:
        previous, symbol = symbol, _GENERICS.sub("", symbol)
    return symbol


def _frame(symbol: str, filename: str | None, lineno: int | None) -> Frame:
    if symbol.strip() == UNKNOWN:
        return Frame(function=UNKNOWN, in_app=False)  # no symbol: no code anyone can name (module doc)
    module, function = split_symbol(symbol)
    return Frame(function=function or None, module=module or None, filename=filename, lineno=lineno)
