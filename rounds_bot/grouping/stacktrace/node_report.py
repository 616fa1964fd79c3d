"""Two layouts Node.js prints a JavaScript stack in without V8's `    at ` lines, read as a V8 stack.

    Uncaught TypeError: Cannot read properties of undefined (reading 'id')

    FROM
    getId (/app/src/orders.js:42:17)
    handle (/app/src/server.js:12:3)

is what `node --abort-on-uncaught-exception` prints before it aborts: the error as V8 reports an uncaught
exception, then `FROM` and the stack, one frame a line without `at ` (V8's src/execution/isolate.cc,
`Isolate::Throw`'s abort on an uncaught exception, `PrintCurrentStackTrace`). And `node --report`'s JSON
(doc/api/report.md) holds the error's stack in `javascriptStack`: `"message"` the error's first line,
`"stack"` its frames, each `at getId (/app/src/orders.js:42:17)`.

Both are read as the same error's `error.stack` would be (`node.parse`). No release before this one read
them: their events went to their message's template, and the signature made so keeps receiving them
(`NEWLY_READ`).
"""

from __future__ import annotations

import json
from dataclasses import replace

from rounds_bot.grouping.stacktrace import node
from rounds_bot.grouping.stacktrace.model import MAX_TRACE_CHARS, NEWLY_READ, ParsedTrace

#: the line between the error and its stack (`PrintCurrentStackTrace`'s caller)
FROM = "FROM"
#: the key of a report's JavaScript stack (doc/api/report.md)
_REPORT_KEY = '"javascriptStack"'
#: the word V8 puts before an uncaught exception's message
_UNCAUGHT = "Uncaught "


def as_v8_stack(text: str, lines: list[str]) -> list[str] | None:
    """The text's error and frames as V8's `error.stack` prints them, when the text is in one of the layouts
    (module docstring); None otherwise."""
    if FROM in lines:
        return _aborted(lines)
    if _REPORT_KEY in text and text.lstrip().startswith("{"):
        return _reported(text)
    return None


def parse(stack: list[str]) -> ParsedTrace | None:
    """The trace `node` reads from a stack `as_v8_stack` gave, noted as no release before read it."""
    trace = node.parse(stack)
    if trace is None:
        return None
    return replace(trace, notes=(*(n for n in trace.notes if n != NEWLY_READ), NEWLY_READ))


def _aborted(lines: list[str]) -> list[str] | None:
    """`--abort-on-uncaught-exception`'s: the message from its `Uncaught ` line up to `FROM`, its frames
    after it up to a blank line; None when no `Uncaught ` line comes before `FROM` or a line after it is no
    frame."""
    at = lines.index(FROM)
    # V8 prints the message as `Uncaught <exception>` (`MessageTemplate::kUncaughtException`): the lines a
    # logger wrote before it are not the error's
    start = next((i for i in range(at - 1, -1, -1) if lines[i].startswith(_UNCAUGHT)), None)
    if start is None:
        return None
    header = [line.removeprefix(_UNCAUGHT) for line in lines[start:at] if line.strip()]
    frames: list[str] = []
    for line in lines[at + 1 :]:
        if not line.strip():
            break
        if line.lstrip().startswith("at "):
            # frames that already say `at ` are a V8 stack whose message ends in a `FROM` line (an SQL
            # error's), which releases before read as such: it is read so still
            return None
        frame = f"    at {line.strip()}"
        if not node.looks_like_v8_frame(frame):
            return None
        frames.append(frame)
    return [*header, *frames] if frames else None


def _reported(text: str) -> list[str] | None:
    """A report's JavaScript stack; None for a text that is no report or holds none."""
    if len(text) > MAX_TRACE_CHARS:
        return None  # a trace is read up to this many characters; a report cut there is no JSON
    try:
        report = json.loads(text)
    except (ValueError, RecursionError):
        # RecursionError: the decoder recurses once a nesting level, and a text nested deeper than the
        # interpreter's recursion limit is no report Node wrote (its report nests a few levels)
        return None
    stack = report.get("javascriptStack") if isinstance(report, dict) else None
    if not isinstance(stack, dict) or not isinstance(stack.get("stack"), list):
        return None
    message = stack.get("message")
    frames = [f"    {frame.strip()}" for frame in stack["stack"] if isinstance(frame, str)]
    return [*(str(message).splitlines() if message else []), *frames] if frames else None
