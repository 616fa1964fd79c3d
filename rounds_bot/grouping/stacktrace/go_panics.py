"""A Go panic's type: the kind of the runtime error it prints, without the values that error prints.

The runtime panics with one of a fixed set of errors (runtime/error.go, runtime/panic.go, runtime/map.go,
runtime/chan.go, runtime/alg.go): `errorString` and `boundsError`, whose text starts `runtime error: `,
`plainError` (`assignment to entry in nil map`, `send on closed channel`), `TypeAssertionError`
(`interface conversion: ...`) and, since Go 1.21, `PanicNilError`. Each kind is one text, or one of a few
formats: `runtime_error_kind` names the kind (`index out of range` for `runtime error: index out of range
[5] with length 3` and for `runtime error: index out of range [-1]`), and None for any other text: a
program's own panic value (`panic(fmt.Sprintf("order %d not found", id))`), whose site alone identifies it,
as Sentry groups a Go event by its stack when it has one.

The values a bounds error prints (an index, a length, a capacity) change with every occurrence and are no
part of the kind; one slice expression (`s[lo:hi]`) fails with `[:5] with capacity 3` or with `[5:3]` as
its values go (runtime/panic.go, `goPanicSliceAcap` and `goPanicSliceB`, both `boundsError`s), so every
bounds error of slicing is one kind. The types a runtime error names (`interface conversion: interface {}
is string, not int`, `hash of unhashable type []int`) are the program's code and stay in the kind, named
as `exception_chain.short_type` names a type, without its package (`*v1.Pod` as `*Pod`): a kind holds none
of the separators a type's name is cut at (`.`, `/`, `\\`, `::`), so it reads whole as part of a type.
A kind is read with `\\d` and `\\w` alone, so two texts that differ only in their digits' values have kinds
that differ only there (what `trace_memo`'s shapes rely on); a number standing alone in a kind that names
types (a program's text after them: `not string (order 17)`) is read as `0`. Only the shapes
`TypeAssertionError` prints are a kind that names types. Runtime errors outside this list (`unsafe.Slice`'s,
cgo's pointer checks, range-over-func's) are read as a program's own value: one problem per site, as before.

`panic_type` is the type a Go trace's panicking goroutine is given: `panic (<kind>)` for a runtime error,
`PROGRAM_PANIC` for any other value, `fatal error` for the runtime's throws (runtime/panic.go, `throw`:
`concurrent map writes`, `all goroutines are asleep - deadlock!`), whose text names the runtime's state
more than the code that reached it. Releases before typed every panic `panic` (`BEFORE`); no panic whose
line is printed is typed so now (a dump that prints none still is, as before), so the hash a signature made
then stored is never this release's hash of another panic: a trace is read as releases before read it
(`go.as_read_before`) only to find the signatures they made, and a signature made by this release from a
program's own panic is never found by a runtime error's reading before.
"""

from __future__ import annotations

import re

#: the prefix of the text of a runtime error of type `errorString` or `boundsError` (runtime/error.go)
RUNTIME_ERROR = "runtime error: "
#: the type releases before gave every panic, and the word Go's panic line starts with
BEFORE = "panic"
#: the type of a panic whose value is the program's own: no runtime error's (module docstring)
PROGRAM_PANIC = "panic (value)"

#: the texts the runtime prints whole, `errorString`'s after `RUNTIME_ERROR` and `plainError`'s without it;
#: each is its own kind (runtime/panic.go `panicmem`, `panicdivide`, `panicoverflow`, `panicshift`,
#: `panicfloat`, `PanicNilError`; runtime/slice.go, runtime/chan.go, runtime/map.go). Read with or without
#: the prefix: Go releases moved a few of them from one type to the other (`makechan`'s), and no program's
#: own value is one of these phrases.
_FIXED_TEXTS = frozenset(
    {
        "invalid memory address or nil pointer dereference",
        "integer divide by zero",
        "integer overflow",
        "negative shift amount",
        "floating point error",
        "makeslice: len out of range",
        "makeslice: cap out of range",
        "makechan: size out of range",
        "growslice: len out of range",
        "assignment to entry in nil map",
        "close of nil channel",
        "close of closed channel",
        "send on closed channel",
        "panic called with nil argument",
    }
)

#: the formats printed after `RUNTIME_ERROR` whose values are left out, each with its kind: `boundsError`'s
#: (runtime/error.go, `boundsErrorFmt` and, for a negative index, `boundsNegErrorFmt`; before Go 1.12 they
#: printed no value)
_BOUNDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"index out of range(?: \[-?\d{1,20}\](?: with length \d{1,20})?)?"), "index out of range"),
    (
        re.compile(r"slice bounds out of range(?: \[[\d:-]{1,64}\](?: with (?:length|capacity) \d{1,20})?)?"),
        "slice bounds out of range",
    ),
    (
        re.compile(
            r"cannot convert slice with length -?\d{1,20} to array or pointer to array with length \d{1,20}"
        ),
        "cannot convert slice to array",
    ),
)
#: the formats that name types, kept in the kind: a map's unhashable key and an interface's uncomparable
#: value (runtime/alg.go), printed after `RUNTIME_ERROR`, and `TypeAssertionError`'s texts (runtime/error.go:
#: `... is nil, not T`, `... is T, not U`, `T is not I: missing method M`), printed without it
_PREFIXED_TYPES = re.compile(r"(?:hash of unhashable|comparing uncomparable) type .{1,256}")
_PLAIN_TYPES = re.compile(
    r"interface conversion: (?:.{1,256}? is .{1,256}?, not .{1,256}"
    r"|.{1,256}? is not .{1,256}?: missing method \w{1,128})"
)
#: a number in a kind's text (a program's own text may follow a type's name): read as `0`
_NUMBER = re.compile(r"\b\d+\b")
#: a value method called through a nil pointer (runtime/error.go, `panicwrap`): the method is the frame's
_NIL_RECEIVER = re.compile(r"value method .{1,512} called using nil \*.{1,256} pointer")
#: a type's package, as Go prints it before the type's name (`main.`, `v1.`, a generic's argument's
#: `github.com/acme/shop.`): left out of a kind, as `short_type` leaves it out of a type's name
_PACKAGE = re.compile(r"(?:[\w.~-]{1,256}/){0,32}[\w~-]{1,256}\.(?=\w)")
#: what a type's name is cut at (`exception_chain.short_type`): a kind that still holds one is named alone
_SEPARATORS = (".", "/", "\\", "::")
#: the longest kind that names types: a longer one (a struct type printed whole) is named by its format alone
_MAX_TYPED_KIND = 160


def runtime_error_kind(value: str) -> str | None:
    """The kind of the runtime error a panic's value prints (module docstring), or None for a value that
    prints none."""
    text = value.removeprefix(RUNTIME_ERROR)
    if text in _FIXED_TEXTS:
        return text
    if text != value:
        for pattern, kind in _BOUNDS:
            if pattern.fullmatch(text):
                return kind
        if _PREFIXED_TYPES.fullmatch(text):
            return _with_types(text, text.split(" type ", 1)[0] + " type")
        return None
    if _PLAIN_TYPES.fullmatch(text):
        return _with_types(text, "interface conversion")
    if _NIL_RECEIVER.fullmatch(text):
        return "value method called using nil pointer"
    return None


def panic_type(kind: str, value: str) -> str:
    """The type of a panicking goroutine whose first line is `<kind>: <value>` (`panic` or `fatal error`,
    the value without Go's ` [recovered]`): see the module docstring."""
    if kind != BEFORE:
        return kind
    runtime_error = runtime_error_kind(value)
    return PROGRAM_PANIC if runtime_error is None else f"{BEFORE} ({runtime_error})"


def type_before(exception_type: str) -> str:
    """The type releases before gave a Go exception typed `exception_type` now: `panic` for any panic, which
    is also the word its line starts with (`trace_cut`)."""
    return BEFORE if exception_type.startswith(f"{BEFORE} (") else exception_type


def _with_types(text: str, format_kind: str) -> str:
    """The kind of a runtime error that names types: its text with the types' packages left out, or its
    format's kind when that still holds a separator or is long."""
    kind = _NUMBER.sub("0", _PACKAGE.sub("", text))
    if len(kind) > _MAX_TYPED_KIND or any(separator in kind for separator in _SEPARATORS):
        return format_kind
    return kind
