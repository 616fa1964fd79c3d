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
"""

from __future__ import annotations

import re

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


def is_frame_line(line: str) -> bool:
    return _FROM.match(line) is not None or _RAISE.match(line) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    exceptions: list[OpenException] = []
    renamed: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        raised = _RAISE.match(line)
        if raised:
            exceptions.append(OpenException(raised["type"], raised["value"], "raised"))
            _add_frame(exceptions, raised, renamed)
            continue
        rails = _RAILS_HEADER.match(line.strip())
        if rails:
            exceptions.append(OpenException(rails["type"], rails["value"], "raised"))
            continue
        location = _FROM.match(line)
        if location and (location["fn"] is not None or line.lstrip().startswith("from ")):
            if not exceptions:
                exceptions.append(OpenException("RuntimeError", "", "raised"))
            _add_frame(exceptions, location, renamed)
    if not any(e.frames for e in exceptions):
        return None
    return ParsedTrace(
        "ruby",
        tuple(
            ParsedException(e.type, e.value, tuple(e.frames), "raised" if i == 0 else "cause")
            for i, e in enumerate(exceptions)
        ),
        tuple(renamed),
    )


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """How releases before read the trace, when they read it otherwise (None for any other trace): each
    frame that lost a compiled template's numbers or a singleton method's class (`RENAMED`) named as they
    named it, numbers and class and all."""
    return named_before(trace, RENAMED)


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
