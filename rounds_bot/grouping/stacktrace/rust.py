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

Before Rust 1.73 the message stood on the first line: `thread 'main' panicked at 'boom', src/main.rs:4:5`.
A full backtrace prints an address before each symbol (`4:     0x55d0c1a2b3c4 - shop::main::h3a5b...`) and
symbols carry a hash (`::h0123456789abcdef`): neither reaches a frame. The panic location is where the
backtrace's first frames (the panic machinery) lead, so it is not a frame of its own.
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import Frame, ParsedException, ParsedTrace

_PANIC = re.compile(r"^thread '(?P<thread>[^']{0,256})' panicked at (?P<rest>.{0,4000})$")
#: `'message', src/main.rs:4:5` (before Rust 1.73)
_OLD_STYLE = re.compile(r"^'(?P<value>.*)', (?P<file>[^\s:]{1,2048}):\d{1,9}:\d{1,9}$")
_LOCATION_ONLY = re.compile(r"^(?P<file>[^\s:]{1,2048}):\d{1,9}:\d{1,9}:$")
_BACKTRACE = "stack backtrace:"
_SYMBOL = re.compile(r"^\s{0,16}(?P<index>\d{1,6}):\s+(?:0x[0-9a-f]{1,16} - )?(?P<symbol>\S.{0,2047})$")
_AT = re.compile(r"^\s+at (?P<file>.{1,2048}?):(?P<line>\d{1,9})(?::\d{1,9})?$")
_HASH = re.compile(r"::h[0-9a-f]{16}$")
_GENERICS = re.compile(r"<[^<>]*>")


def looks_like_rust_line(line: str) -> bool:
    """A panic header, or an `at` line of a Rust source file."""
    if line.startswith("thread '") and "' panicked at " in line:
        return True
    at = _AT.match(line)
    return at is not None and at["file"].endswith(".rs")


def is_frame_line(line: str) -> bool:
    return _AT.match(line) is not None or (_SYMBOL.match(line) is not None and "::" in line)


def parse(lines: list[str]) -> ParsedTrace | None:
    value_lines: list[str] = []
    frames: list[Frame] = []
    state = "start"  # start -> message -> backtrace
    pending: str | None = None
    for line in lines:
        if state == "start" and _SYMBOL.match(line) and "::" in line:
            state = "backtrace"  # a backtrace printed alone (`std::backtrace::Backtrace`), no panic header
        if state == "start":
            panic = _PANIC.match(line.strip())
            if panic:
                old = _OLD_STYLE.match(panic["rest"])
                if old:
                    value_lines.append(old["value"])
                    state = "backtrace-next"
                else:
                    state = "message"
            continue
        if line.strip() == _BACKTRACE:
            state = "backtrace"
            continue
        if state in ("message", "backtrace-next"):
            if state == "message" and not line.startswith("note: "):
                value_lines.append(line)
            continue
        symbol = _SYMBOL.match(line)
        if symbol:
            if pending is not None:
                frames.append(_frame(pending, None, None))
            pending = symbol["symbol"]
            continue
        at = _AT.match(line)
        if at and pending is not None:
            frames.append(_frame(pending, at["file"], int(at["line"])))
            pending = None
    if pending is not None:
        frames.append(_frame(pending, None, None))
    if not frames:
        return None
    value = "\n".join(value_lines).strip()
    return ParsedTrace("rust", (ParsedException("panic", value, tuple(frames), "raised"),))


def split_symbol(symbol: str) -> tuple[str, str]:
    """`shop::orders::place::h0123…` -> (`shop::orders`, `place`);
    `<shop::Handler as tower::Service<Req>>::call` -> (`shop::Handler`, `call`): the implementing type owns
    a trait method."""
    symbol = _HASH.sub("", symbol.strip())
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


def _without_generics(symbol: str) -> str:
    previous = None
    while previous != symbol:
        previous, symbol = symbol, _GENERICS.sub("", symbol)
    return symbol


def _frame(symbol: str, filename: str | None, lineno: int | None) -> Frame:
    module, function = split_symbol(symbol)
    return Frame(function=function or None, module=module or None, filename=filename, lineno=lineno)
