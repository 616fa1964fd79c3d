"""Apple's JSON crash reports (`.ips`, macOS 12 and iOS 15 on): a one-line JSON header, then a JSON body.

    {"app_name":"Shop","bug_type":"309","os_version":"macOS 14.2 (23C64)",...}
    {"pid":411,"exception":{"type":"EXC_BAD_ACCESS","signal":"SIGSEGV",...},"faultingThread":0,
     "threads":[{"triggered":true,"frames":[{"imageOffset":14864,"symbol":"Shop.Order.total() -> Int",
     "symbolLocation":40,"imageIndex":0},...]},...],"usedImages":[{"name":"Shop","path":"/Applications/...",...}]}

Apple's "Interpreting the JSON format of a crash report" documents the fields: `bug_type` 309 is a crash, the
body's `exception` says what failed, the thread marked `triggered` (else the one `faultingThread` numbers)
crashed, and each of its frames names its image by its index in `usedImages`, its offset in that image, and,
symbolicated, its `symbol` (and `sourceFile`, `sourceLine`). Frames are read as `native` reads the text
report's (`native._made`): the function without its arguments, the image's name as the module, no address
nor offset (a frame without a symbol names only its image). A Swift symbol is demangled with its return type
after its arguments (`Shop.Order.total() -> Swift.Int`, as `swift demangle` prints it): the arrow and type
are no part of the name. A symbol and a file are read up to a line's length (`MAX_LINE_CHARS`), as a text
report's line is. No release before read such a report (`NEWLY_READ`).
"""

from __future__ import annotations

import json
from typing import Any

from rounds_bot.grouping.stacktrace.model import (
    MAX_LINE_CHARS,
    MAX_TRACE_CHARS,
    NEWLY_READ,
    Frame,
    ParsedException,
    ParsedTrace,
)
from rounds_bot.grouping.stacktrace.native import bare_function


def parse(text: str) -> ParsedTrace | None:
    """The crashed thread's frames of a report, or None when the text is no JSON crash report."""
    # the cheap test first (most texts are no JSON), before the text is copied to its cap
    body = _body(text[:MAX_TRACE_CHARS].strip()) if text.lstrip().startswith("{") else None
    threads = body.get("threads") if body is not None else None
    if body is None or not isinstance(threads, list):
        return None
    crashed = _crashed_thread(threads, body.get("faultingThread"))
    if crashed is None:
        return None
    images = body.get("usedImages")
    frames = tuple(
        _frame(frame, images if isinstance(images, list) else [])
        for frame in (crashed.get("frames") or [])
        if isinstance(frame, dict)
    )
    if not frames:
        return None
    raw = body.get("exception")
    exception: dict[str, Any] = raw if isinstance(raw, dict) else {}
    error = ParsedException(str(exception.get("type") or "crash"), str(exception.get("signal") or ""), frames)
    return ParsedTrace("native", (error,), notes=(NEWLY_READ,))


def _body(text: str) -> dict[str, Any] | None:
    """The report's body: the JSON after its header line (or a body sent alone), when the text is one."""
    if not text.startswith("{") or '"threads"' not in text:
        return None  # (the cheap test: most texts are no JSON)
    header, _, rest = text.partition("\n")
    try:
        first = json.loads(header)
        body = json.loads(rest) if isinstance(first, dict) and "bug_type" in first else first
    except (ValueError, RecursionError):
        # RecursionError: the decoder recurses once a nesting level, and a text nested deeper than the
        # interpreter's recursion limit is no report Apple wrote (its report nests a few levels)
        try:
            body = json.loads(text)  # a body pretty-printed alone
        except (ValueError, RecursionError):
            return None
    return dict(body) if isinstance(body, dict) else None


def _crashed_thread(threads: list[Any], faulting: object) -> dict[str, Any] | None:
    for thread in threads:
        if isinstance(thread, dict) and thread.get("triggered") is True:
            return dict(thread)
    if isinstance(faulting, int) and 0 <= faulting < len(threads) and isinstance(threads[faulting], dict):
        return dict(threads[faulting])
    return None


def _frame(frame: dict[str, Any], images: list[Any]) -> Frame:
    index = frame.get("imageIndex")
    image = images[index] if isinstance(index, int) and 0 <= index < len(images) else None
    name = (image.get("name") or image.get("path")) if isinstance(image, dict) else None
    symbol = frame.get("symbol")
    source = frame.get("sourceFile")
    line = frame.get("sourceLine")
    return Frame(
        # cut first: reading a name walks it, and a report's symbol may be of any length
        function=bare_function(_without_return_type(symbol[:MAX_LINE_CHARS]))
        if isinstance(symbol, str) and symbol
        else None,
        module=str(name).rsplit("/", 1)[-1] if name else None,
        filename=source[:MAX_LINE_CHARS] if isinstance(source, str) else None,
        lineno=line if isinstance(line, int) else None,
    )


def _without_return_type(symbol: str) -> str:
    """A demangled Swift function without its return type (`f(_:) async throws -> Swift.Int` -> `f(_:)`). Only
    an arrow after the arguments is the function's: a closure's type before `in` (`closure #1 (Swift.Int) ->
    Swift.Bool in Shop.f()`) is part of its name."""
    head, arrow, returned = symbol.rpartition(" -> ")
    if not arrow or " in " in returned or ("(" in returned and not returned.startswith("(")):
        return symbol
    for effect in (" throws", " rethrows", " async"):  # Swift's effects, printed between them (in this order)
        head = head.removesuffix(effect)
    return head if head.endswith(")") else symbol
