"""PHP exceptions, in the two forms telemetry carries them.

As OpenTelemetry's PHP SDK writes `exception.stacktrace` (Java's layout, with `.php` files and `{main}`):

    App\\Billing\\PaymentDeclined: card expired            (namespaces written with dots)
        at App.Billing.Charge.capture(Charge.php:42)
        at {main}(index.php:25)
    Caused by: InvalidArgumentException: bad amount
        ... 1 more

As PHP prints an uncaught exception (`(string) $e`, the error log):

    PHP Fatal error:  Uncaught RuntimeException: card expired in /var/www/src/Billing/Charge.php:42
    Stack trace:
    #0 /var/www/src/Controller/Checkout.php(88): App\\Billing\\Charge->capture(Object(App\\Order), 1999)
    #1 {main}
      thrown in /var/www/src/Billing/Charge.php on line 42

PHP's own error log (`error_log` set to a file, which a collector's file receiver ships) writes the first line
behind the time it was logged, `[01-Mar-2026 12:00:01 UTC] PHP Fatal error:  Uncaught ...` (php-src's
`php_log_err_with_severity`: `[d-M-Y H:i:s e] `): the exception is read after it. No release before read such
a text (`NEWLY_READ`: the signature it made of the message keeps receiving it).

A printed frame `#k file(line): F()` says where F was *called*; F itself ran where frame k-1 was called from
(the exception's own location for #0), so that is the frame's file and line. `Next X: ...` blocks follow the
exception they wrap: the last block is the one raised. Namespaces are written with dots in both forms, so the
same code gives the same frames whichever form it arrives in. Arguments never reach a frame, a closure's
(`{closure}(3, 0)`) no more than a function's.

PHP 8.4 names a closure after the function it is written in and the line it starts on
(`App\\Stats->{closure:App\\Stats::average():8}(3)`), at a file's top level after the file
(`{closure:/app/routes/web.php:3}`), inside a closure after that closure's own name
(`{closure:{closure:App\\Stats::average():8}:9}`, as in Laravel's pipeline) (the manual's "Migrating from
PHP 8.3.x to PHP 8.4.x", other changes): the line moves whenever code above it does, and the file is the
frame's own. Such a closure is named as PHP 8.3 names it, innermost name first, in its function's namespace
(`App\\Stats->App\\{closure}(3)`), so an upgrade of PHP or an edit above a closure keeps its frames.
Releases before read the arguments of a call that starts with its closure, and a PHP 8.4 name, as part of
the frame's name (the trace's notes keep what they read: `as_read_before`).

The SDK's layout writes the same names with dots for backslashes (its `StackTraceFormatter::formatName`),
class first: `at App.Stats.{closure:App.Stats::average():8}(Stats.php:9)`, at a file's top level
`at {closure:/app/routes/web.php:3}(web.php:4)`. Such a line is read as the SDK writes PHP 8.3's name,
`at App.Stats.App.{closure}(Stats.php:9)`. Releases before read no frame in a line whose name holds `()` (a
closure written in a function: `newly_read`), and a file's closure as a frame named by the file and its line
(`RENAMED`).
"""

from __future__ import annotations

import dataclasses
import functools
import re

from rounds_bot.grouping.stacktrace import java
from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace, Relation
from rounds_bot.grouping.stacktrace.reading import named_before, renamed_note

_UNCAUGHT = re.compile(
    r"^(?:PHP )?(?:Fatal error|Uncaught Error|Warning)?:?\s*(?:Uncaught )?"
    r"(?P<type>[A-Za-z_\\][\w\\]{0,255}): (?P<value>.*) in (?P<file>\S.{0,2047}?):(?P<line>\d{1,9})$"
)
_NEXT = re.compile(
    r"^Next (?P<type>[A-Za-z_\\][\w\\]{0,255}): (?P<value>.*) in (?P<file>\S.{0,2047}?):(?P<line>\d{1,9})$"
)
_CALL = re.compile(
    r"^#\d{1,6} (?:(?P<file>\S.{0,2047}?)\((?P<line>\d{1,9})\)|\[internal function\]): (?P<call>.{1,2048})$"
)
_MAIN = re.compile(r"^#\d{1,6} \{main\}$")
#: the time PHP's error log writes before an entry: `date("d-M-Y H:i:s e")` in brackets, the zone's
#: identifier (`UTC`, `Europe/Berlin`) or offset
_ERROR_LOG_TIME = re.compile(r"^\[\d{2}-[A-Z][a-z]{2}-\d{4} \d{2}:\d{2}:\d{2}(?: [\w/+:-]{1,64})?\] ")
_OTEL_FILE = re.compile(r"\.php(?::\d+)?$")
#: PHP 8.4's name of a closure (see the module docstring): what it is written in, a function (`App\Stats::
#: average()`), a closure (named so by an inner pass), or a file; then the line it starts on. A closure
#: written in a closure names that closure's 8.4 name (`{closure:{closure:F():8}:9}`), so only the innermost
#: name matches, and each pass reads one level
_CLOSURE_84 = re.compile(r"\{closure:(?P<scope>[^{}]{0,1024}?(?:\{closure\})?):\d{1,9}\}")
_CLOSURE_84_OPENS = "{closure:"
#: the note of a frame releases before named otherwise (see the module docstring, `reading.renamed_note`)
RENAMED = "a frame's name printed a closure's arguments or line: "


def looks_like_php_line(line: str) -> bool:
    """A frame of either form, or the line that opens an uncaught exception's trace."""
    stripped = line.strip()
    if _CALL.match(stripped) or _MAIN.match(stripped) or stripped.startswith("PHP Fatal error:  Uncaught "):
        return True
    frame = java.FRAME.match(_sdk_line_as_83(line))
    return frame is not None and bool(_OTEL_FILE.search(frame["location"].strip()))


def is_frame_line(line: str) -> bool:
    stripped = line.strip()
    return bool(_CALL.match(stripped) or _MAIN.match(stripped)) or java.is_frame_line(_sdk_line_as_83(line))


def parse(lines: list[str]) -> ParsedTrace | None:
    if any(_CALL.match(line.strip()) or _MAIN.match(line.strip()) for line in lines):
        return _parse_printed(lines)
    read = [_sdk_line_as_83(line) for line in lines]
    trace = java.parse(read)  # the SDK's Java layout
    if trace is None:
        return None
    exceptions = tuple(
        dataclasses.replace(e, type=e.type.replace("\\", "."), frames=tuple(_dotted(f) for f in e.frames))
        for e in trace.exceptions
    )
    trace = dataclasses.replace(trace, runtime="php", exceptions=exceptions)
    return _as_sdk_84_was_read(trace, lines, read) if read != lines else trace


def _sdk_line_as_83(line: str) -> str:
    """A frame line of the SDK's layout with each PHP 8.4 closure name as the SDK writes PHP 8.3's (the
    module docstring); any other line as it is."""
    return _read_as_83(line, ".") if _CLOSURE_84_OPENS in line else line


def _as_sdk_84_was_read(trace: ParsedTrace, lines: list[str], read: list[str]) -> ParsedTrace:
    """The trace with each frame a PHP 8.4 closure name was read in marked as releases before read its line:
    no frame (`Frame.newly_read`), or a frame named otherwise (`RENAMED`). `java.parse` reads a frame for each
    frame line, in order, so the frame lines and the frames pair up."""
    frames = [list(exception.frames) for exception in trace.exceptions]
    at = [
        (index, position) for index, read_frames in enumerate(frames) for position in range(len(read_frames))
    ]
    frame_lines = [(line, as_83) for line, as_83 in zip(lines, read, strict=True) if java.FRAME.match(as_83)]
    renamed: list[str] = []
    # (paired by construction; a parser never raises, so a mismatch would only leave frames unmarked)
    for (index, position), (line, as_83) in zip(at, frame_lines, strict=False):
        if line == as_83:
            continue
        before = java.frame_of_line(line)
        if before is None:
            frames[index][position] = dataclasses.replace(frames[index][position], newly_read=True)
        else:
            module = before.module.replace("\\", ".") if before.module else None
            renamed.append(renamed_note(RENAMED, index, position, before.function, module))
    exceptions = tuple(
        dataclasses.replace(exception, frames=tuple(read_frames))
        for exception, read_frames in zip(trace.exceptions, frames, strict=True)
    )
    return dataclasses.replace(trace, exceptions=exceptions, notes=(*trace.notes, *renamed))


def _parse_printed(lines: list[str]) -> ParsedTrace | None:
    blocks: list[tuple[str, str, str, int, list[tuple[str | None, int | None, str]]]] = []
    logged = False
    for line in lines:
        stripped = line.strip()
        if not blocks and (time := _ERROR_LOG_TIME.match(stripped)):
            stripped, logged = stripped[time.end() :], True
        opened = _NEXT.match(stripped) or (_UNCAUGHT.match(stripped) if not blocks else None)
        if opened:
            blocks.append((opened["type"], opened["value"], opened["file"], int(opened["line"]), []))
            continue
        call = _CALL.match(stripped)
        if call and blocks:
            line_number = int(call["line"]) if call["line"] else None
            blocks[-1][4].append((call["file"], line_number, call["call"]))
        elif _MAIN.match(stripped) and blocks:
            blocks[-1][4].append((None, None, "{main}"))
    if not blocks or not any(block[4] for block in blocks):
        return None
    exceptions = []
    renamed: list[str] = []
    for index, (type_, value, file, line_number, calls) in enumerate(reversed(blocks)):
        frames: list[Frame] = []
        where: tuple[str | None, int | None] = (file, line_number)
        for called_from_file, called_from_line, called in calls:
            module, function = _split_call(called)
            if "{closure" in called and (before := _split_call_before(called)) != (module, function):
                renamed.append(renamed_note(RENAMED, index, len(frames), before[1], before[0]))
            frames.append(Frame(function=function, module=module, filename=where[0], lineno=where[1]))
            where = (called_from_file, called_from_line)
        relation: Relation = "raised" if index == 0 else "cause"
        name = type_.replace("\\", ".").lstrip(".")
        exceptions.append(ParsedException(name, value, tuple(frames), relation))
    notes = (NEWLY_READ,) if logged else ()
    return ParsedTrace("php", tuple(exceptions), notes=(*notes, *renamed))


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """How releases before read the trace, when they read it otherwise (None for any other trace): each
    closure's frame named as they named it (`RENAMED`), arguments or PHP 8.4's line and all, and without the
    frames they read none of (`Frame.newly_read`: with none left, they read no trace)."""
    renamed = named_before(trace, RENAMED)
    named = renamed or trace
    if not any(frame.newly_read for exception in named.exceptions for frame in exception.frames):
        return renamed
    before = dataclasses.replace(
        named,
        exceptions=tuple(
            dataclasses.replace(e, frames=tuple(frame for frame in e.frames if not frame.newly_read))
            for e in named.exceptions
        ),
    )
    return before if before.frame_count else renamed


def _split_call(call: str) -> tuple[str | None, str]:
    """`App\\Billing\\Charge->capture(Object(App\\Order), 1999)` -> (`App.Billing.Charge`, `capture`); a
    closure's name as PHP 8.3 prints it, without its arguments (`{closure}(3, 0)` -> `{closure}`)."""
    return _split_name(_name_of(_read_as_83(call)))


def _read_as_83(call: str, separator: str = "\\") -> str:
    """Every PHP 8.4 closure name in a call as PHP 8.3 prints it, innermost first: a pass reads one level of
    nesting, so there are at most as many passes as names open (a name left unmatched ends them). Namespaces
    are written with `separator` (the SDK's layout writes dots)."""
    before_84 = functools.partial(_closure_before_84, separator=separator)
    for _ in range(call.count(_CLOSURE_84_OPENS)):
        read = _CLOSURE_84.sub(before_84, call)
        if read == call:
            break
        call = read
    return call


def _name_of(call: str) -> str:
    """A call without its arguments: up to the first `(` outside braces, so a closure's arguments go wherever
    it stands (`{closure}(3)`, `App\\Stats->App\\{closure}(3)`), and a name PHP 8.4 wrote keeps its own
    `()`."""
    depth = 0
    for at, char in enumerate(call):
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
        elif char == "(" and depth == 0:
            return call[:at]
    return call


def _closure_before_84(match: re.Match[str], separator: str = "\\") -> str:
    """A PHP 8.4 closure's name as PHP 8.3 prints it: `{closure}` in the namespace of the function (or
    closure) it is written in, none for a file's top level."""
    scope = match["scope"]
    if not scope.endswith(("()", "{closure}")):
        return "{closure}"  # a file
    owner = scope.split("::", 1)[0] if "::" in scope else scope
    namespace = owner.rpartition(separator)[0]
    return f"{namespace}{separator}{{closure}}" if namespace else "{closure}"


def _split_call_before(call: str) -> tuple[str | None, str]:
    """A call's owner and function as releases before read them (`_split_call`)."""
    return _split_name(call.split("(", 1)[0] if not call.startswith("{") else call)


def _split_name(name: str) -> tuple[str | None, str]:
    """A call's name (no arguments) as its owner, dotted, and its function."""
    for separator in ("->", "::"):
        if separator in name:
            owner, _, function = name.rpartition(separator)
            return owner.replace("\\", ".").strip(".") or None, function
    owner, _, function = name.rpartition("\\")  # a namespaced function
    return (owner.replace("\\", ".").strip(".") or None), function or name


def _dotted(frame: Frame) -> Frame:
    if frame.module and "\\" in frame.module:
        return dataclasses.replace(frame, module=frame.module.replace("\\", "."))
    return frame
