"""Stack traces in each runtime's own format, as its OpenTelemetry SDK puts them in
`exception.stacktrace`.

- Python: `traceback.format_exception` (3.12, with its `^^^` position markers) and the
  "During handling of the above exception, another exception occurred:" chain.
- Java: `Throwable.printStackTrace`: tab-indented `at pkg.Class.method(File.java:123)`, with
  "Caused by:" and "... N more" computed the way the JVM computes it (frames shared with the
  enclosing trace, counted from the bottom).
- Node.js: `error.stack`: `    at fn (/app/src/x.js:10:5)`, `async` frames, anonymous locations.
- Go: a recovered panic as `panic: ...` and the `runtime/debug.Stack()` goroutine dump: function
  with its arguments, then the tab-indented `file:line +0xoffset`.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from dataclasses import dataclass

# --- Python -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PyFrame:
    path: str
    line: int
    function: str
    code: str
    #: the part of `code` Python 3.12 underlines; None when the whole line is the expression
    highlight: str | None = None
    #: the underline itself when it is not all `^` (subscripts and binary operators use `~`)
    markers: str | None = None


@dataclass(frozen=True)
class PyException:
    frames: tuple[PyFrame, ...]
    type: str
    message: str


PY_DURING_HANDLING = "During handling of the above exception, another exception occurred:"
PY_DIRECT_CAUSE = "The above exception was the direct cause of the following exception:"


def python_traceback(first: PyException, *chained: tuple[str, PyException]) -> str:
    """The text `traceback.format_exception` prints for an exception chain, oldest first: each
    later exception comes with the line that links it to the one before (PY_DURING_HANDLING
    for an implicit `__context__`, PY_DIRECT_CAUSE for `raise ... from`)."""
    text = _python_block(first)
    for link, exception in chained:
        text += f"\n{link}\n\n" + _python_block(exception)
    return text


def _python_block(exception: PyException) -> str:
    lines = ["Traceback (most recent call last):"]
    for frame in exception.frames:
        lines.append(f'  File "{frame.path}", line {frame.line}, in {frame.function}')
        lines.append(f"    {frame.code}")
        if frame.highlight is not None:
            column = frame.code.index(frame.highlight)
            underline = frame.markers or "^" * len(frame.highlight)
            lines.append(" " * (4 + column) + underline)
    lines.append(f"{exception.type}: {exception.message}" if exception.message else exception.type)
    return "\n".join(lines) + "\n"


# --- Java -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JavaFrame:
    method: str
    """fully qualified: `com.acme.inventory.stock.StockLedger.decrement`"""
    location: str
    """`StockLedger.java:88`, `<generated>`, `Native Method` or `Unknown Source`"""
    module: str | None = None
    """`java.base` for JDK frames, printed as `java.base/`"""

    def render(self) -> str:
        prefix = f"{self.module}/" if self.module else ""
        return f"\tat {prefix}{self.method}({self.location})"


@dataclass(frozen=True)
class JavaException:
    header: str
    """`type: message` (the message may span lines, as the JVM prints it)"""
    frames: tuple[JavaFrame, ...]
    """the exception's whole stack, outermost caller last"""


def java_stack_trace(*chain: JavaException) -> str:
    """`printStackTrace` of the first exception, each later one its cause."""
    lines = [chain[0].header, *(frame.render() for frame in chain[0].frames)]
    for enclosing, cause in itertools.pairwise(chain):
        shared = _shared_tail(cause.frames, enclosing.frames)
        lines.append(f"Caused by: {cause.header}")
        lines.extend(frame.render() for frame in cause.frames[: len(cause.frames) - shared])
        if shared:
            lines.append(f"\t... {shared} more")
    return "\n".join(lines) + "\n"


def _shared_tail(frames: tuple[JavaFrame, ...], enclosing: tuple[JavaFrame, ...]) -> int:
    shared = 0
    while shared < min(len(frames), len(enclosing)) and frames[-1 - shared] == enclosing[-1 - shared]:
        shared += 1
    return shared


def jdk(method: str, location: str) -> JavaFrame:
    return JavaFrame(method, location, module="java.base")


# --- Node.js ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeFrame:
    location: str
    """`/app/src/views/orderSummary.js:42:31`, `node:net:1607:16` or `<anonymous>`"""
    function: str | None = None
    is_async: bool = False

    def render(self) -> str:
        if self.function is None:
            return f"    at {self.location}"
        keyword = "async " if self.is_async else ""
        return f"    at {keyword}{self.function} ({self.location})"


def node_stack(error_type: str, message: str, frames: list[NodeFrame]) -> str:
    """`error.stack`: the error's toString, then its frames; V8 adds no final newline."""
    return "\n".join([f"{error_type}: {message}", *(frame.render() for frame in frames)])


# --- Go ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoFrame:
    function: str
    """`github.com/acme/shipping-worker/internal/labels.(*Batcher).assign`"""
    args: str
    """the argument words as the runtime prints them, `...` when elided"""
    file: str
    line: int
    offset: int | None = None
    """the `+0x2f4` pc offset; inlined frames have none"""

    def render(self) -> str:
        position = f"\t{self.file}:{self.line}" + (f" +0x{self.offset:x}" if self.offset else "")
        return f"{self.function}({self.args})\n{position}"


@dataclass(frozen=True)
class GoCreatedBy:
    function: str
    goroutine: int
    file: str
    line: int
    offset: int

    def render(self) -> str:
        return (
            f"created by {self.function} in goroutine {self.goroutine}\n"
            f"\t{self.file}:{self.line} +0x{self.offset:x}"
        )


def go_panic(
    message: str, goroutine: int, frames: list[GoFrame], created_by: GoCreatedBy | None = None
) -> str:
    """A recovered panic as the recovery middleware writes it: `panic: %v` then debug.Stack()."""
    lines = [f"panic: {message}", "", f"goroutine {goroutine} [running]:"]
    lines.extend(frame.render() for frame in frames)
    if created_by is not None:
        lines.append(created_by.render())
    return "\n".join(lines) + "\n"


def go_pointer(rng: random.Random) -> str:
    """A heap address as Go prints arguments: 0xc000 followed by a few hex digits."""
    return f"0xc000{rng.randrange(0x10000, 0xFFFFFF) & ~0x7:06x}"


def go_offset(function: str, line: int) -> int:
    """The pc offset of a call site: fixed for one build, so derived from the site itself."""
    digest = hashlib.sha256(f"{function}:{line}".encode()).digest()
    return 0x25 + int.from_bytes(digest[:2], "big") % 0x3D0
