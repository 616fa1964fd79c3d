"""Ruby backtraces, as the interpreter prints an uncaught exception and as Rails logs one.

    /app/models/cart.rb:10:in `total': undefined method `price' for nil (NoMethodError)
        from /app/controllers/carts_controller.rb:5:in `show'
        from /usr/local/bundle/gems/actionpack-7.1.2/lib/action_controller/metal.rb:227:in `dispatch'
    /app/models/cart.rb:3:in `load': record missing (ArgumentError)       <- the cause (Ruby 3.1+)

Ruby 3.4 quotes with '...' and names methods `Cart#total`; both spellings are read. Rails
writes `NoMethodError (undefined method ...):` followed by bare `app/...:10:in ...` lines.
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import Frame, ParsedException, ParsedTrace
from rounds_bot.grouping.stacktrace.reading import OpenException

_LOCATION = r"(?P<file>[^\s:][^:]{0,2047}?):(?P<line>\d{1,9})(?::in [`'](?P<fn>[^`']{0,512})')?"
_RAISE = re.compile(r"^\s*" + _LOCATION + r": (?P<value>.*?) \((?P<type>[A-Z][\w:]{0,255})\)$")
_FROM = re.compile(r"^\s*(?:from )?" + _LOCATION + r"$")
_RAILS_HEADER = re.compile(r"^(?P<type>[A-Z][\w:]{0,255}) \((?P<value>.*)\):$")
_BLOCK = re.compile(r"^(?:block (?:\(\d+ levels\) )?in |rescue in |ensure in )")


def is_frame_line(line: str) -> bool:
    return _FROM.match(line) is not None or _RAISE.match(line) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    exceptions: list[OpenException] = []
    for line in lines:
        if not line.strip():
            continue
        raised = _RAISE.match(line)
        if raised:
            exceptions.append(OpenException(raised["type"], raised["value"], "raised", [_frame(raised)]))
            continue
        rails = _RAILS_HEADER.match(line.strip())
        if rails:
            exceptions.append(OpenException(rails["type"], rails["value"], "raised"))
            continue
        location = _FROM.match(line)
        if location and (location["fn"] is not None or line.lstrip().startswith("from ")):
            if not exceptions:
                exceptions.append(OpenException("RuntimeError", "", "raised"))
            exceptions[-1].frames.append(_frame(location))
    if not any(e.frames for e in exceptions):
        return None
    return ParsedTrace(
        "ruby",
        tuple(
            ParsedException(e.type, e.value, tuple(e.frames), "raised" if i == 0 else "cause")
            for i, e in enumerate(exceptions)
        ),
    )


def _frame(match: re.Match[str]) -> Frame:
    function = match["fn"]
    if function:
        function = _BLOCK.sub("", function)
        function = function.rsplit("#", 1)[-1].rsplit(".", 1)[-1] if "#" in function else function
    return Frame(function=function or None, filename=match["file"], lineno=int(match["line"]))
