"""What every runtime's parser produces: exceptions with their frames, crash site first."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: `node` is JavaScript: Node.js and the browsers (V8, SpiderMonkey, JavaScriptCore), one language
#: `native` is C, C++, Objective-C and Swift: code compiled to machine code, read from a sanitizer's, a
#: debugger's or a crash reporter's backtrace
#: `dart` is Dart and Flutter, as the Dart VM prints a stack
#: `perl` and `powershell` are read only from a text no other runtime's lines are found in; so are `julia`,
#: `haskell` (GHC's) and `lua` (Lua 5.1 to 5.4, LuaJIT, OpenResty), after those two
Runtime = Literal[
    "python",
    "java",
    "node",
    "go",
    "dotnet",
    "ruby",
    "ocaml",
    "rust",
    "php",
    "elixir",
    "native",
    "dart",
    "perl",
    "powershell",
    "julia",
    "haskell",
    "lua",
]
Relation = Literal["raised", "cause", "context", "suppressed", "inner"]

#: a trace is read up to this many lines; a deeper dump is cut, never refused
MAX_TRACE_LINES = 20_000
#: and up to this many characters
MAX_TRACE_CHARS = 4_000_000
#: a line is read up to this many characters, so no line can make a pattern slow
MAX_LINE_CHARS = 2048


@dataclass(frozen=True)
class Frame:
    """One stack frame as printed. `module` is the code unit that owns the function (Java class,
    .NET type, Go package, Python module when the path shows it); `filename` the printed path."""

    function: str | None
    module: str | None = None
    filename: str | None = None
    lineno: int | None = None
    context_line: str | None = None
    #: an explicit in-app flag (a source that knows, such as an SDK's structured frame); the
    #: text parsers leave it None and the in-app rules decide
    in_app: bool | None = None
    #: a frame printed in a syntax no earlier release read as a frame (V8's `at async <location>`): the
    #: trace as those releases read it leaves it out (`stacktrace.as_read_before`)
    newly_read: bool = False


@dataclass(frozen=True)
class ParsedException:
    type: str
    value: str
    #: innermost first: frames[0] is where the exception was raised
    frames: tuple[Frame, ...] = ()
    #: how this exception relates to the first one of the trace
    relation: Relation = "raised"


#: the note of a trace in a layout no earlier release read (`native`, `node_fatal`, `dart`), or whose frames
#: none read (.NET's after the unhandled-exception prefix, `dotnet`): its event went to its message's
#: template then, and the signature found that way keeps receiving it (`browser.read_by_message_before`)
NEWLY_READ = "no earlier release read these frames"


@dataclass(frozen=True)
class ParsedTrace:
    runtime: Runtime
    #: the raised exception first, then its causes (or inner, suppressed, context exceptions)
    exceptions: tuple[ParsedException, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def frame_count(self) -> int:
        return sum(len(e.frames) for e in self.exceptions)


def trace_lines(text: str) -> list[str]:
    """The lines of a trace, bounded, with trailing whitespace and carriage returns removed."""
    lines = text[:MAX_TRACE_CHARS].splitlines()[:MAX_TRACE_LINES]
    return [line[:MAX_LINE_CHARS].rstrip() for line in lines]


def site_name(line: int, kind: str = "") -> str:
    """The name of a frame whose runtime names no function (UBSan's site, GHC's outermost call, Lua's main
    chunk): its line, since a frame's identity is its module and function, never its line, and without it
    every such error of one file would be one problem. Such a site moves with the lines added above it: the
    price of telling them apart."""
    return f"{kind} <line {line}>".lstrip()
