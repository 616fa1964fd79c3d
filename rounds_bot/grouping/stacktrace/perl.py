"""Perl's errors: `die`'s line and Carp's traces.

    Can't call method "id" on an undefined value at /app/lib/Shop/Cart.pm line 42.
        Shop::Cart::total(Shop::Cart=HASH(0x55d4c1a2b3c4), 3) called at /app/lib/Shop/Handler.pm line 20
        main::run() called at /app/bin/shop.pl line 8

`die` appends ` at SCRIPT line N.` to a message that does not end in a newline, and `, <FH> line N` (or
`chunk N`) before the period when a file handle was last read (perldoc -f die). Carp's `croak` prints one
such line at its caller's location; `confess` and `cluck` follow it with one line a caller, a tab, the sub
with its arguments and ` called at FILE line N`, perhaps ` thread N` (Carp.pm, `ret_backtrace` and
`caller_info`; `eval {...}`, `eval '...'` and `require Foo.pm` in place of a sub). Each such line names the
sub that was running and where it was called from: the sub of line k ran at the location of line k-1 (the
message's for the first). Arguments are values of one call: never part of a frame.
A `die` or `croak` line alone names a file and no sub: it is not read (its message tells two bugs of one
module apart).

No release before this one read these texts: their events went to their message's template, and the
signature made so keeps receiving them (`NEWLY_READ`).
"""

from __future__ import annotations

import re
from itertools import takewhile

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

#: the type of every Perl error: Perl's `die` takes any value, and the text names no class
DIE = "die"
#: a file as Perl names it: a path, a script's name, `-e` (a one-liner) or `(eval N)` (a string eval); one
#: possessive token, checked after (`_is_file`), so a long token is not backtracked over
_FILE = r"(?P<file>\(eval \d{1,9}\)|\S++)"
#: ` at FILE line N` with `, <FH> line N.`/`chunk N.` (perldoc -f die) and Carp's ` thread N`
_AT = _FILE + r" line (?P<line>\d{1,9})(?: thread \d{1,9})?(?:, <[^>]{0,256}> (?:line|chunk) \d{1,12})?"
_DIED = re.compile(r"^(?P<value>.*?) at " + _AT + r"\.$")
_CALLED = re.compile(r"^\s+(?P<call>\S.{0,2047}?) called at " + _AT + r"$")
#: a sub's name in Carp's line, before its arguments: `Shop::Cart::total(...)`, `main::run()`
#: an anonymous sub as the debugger names it (`main::__ANON__[/app/x.pl:5]`, when `$^P & 0x200`) keeps its
#: name and drops where it was defined
_SUB = re.compile(r"^(?P<name>[A-Za-z_][\w:']{0,511})(?:\[[^\]]{0,1024}\])?(?:\(|$)")
#: `(eval N)`: N counts the string evals the process ran so far (perlvar `__FILE__`), not the code's identity
#: what a caller line names before its arguments, when `_SUB` does not read it
_CALLEE = re.compile(r"\(unknown\)|[^\s(]*")
_EVAL = re.compile(r"^\(eval \d{1,9}\)$")


def is_frame_line(line: str) -> bool:
    """Whether the line is `die`'s location or one of Carp's callers."""
    return " line " in line and (_called(line) is not None or _died(line) is not None)


def looks_like_perl_line(line: str) -> bool:
    """A line only Perl prints: one of Carp's callers. A lone `die` line names a file and no sub, so it is
    left to its message (two bugs died in one module would otherwise be one problem)."""
    return " called at " in line and _called(line) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    """The error whose `die` line is followed by Carp's callers; None for a text with no caller line (a bare
    `die` or `croak` line names no sub: its message tells two bugs of one module apart)."""
    called = [_called(line) for line in lines]  # once: a text may hold thousands of `at X line N.` lines
    first = next((index for index, match in enumerate(called) if match is not None), None)
    if first is None or first == 0:
        return None
    died = _died(lines[first - 1])
    if died is None:
        return None
    # the run of caller lines right after the `die` line: a later Carp block (a `cluck` warning, then a fatal
    # `confess`) is another error's
    callers = [match for match in takewhile(lambda match: match is not None, called[first:]) if match]
    message = [text.strip() for text in lines[: first - 1] if text.strip()]
    value = " ".join([*message, died["value"]]) if died["value"] else " ".join(message)
    return ParsedTrace("perl", (ParsedException(DIE, value, _frames(died, callers)),), (NEWLY_READ,))


def _died(line: str) -> re.Match[str] | None:
    died = _DIED.match(line) if " line " in line else None
    return died if died is not None and _is_file(died["file"]) else None


def _called(line: str) -> re.Match[str] | None:
    called = _CALLED.match(line) if " called at " in line else None
    return called if called is not None and _is_file(called["file"]) else None


def _frames(died: re.Match[str], callers: list[re.Match[str]]) -> tuple[Frame, ...]:
    """Innermost first: the sub each caller line names ran where the line before it points."""
    locations = [died, *callers]
    subs: list[str | None] = [_sub(called["call"]) for called in callers]
    subs.append(None)  # the outermost location is the script's own code, in no sub
    return tuple(_frame(sub, at) for sub, at in zip(subs, locations, strict=True))


def _frame(sub: str | None, at: re.Match[str]) -> Frame:
    module, _, function = sub.rpartition("::") if sub else ("", "", "")
    file = "(eval)" if _EVAL.match(at["file"]) else at["file"]
    return Frame(function or None, module=module or None, filename=file, lineno=int(at["line"]))


def _sub(call: str) -> str:
    """The sub a caller line names, without its arguments; `eval` and `require` as such."""
    named = _SUB.match(call)
    if named is not None and named["name"] not in ("eval", "require"):
        return named["name"].replace("'", "::")  # `Foo'bar` is Perl's old package separator
    callee = _CALLEE.match(call)  # matches any text (its second branch may be empty)
    return callee[0] if callee else call  # never its arguments (`(unknown)(HASH(0x...))` is `(unknown)`)


def _is_file(file: str) -> bool:
    """A path, a Perl file's name, a one-liner's `-e` or a string eval's `(eval N)`."""
    return (
        "/" in file
        or "\\" in file
        or file.endswith((".pl", ".pm", ".t", ".cgi", ".psgi", ".PL"))
        or file == "-e"
        or file.startswith("(eval ")
    )
