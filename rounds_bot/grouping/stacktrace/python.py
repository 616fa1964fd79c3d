"""Python tracebacks as `traceback.format_exception` prints them.

    Traceback (most recent call last):
      File "/app/shop/views.py", line 42, in checkout
        total = price(cart)
                ^^^^^^^^^^^
    ValueError: invalid literal for int() with base 10: 'x'

    The above exception was the direct cause of the following exception:   (raise ... from)
    During handling of the above exception, another exception occurred:    (implicit context)

Python prints the oldest exception first and frames oldest first; the parser returns the raised
(last printed) exception first and frames crash site first. A text with no traceback may be a fatal
error's dump (`python_fault.py`: `Fatal Python error: Segmentation fault`).

`parse` is also how every release before read an exception group (`| ` prefixed blocks): the group
first, then every block it prints, in print order, as `inner`. A trace that holds a group is read by
the errors inside it (`python_groups`), which keeps that reading to look up first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rounds_bot.grouping.stacktrace import python_fault
from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace, Relation

HEADER = "Traceback (most recent call last):"
GROUP_HEADER = "Exception Group Traceback (most recent call last):"
CAUSE = "The above exception was the direct cause of the following exception:"
CONTEXT = "During handling of the above exception, another exception occurred:"
FRAME = re.compile(r'^\s*File "(?P<file>[^"]{1,1024})", line (?P<line>\d{1,9})(?:, in (?P<fn>.{1,512}))?$')
_GROUP_PREFIX = re.compile(r"^\s{0,16}(?:[|+]\s?)+")
_GROUP_RULE = re.compile(r"^[-+|\s]*-{4,}.*$")
_EXCEPTION_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]{0,255})(?::\s?(?P<value>.*))?$")
CARETS = re.compile(r"^\s*[\^~]+\s*$")
# Installed packages and the standard library: the path after the last such root is the module.
_LIBRARY_ROOTS = (
    re.compile(r".*(?:site-packages|dist-packages)/(?P<rest>[^<>]+)\.py$"),
    re.compile(r".*/lib/python\d[\d.]*/(?P<rest>[^<>]+)\.py$"),
)


def looks_like_frame(line: str) -> bool:
    """A traceback's frame line, or a fatal-error dump's (`python_fault`)."""
    return (
        'File "' in line
        and ", line " in line
        and (FRAME.match(_strip_group_prefix(line)) is not None or python_fault.looks_like_frame(line))
    )


def is_frame_line(line: str) -> bool:
    """A frame's location line, or the source and caret lines Python prints under it."""
    return looks_like_frame(line) or (line.startswith("    ") and not line.isspace())


def parse(lines: list[str]) -> ParsedTrace | None:
    """A traceback's exceptions, raised first (an exception group as releases before read it)."""
    grouped = any(GROUP_HEADER in line for line in lines[:3])
    reader = _BlockReader()
    for raw in lines:
        reader.read(raw)
    reader.flush()
    blocks = reader.blocks
    if not blocks:
        return _dumped(lines)
    if grouped:
        # An exception group prints itself first, then each member exception.
        exceptions = [
            exception_of("raised" if index == 0 else "inner", frames, tail)
            for index, (_, frames, tail) in enumerate(blocks)
        ]
        return ParsedTrace("python", tuple(exceptions))
    # A chain marker sits between two blocks and says how the earlier one relates to the later:
    # the last block printed is the exception that was raised.
    links: list[Relation] = [block[0] for block in blocks[1:]] + ["raised"]
    exceptions = [
        exception_of(link, frames, tail)
        for link, (_, frames, tail) in zip(reversed(links), reversed(blocks), strict=True)
    ]
    return ParsedTrace("python", tuple(exceptions))


@dataclass
class PendingFrame:
    """A frame line read, waiting for the source line Python may print under it."""

    path: str
    lineno: int
    function: str | None
    context: str | None = None

    def frame(self) -> Frame:
        return frame_of(self.path, self.lineno, self.function, self.context)


class _BlockReader:
    """The blocks of a printed traceback, one per exception, read line by line: how the block
    relates to the next one (the chain marker before it), its frames, and the lines after them."""

    def __init__(self) -> None:
        self.blocks: list[tuple[Relation, list[Frame], list[str]]] = []
        self._relation: Relation = "raised"
        self._frames: list[Frame] | None = None  # None: outside a block, between marker and header
        self._tail: list[str] = []
        self._pending: PendingFrame | None = None

    def read(self, raw: str) -> None:
        line = _strip_group_prefix(raw)
        stripped = line.strip()
        if stripped == HEADER or stripped.endswith("Traceback (most recent call last):"):
            self.flush()
            self._frames, self._tail, self._pending = [], [], None
            return
        if stripped in (CAUSE, CONTEXT):
            self.flush()
            self._frames, self._tail, self._pending = None, [], None
            self._relation = "cause" if stripped == CAUSE else "context"
            return
        if self._frames is None:
            return
        match = FRAME.match(line)
        if match:
            if self._pending is not None:
                self._frames.append(self._pending.frame())
            self._pending = PendingFrame(
                match["file"], int(match["line"]), (match["fn"] or "").strip() or None
            )
            return
        if self._pending is not None and not self._tail and line.startswith("    ") and stripped:
            if CARETS.match(line) or stripped.startswith("[Previous line repeated"):
                return
            if self._pending.context is None:
                self._pending.context = stripped
                return
        if stripped.startswith("[Previous line repeated") or not stripped or CARETS.match(line):
            return
        if _GROUP_RULE.match(raw):
            return
        self._tail.append(stripped)

    def flush(self) -> None:
        """Close the block being read, if any: its pending frame included."""
        if self._frames is None:
            return
        if self._pending is not None:
            self._frames.append(self._pending.frame())
        if self._frames or self._tail:
            self.blocks.append((self._relation, list(self._frames), list(self._tail)))


def _dumped(lines: list[str]) -> ParsedTrace | None:
    """The trace of a fatal-error dump (`python_fault`), which no release before it read (`NEWLY_READ`)."""
    dump = python_fault.read_dump(lines)
    if dump is None:
        return None
    frames = tuple(frame_of(path, lineno, function, None) for path, lineno, function in dump.frames)
    exception = ParsedException(dump.type, dump.value, frames, "raised")
    return ParsedTrace("python", (exception,), notes=(NEWLY_READ,))


def _strip_group_prefix(line: str) -> str:
    # Exception groups indent their members behind "| "; keep the indentation after the bar so
    # frame and source lines still look like frame and source lines.
    if "|" not in line[:20]:
        return line
    match = _GROUP_PREFIX.match(line)
    return line[match.end() :] if match else line


def exception_of(relation: Relation, frames: list[Frame], tail: list[str]) -> ParsedException:
    type_, value = "Exception", ""
    for index, line in enumerate(tail):
        match = _EXCEPTION_LINE.match(line)
        if match and not line.startswith(("File ", "Traceback")):
            type_ = match["type"]
            value = " ".join([match["value"] or "", *tail[index + 1 : index + 3]]).strip()
            break
    # Python prints oldest first; callers want the crash site first.
    return ParsedException(type_, value, tuple(reversed(frames)), relation)


def frame_of(path: str, lineno: int, function: str | None, context: str | None) -> Frame:
    normalized = path.replace("\\", "/")
    module = None
    for root in _LIBRARY_ROOTS:
        library = root.match(normalized)
        if library:
            module = library["rest"].replace("/", ".").removesuffix(".__init__")
            break
    return Frame(
        function=function,
        module=module,
        filename=path,
        lineno=lineno,
        context_line=context,
    )
