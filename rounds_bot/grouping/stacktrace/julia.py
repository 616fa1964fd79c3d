"""Julia's uncaught errors, as the REPL and `julia script.jl` print them (base/errorshow.jl, `showerror` and
`show_backtrace`):

    ERROR: LoadError: BoundsError: attempt to access 5-element Vector{Int64} at index [9]
    Stacktrace:
     [1] getindex
       @ ./essentials.jl:13 [inlined]
     [2] total(x::Vector{Int64})
       @ Main /app/src/cart.jl:12
    caused by: KeyError: key "sku" not found
    Stacktrace:
     ...

Since Julia 1.6 a frame is its number and call on one line and `@ Module file:line` under it (the module left
out when unknown, `[inlined]` after an inlined call); before, ` [1] total(::Array{Int64,1}) at
/app/src/cart.jl:12` on one line. `caused by:` starts the error the one before was thrown while handling
(`Base.current_exceptions`). A frame is named without its arguments, and an anonymous function's or a keyword
body's compiler number (`var"#3#4"`, `#total#5`) is left out: it is renumbered as code is added; a closure's
type parameters too (`(::var"#7#8"{Int64})(y::Int64)` is `##`, whatever its argument's type). A failed task
rethrown by `wait` or `fetch` (`TaskFailedException`) is read as the innermost `nested task error:` under it,
with its frames (the frames above it wait for the task). Base's files are printed relative to its source
(`./array.jl`; the REPL's input, `./REPL[1]`, is the app's), the standard library's and packages' under
`share/julia/` and a depot's `packages/<Name>/<slug>/` (`library_paths`). An error logged by `@error "..."
exception=(e, catch_backtrace())` is read the same, from inside Logging's ConsoleLogger's box (`┌ Error: ...`,
`│ ` before each line; `unboxed`).

No release before this one read these texts: their events went to their message's template, and the
signature made so keeps receiving them (`NEWLY_READ`).
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace, Relation

#: the type of an error whose header names none
ERROR = "error"
#: ` [2] total(x::Vector{Int64})`: a frame's number and call (1.6 and later); a failed task's frames are
#: indented four more spaces per level of nesting (base/task.jl, `show_task_exception`)
_CALL = re.compile(r"^\s{0,64}\[(?P<n>\d{1,6})\] (?P<call>\S.{0,2047})$")
#: `   @ Main /app/src/cart.jl:12 [inlined]`: where it ran, under the call
_AT = re.compile(
    r"^\s{1,64}@ (?:(?P<module>[\w.]{1,256}) )?(?P<file>\S.{0,2047}?):(?P<line>\d{1,9})(?: \[inlined\])?$"
)
#: ` [1] total(::Array{Int64,1}) at /app/src/cart.jl:12 [inlined]` (before 1.6): a Julia file, the REPL's
#: input or `none` (a top-level scope), so a C program's `[1] error at main.c:12` is not read
_OLD = re.compile(
    r"^\s{0,64}\[\d{1,6}\] (?P<call>\S.{0,2047}?) at "
    r"(?P<file>\S{0,2047}\.jl|none|REPL\[\d{1,9}\]):(?P<line>\d{1,9})(?: \[inlined\])?$"
)
#: an error's header: `ERROR: LoadError: Type: message`, `caused by: Type: message`, and a failed task's
#: `    nested task error: Type: message` (`caused by:` indented too inside a task's)
_HEADER = re.compile(
    r"^(?:ERROR: (?:LoadError: )?|\s{0,64}caused by: |\s{1,64}nested task error: )(?P<text>.{0,4096})$"
)
_NESTED = "nested task error: "
#: a type and what showerror prints after it: `BoundsError: ...`, `DomainError with -1.0:`,
#: `StackOverflowError:`, `MethodError(...)`
_TYPE = re.compile(r"^(?P<type>[A-Z][\w.]{0,255})(?:: | with |\(|:?$)")
_STACKTRACE = "Stacktrace:"
#: a ConsoleLogger's box (stdlib/Logging, ConsoleLogger.jl) and the key its `@error` logs an exception under
_BOX_FIRST = "┌ "
_BOX_LINE = "│ "
_BOX = (_BOX_FIRST, _BOX_LINE, "└ ")
_LOGGED = "exception ="
#: the compiler's number of an anonymous function or keyword body (`#3#4`, `#total#5`)
_NUMBER = re.compile(r"#\d+")
#: a callable object's or closure's type: `(::var"#7#8"{Int64})`, `(::Main.Adder{T})`
_CALLABLE = re.compile(r'^\(::(?:[\w.]{0,256}\.)?(?:var"(?P<quoted>[^"]{1,512})"|(?P<plain>[^{()]{1,512}))')
#: a name Julia quotes for its characters: `var"#total#5"`
_QUOTED = re.compile(r'var"([^"]{0,512})"')


def looks_like_julia_line(line: str) -> bool:
    """A line only Julia prints: a frame's `@ Module file:line`, or the one-line frame before 1.6."""
    stripped = line.lstrip()
    if stripped.startswith("@ "):
        return _AT.match(line) is not None
    return stripped.startswith("[") and " at " in line and _OLD.match(line) is not None


def is_frame_line(line: str) -> bool:
    """Whether the line prints (part of) a frame: its call, where it ran, or both; in a logger's box too."""
    if line.startswith(_BOX_LINE):
        line = line[len(_BOX_LINE) :]
    return looks_like_julia_line(line) or _CALL.match(line) is not None


def unboxed(lines: list[str]) -> list[str] | None:
    """The lines of an error Logging's ConsoleLogger logged (`@error "..." exception=(e, catch_backtrace())`)
    without its box (stdlib/Logging's `handle_message`: `┌ ` before the first line, `│ ` before each next,
    `└ ` before the last, the place it was logged at), when every line that is not blank has its box and an
    `exception =` is in it; else None."""
    first = next((line for line in lines if line.strip()), None)
    if first is None or not first.startswith(_BOX_FIRST):  # (a cheap test: most traces start otherwise)
        return None
    text = [line for line in lines if line.strip()]
    if not all(_boxed(line) for line in text) or not any(_LOGGED in line for line in text):
        return None
    return [line[2:] if line.startswith(_BOX) else line.lstrip("│") for line in lines]


def _boxed(line: str) -> bool:
    """Whether the line is one of a box's, a blank one (`│` alone) too."""
    return line.startswith(_BOX) or line.rstrip() == "│"


def parse(lines: list[str]) -> ParsedTrace | None:
    """Each error's header with the frames under its `Stacktrace:`; None when no frame is read. A failed
    task's error is the innermost `nested task error:`: the frames above it wait for the task or fetch its
    result, and say nothing of where it failed (JuliaLang/julia#48706)."""
    exceptions: list[ParsedException] = []
    header: tuple[str, str, Relation] | None = None
    frames: list[Frame] = []
    call: str | None = None
    logged = False
    for line in lines:
        if logged and line.strip():
            # the error a logger's `exception =` names, on the line under it (Logging's `showvalue`)
            header, frames, call, logged = (*_typed(line.strip()), "raised"), [], None, False
        elif line.strip() == _LOGGED:
            logged = True
        elif (found := _HEADER.match(line)) is not None:
            if _NESTED in line and line.lstrip().startswith(_NESTED):
                exceptions, header, frames = [], None, []  # the task's own error replaces the waiting one
            if header is not None or frames:
                exceptions.append(_exception(header, frames))
            relation: Relation = "cause" if line.lstrip().startswith("caused by: ") else "raised"
            header, frames, call = (*_typed(found["text"]), relation), [], None
        elif (old := _OLD.match(line)) is not None:
            frames.append(_frame(old["call"], None, old["file"], old["line"]))
        elif (at := _AT.match(line)) is not None and call is not None:
            frames.append(_frame(call, at["module"], at["file"], at["line"]))
            call = None
        elif (called := _CALL.match(line)) is not None:
            call = called["call"]
        elif header is not None and not frames and call is None:
            header = _continued(header, line)
    exceptions.append(_exception(header, frames))
    read = tuple(exception for exception in exceptions if exception.frames)
    if not read:
        return None
    return ParsedTrace("julia", read, (NEWLY_READ,))


def _continued(header: tuple[str, str, Relation], line: str) -> tuple[str, str, Relation]:
    """A header whose message showerror prints on the lines under it (`DomainError with -1.0:` then the
    message, base/errorshow.jl), up to `Stacktrace:`; any other header's lines are left out (a
    `MethodError`'s candidates name files)."""
    error_type, value, relation = header
    text = line.strip()
    if not text or text == _STACKTRACE or not value.endswith(":"):
        return header
    return error_type, f"{value} {text}", relation


def _typed(text: str) -> tuple[str, str]:
    """The type and message of a header's text: `BoundsError: ...`, `DomainError with -1.0:`."""
    typed = _TYPE.match(text)
    if typed is None:
        return ERROR, text
    rest = text[len(typed["type"]) :]
    for separator in (": ", " with ", ":"):
        if rest.startswith(separator):
            return typed["type"], rest[len(separator) :].strip()
    return typed["type"], rest.strip()


def _exception(header: tuple[str, str, Relation] | None, frames: list[Frame]) -> ParsedException:
    error_type, value, relation = header if header is not None else (ERROR, "", "raised")
    return ParsedException(error_type, value, tuple(frames), relation)


def _frame(call: str, module: str | None, file: str, line: str) -> Frame:
    return Frame(_function(call), module=module, filename=file, lineno=int(line))


def _function(call: str) -> str:
    """The function a call names, without its arguments, type parameters, quoting or compiler numbers."""
    callable_type = _CALLABLE.match(call)
    if callable_type is not None:
        # a callable object or closure, `(::var"#7#8"{Int64})(y::Int64)`: named by its type, whose parameters
        # change with the argument's type
        name = callable_type["quoted"] or callable_type["plain"]
    else:
        name = _QUOTED.sub(r"\1", re.split(r"[({]| where ", call, maxsplit=1)[0])
    return _NUMBER.sub("#", name.strip()) or call
