"""Dart and Flutter stack traces: the Dart VM's `StackTrace.toString()`, as an uncaught exception prints it
and as Flutter's `FlutterError.dumpErrorToConsole` reports an error caught by the framework.

    Unhandled exception:                                                      (the VM's uncaught exception)
    Bad state: No element                                                     (the exception's `toString()`)
    #0      CartService.checkout (package:shop/cart_service.dart:42:7)
    #1      _rootRunUnary (dart:async/zone.dart:1434:47)
    <asynchronous suspension>
    #2      main (file:///app/bin/server.dart:10:3)

    ══╡ EXCEPTION CAUGHT BY WIDGETS LIBRARY ╞═════════════════                  (Flutter)
    The following StateError was thrown building CartPage(dirty):
    Bad state: No element
    ...
    When the exception was thrown, this was the stack:
    #0      ListBase.first (dart:collection/list.dart:52:5)
    #1      CartPage.build (package:shop/cart_page.dart:20:30)
    (elided 3 frames from class _RawReceivePortImpl and dart:async)

The VM prints a frame `#N`, its number padded to six columns, then the function and, in parentheses, the
library's URI with the line and column (dart-lang/sdk, runtime/vm's stack trace printing); the awaiter frames
of an `async` function follow an `<asynchronous suspension>` line. package:stack_trace's `Trace` prints
`package:shop/cart_service.dart 42:7  CartService.checkout`, also read. Flutter names the exception's type
(`The following StateError was thrown ...:`) and prints its `toString()` under that line; the VM prints the
`toString()` alone, whose prefix names the core library's types (`Bad state:` is a `StateError`, `Invalid
argument(s)` an `ArgumentError`, `FormatException: ...`). A trace with no such line, a `StackTrace` printed
alone, names no type (`browser.HEADERLESS`: the event's type stands for it). A Dart frame is not a native one
(`native` leaves `#0  f (package:app/x.dart:3:5)` alone), nor PHP's (`#0 /app/x.php(12): f()`).

No release before this one read these traces (`NEWLY_READ`).
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.browser import HEADERLESS
from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

#: the VM's `#0      Class.method (package:app/file.dart:42:7)`; the URI may carry no line or column
_VM_FRAME = re.compile(
    r"^\s*#(?P<n>\d{1,6})\s+(?P<fn>\S.{0,1023}?) \((?P<uri>[^()\s]{1,2048}?\.dart)(?::(?P<line>\d{1,9}))?"
    r"(?::\d{1,9})?\)$"
)
#: package:stack_trace's `package:app/file.dart 42:7  Class.method`
_TRACE_FRAME = re.compile(r"^(?P<uri>\S{1,2048}?\.dart) (?P<line>\d{1,9})(?::\d{1,9})? +(?P<fn>\S.{0,1023})$")
#: Flutter's line that names the type: `The following StateError was thrown building Foo:`
_FLUTTER_TYPE = re.compile(
    r"^The following (?:(?P<assertion>assertion)|(?P<type>[\w$<>, ]{1,256}?)(?: object)?) was thrown\b"
)
#: the lines of the VM's and Flutter's reports that are no exception's
_NOT_A_HEADER = re.compile(
    r"^(?:Unhandled exception:|<asynchronous suspension>|When the exception was thrown, this was the stack:?"
    r"|═.*|══╡.*|\(elided \d+ frames? .*\)|\.\.\.|===== asynchronous gap =+)$"
)
#: the core library's errors, by the start of their `toString()` (dart:core's errors.dart and exceptions.dart)
_PREFIXES = (
    ("Bad state:", "StateError"),
    ("Invalid argument(s)", "ArgumentError"),
    ("Unsupported operation:", "UnsupportedError"),
    ("Concurrent modification during iteration", "ConcurrentModificationError"),
    ("RangeError", "RangeError"),
    ("Null check operator used on a null value", "TypeError"),
    ("type '", "TypeError"),
    ("LateInitializationError:", "LateError"),
    ("Stack Overflow", "StackOverflowError"),
    ("Out of Memory", "OutOfMemoryError"),
    ("Instance of '", None),  # an object with no `toString()` of its own: named by its class
)
#: the Flutter engine's line for an uncaught error:
#: `[ERROR:flutter/runtime/dart_vm_initializer.cc(41)] Unhandled Exception: Bad state: No element`
_ENGINE_PREFIX = re.compile(r"^\[ERROR:[^\]]{0,256}\] Unhandled Exception: ")
_INSTANCE = re.compile(r"^Instance of '(?P<type>[\w$<>, ]{1,256})'$")
_ASSERTION = re.compile(r"^'.{1,2048}': Failed assertion: ")
#: `TypeName: message` of any other exception (`FormatException: ...`, `SocketException: ...`): a class's name
#: in upper camel case, so a log line's level (`ERROR: ...`) names none
_TYPED = re.compile(r"^(?P<type>_?[A-Z][A-Za-z0-9$]{0,254}[a-z][\w$]{0,254}): ?(?P<value>.*)$")


def looks_like_frame(line: str) -> bool:
    """Whether a line prints a Dart frame (callers test for `.dart` first)."""
    return _numbered_frame(line) is not None


is_frame_line = looks_like_frame


def parse(lines: list[str]) -> ParsedTrace | None:
    """The exception and the frames of the first stack (a frame numbered 0 again, or a line of another
    report after the frames, ends it)."""
    header: list[str] = []
    flutter_type: str | None = None
    frames: list[Frame] = []
    for line in lines:
        stripped = line.strip()
        found = _numbered_frame(line)
        if found is not None:
            number, frame = found
            if frames and number == 0:
                break  # the next stack
            frames.append(frame)
            continue
        if not stripped or _NOT_A_HEADER.match(stripped):
            if not stripped and flutter_type is not None and header and not frames:
                header.append("")  # Flutter's value ends at a blank line
            continue
        if frames:
            break  # another report's lines
        named = _FLUTTER_TYPE.match(stripped)
        if named is not None:
            flutter_type, header = _flutter_type(named), []
        else:
            header.append(stripped)
    if not frames:
        return None
    error_type, value = _exception(header, flutter_type)
    exception = ParsedException(error_type or "Error", value, tuple(frames), "raised")
    notes = (NEWLY_READ,) if error_type else (NEWLY_READ, HEADERLESS)
    return ParsedTrace("dart", (exception,), notes=notes)


def _flutter_type(named: re.Match[str]) -> str:
    if named["assertion"]:
        return "AssertionError"
    # Flutter names the class, which for the core library's errors is the private one behind the public type
    # the VM's text reads as (`_TypeError` is a `TypeError`, `_Exception` an `Exception`)
    return "String" if named["type"] == "message" else named["type"].strip().removeprefix("_")


def _exception(header: list[str], flutter_type: str | None) -> tuple[str | None, str]:
    """The type (None when no line names it) and value of the exception, from the lines before the frames:
    Flutter's value is the lines under its type's (up to a blank line); the VM's, the first line that names
    one of the core library's errors, else the first `TypeName: message` line (a log line may come before
    either), else the first line."""
    if flutter_type is not None:
        return flutter_type, " ".join(header[: header.index("")] if "" in header else header)
    texts = [_ENGINE_PREFIX.sub("", line) for line in header]
    for named in (*map(_core_error, texts), *map(_typed, texts)):
        if named is not None:
            return named
    return None, header[0] if header else ""


def _core_error(text: str) -> tuple[str, str] | None:
    """The core library's error a line of an exception's `toString()` names, and its value, or None."""
    for prefix, error_type in _PREFIXES:
        if text.startswith(prefix):
            if error_type is not None:
                return error_type, text
            instance = _INSTANCE.match(text)
            return (instance["type"], text) if instance is not None else None
    return ("AssertionError", text) if _ASSERTION.match(text) else None


def _typed(text: str) -> tuple[str, str] | None:
    """The type and message of a `TypeName: message` line, or None (asked after every line's `_core_error`:
    a line above the exception's may read as one)."""
    typed = _TYPED.match(text)
    return (typed["type"], typed["value"].strip()) if typed is not None else None


def _numbered_frame(line: str) -> tuple[int, Frame] | None:
    """A frame's number (-1 for package:stack_trace's, which prints none) and the frame, or None."""
    if ".dart" not in line:
        return None
    vm = _VM_FRAME.match(line)
    if vm is not None:
        return int(vm["n"]), _made(vm)
    trace = _TRACE_FRAME.match(line.strip())
    return (-1, _made(trace)) if trace is not None else None


def _made(match: re.Match[str]) -> Frame:
    return Frame(
        function=match["fn"].strip(),
        filename=match["uri"],
        lineno=int(match["line"]) if match["line"] else None,
    )
