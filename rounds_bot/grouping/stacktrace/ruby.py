"""Ruby backtraces, as the interpreter prints an uncaught exception and as Rails logs one.

    /app/models/cart.rb:10:in `total': undefined method `price' for nil (NoMethodError)
        from /app/controllers/carts_controller.rb:5:in `show'
        from /usr/local/bundle/gems/actionpack-7.1.2/lib/action_controller/metal.rb:227:in `dispatch'
    /app/models/cart.rb:3:in `load': record missing (ArgumentError)       <- the cause (Ruby 3.1+)

Ruby 3.4 quotes with '...' and names a method with its class, `Cart#total`, and a singleton method (a
class method) `Pricing.apply` (its NEWS for 3.4.0): the method is read without the class, as earlier
Ruby prints it (`` `apply' ``), so an upgrade leaves one bug one problem. Releases before kept a singleton
method's class (the trace's notes keep the names as printed: `as_read_before`). Rails
writes `NoMethodError (undefined method ...):` followed by bare `app/...:10:in ...` lines.

Action View compiles each template into a method named after its path, the path's `hash` and the template
object's id (`_app_views_orders_show_html_erb__2841678936012345678_15548`, a negative hash's `-` written
`_`: `ActionView::Template#method_name`). Ruby seeds `String#hash` afresh in every process, so each worker
of each deployment names the same template's method otherwise: the numbers are left out, as Sentry's
grouping leaves them out (`_ruby_erb_func`), and the frame is the template's. Releases before kept them (the
trace's notes keep the names as printed: `as_read_before`).

An interpreter's own crash, `rb_bug` (`file:line: [BUG] Segmentation fault at 0x...`, vm_dump.c's
`rb_vm_bugreport`), prints its `-- Ruby level backtrace information ---` section oldest call first (`<main>`
first, the crash site last): the section's frames are read innermost first, as every other trace's are, and
its `-- C level backtrace information ---` lines are the interpreter's, never read. A section header is
recognised behind the prefix a frame line may have (a log drain's `web.1  | `, an indent), and only the
section's frames are turned, not those of a trace printed before the report. Releases before read the section
in print order (`BUG_REPORT`: `as_read_before` reads it so again).
"""

from __future__ import annotations

import re
from dataclasses import replace

from rounds_bot.grouping.stacktrace.model import Frame, ParsedException, ParsedTrace
from rounds_bot.grouping.stacktrace.reading import OpenException, named_before, renamed_note

_LOCATION = r"(?P<file>[^\s:][^:]{0,2047}?):(?P<line>\d{1,9})(?::in [`'](?P<fn>[^`']{0,512})')?"
_RAISE = re.compile(r"^\s*" + _LOCATION + r": (?P<value>.*?) \((?P<type>[A-Z][\w:]{0,255})\)$")
_FROM = re.compile(r"^\s*(?:from )?" + _LOCATION + r"$")
_RAILS_HEADER = re.compile(r"^(?P<type>[A-Z][\w:]{0,255}) \((?P<value>.*)\):$")
_BLOCK = re.compile(r"^(?:block (?:\(\d+ levels\) )?in |rescue in |ensure in )")
#: a compiled template's numbers (see the module docstring): the path's hash, of 4 digits or more as Sentry
#: reads it, its sign as an underscore, and the object's id (Ruby 2.7 and later number objects from 8 up)
_COMPILED_TEMPLATE = re.compile(r"^(_\w+?)___?\d{4,}_\d{1,20}$")
#: Ruby 3.4's singleton method, after its class's name (`Pricing.apply`, `Billing::Pricing.apply`)
_SINGLETON_METHOD = re.compile(r"^[A-Z]\w{0,255}(?:::[A-Z]\w{0,255}){0,32}\.(?P<method>[^.].{0,511})$")
#: the note of a frame whose name lost a compiled template's numbers or a singleton method's class,
#: `RENAMED + "<exception> <frame> <name>"` (their indexes in the trace, the name as releases before read
#: it): they kept both
RENAMED = "a frame's name printed a compiled template's numbers or a class method's class: "
#: the note of an interpreter's crash report, whose Ruby frames are printed oldest first (module docstring),
#: `BUG_REPORT + "<exception> <first frame> <end>"` (the section's frames' indexes, as printed)
BUG_REPORT = "a [BUG] report's Ruby level backtrace, printed oldest call first: "
_BUG_SECTION = "-- Ruby level backtrace information -"
#: a frame's span in a trace: its exception's index, the first frame's and the one after the last
Span = tuple[int, int, int]


def is_frame_line(line: str) -> bool:
    return _FROM.match(line) is not None or _RAISE.match(line) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    read = _parse_lines(lines)
    if read is None:
        return None
    trace, sections = read
    return _innermost_first(trace, sections) if sections else trace


def _innermost_first(trace: ParsedTrace, sections: list[Span]) -> ParsedTrace:
    """A [BUG] report's trace with its section's frames crash site first (module docstring)."""
    notes = tuple(f"{BUG_REPORT}{e} {first} {end}" for e, first, end in sections)
    return replace(_turned(trace, sections), notes=(*trace.notes, *notes))


def _turned(trace: ParsedTrace, sections: list[Span]) -> ParsedTrace:
    """The trace with each span's frames in the other order (turning twice gives the trace back)."""
    exceptions = list(trace.exceptions)
    for e, first, end in sections:
        frames = exceptions[e].frames
        exceptions[e] = replace(
            exceptions[e], frames=(*frames[:first], *frames[first:end][::-1], *frames[end:])
        )
    return replace(trace, exceptions=tuple(exceptions))


def _section_header(line: str) -> str | None:
    """A [BUG] report's section header (`-- Ruby level backtrace information ---`), behind the prefix a
    frame line may have (no colon: the frame's file would hold it), without that prefix; None for any
    other line."""
    at = line.find("-- ")
    if at < 0 or ":" in line[:at] or not line.rstrip().endswith("-"):
        return None
    return line[at:]


def _parse_lines(lines: list[str]) -> tuple[ParsedTrace, list[Span]] | None:
    """The trace as printed, and the spans of its [BUG] reports' Ruby level frames."""
    exceptions: list[OpenException] = []
    renamed: list[str] = []
    sections: list[Span] = []
    section: tuple[int, int] | None = None  # the open section's exception and first frame
    for line in lines:
        if not line.strip():
            continue
        header = _section_header(line) if "-- " in line else None
        if header is not None or _RAISE.match(line) or _RAILS_HEADER.match(line.strip()):
            sections += _closed(section, exceptions)
            section = None
        if header is not None and header.startswith(_BUG_SECTION):
            section = (max(len(exceptions) - 1, 0), len(exceptions[-1].frames) if exceptions else 0)
        elif header is None:
            _read_line(line, exceptions, renamed)
    sections += _closed(section, exceptions)
    if not any(e.frames for e in exceptions):
        return None
    trace = ParsedTrace(
        "ruby",
        tuple(
            ParsedException(e.type, e.value, tuple(e.frames), "raised" if i == 0 else "cause")
            for i, e in enumerate(exceptions)
        ),
        tuple(renamed),
    )
    return trace, sections


def _closed(section: tuple[int, int] | None, exceptions: list[OpenException]) -> list[Span]:
    """The span a section ends with, when it read frames."""
    if section is None or section[0] >= len(exceptions):
        return []
    end = len(exceptions[section[0]].frames)
    return [(*section, end)] if end - section[1] > 1 else []


def _read_line(line: str, exceptions: list[OpenException], renamed: list[str]) -> None:
    """The line's exception or frame, added to those read."""
    raised = _RAISE.match(line)
    if raised:
        exceptions.append(OpenException(raised["type"], raised["value"], "raised"))
        _add_frame(exceptions, raised, renamed)
        return
    rails = _RAILS_HEADER.match(line.strip())
    if rails:
        exceptions.append(OpenException(rails["type"], rails["value"], "raised"))
        return
    location = _FROM.match(line)
    if location and (location["fn"] is not None or line.lstrip().startswith("from ")):
        if not exceptions:
            exceptions.append(OpenException("RuntimeError", "", "raised"))
        _add_frame(exceptions, location, renamed)


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """How releases before read the trace, when they read it otherwise (None for any other trace): each
    frame that lost a compiled template's numbers or a singleton method's class (`RENAMED`) named as they
    named it, numbers and class and all; a [BUG] report's frames in print order (`BUG_REPORT`)."""
    sections = [note.removeprefix(BUG_REPORT).split() for note in trace.notes if note.startswith(BUG_REPORT)]
    if not sections:
        return named_before(trace, RENAMED)
    notes = tuple(note for note in trace.notes if not note.startswith(BUG_REPORT))
    printed = replace(_turned(trace, [(int(e), int(a), int(b)) for e, a, b in sections]), notes=notes)
    return named_before(printed, RENAMED) or printed


def _add_frame(exceptions: list[OpenException], match: re.Match[str], renamed: list[str]) -> None:
    """The line's frame, under the last exception; a name read otherwise before is noted."""
    before = _function(match)
    function = _COMPILED_TEMPLATE.sub(r"\1", before) if before and before[0] == "_" else before
    singleton = _SINGLETON_METHOD.match(function) if function and "." in function else None
    function = singleton["method"] if singleton else function
    frames = exceptions[-1].frames
    if function != before:
        renamed.append(renamed_note(RENAMED, len(exceptions) - 1, len(frames), before))
    frames.append(Frame(function=function, filename=match["file"], lineno=int(match["line"])))


def _function(match: re.Match[str]) -> str | None:
    """The frame's method as releases before read it: without a block's words, nor an instance method's
    class (`Cart#total`)."""
    function = match["fn"]
    if function:
        function = _BLOCK.sub("", function)
        function = function.rsplit("#", 1)[-1].rsplit(".", 1)[-1] if "#" in function else function
    return function or None
