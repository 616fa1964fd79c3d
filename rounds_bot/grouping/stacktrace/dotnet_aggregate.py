""".NET's `AggregateException`, read by the errors inside it.

`AggregateException.ToString()` (dotnet/runtime, `src/libraries/System.Private.CoreLib/src/System/
AggregateException.cs`) prints its first inner exception as any exception prints its inner one (after
` ---> `, closed by `--- End of inner exception stack trace ---`, then its own frames), and each other one
after it, numbered, whole, and closed by `<---`:

    System.AggregateException: One or more errors occurred. (item 3 failed) (item 7 failed)
     ---> System.InvalidOperationException: item 3 failed
       at Acme.Jobs.Sync.ProcessItem(Int32 id) in /src/Jobs/Sync.cs:line 40
       --- End of inner exception stack trace ---
       at Acme.Jobs.Sync.Run() in /src/Jobs/Sync.cs:line 22
     ---> (Inner Exception #1) System.InvalidOperationException: item 7 failed
       at Acme.Jobs.Sync.ProcessItem(Int32 id) in /src/Jobs/Sync.cs:line 40<---

`Parallel.ForEach`, `Task.WhenAll(...).Wait()` and the like gather one error per task that failed, in the
order the tasks failed. So the rule Python's exception groups follow (`python_groups`, Sentry's RFC 0079)
applies: the inner errors that a hash cannot tell apart (the same types and frames, line numbers aside) are
one, and the distinct ones follow the `AggregateException`, each once, in a fixed order. How many failed,
and in which order, makes no other problem; a failure at another site does.

Releases before read the numbered errors' lines as no header, and their frames as the `AggregateException`'s
own (`<---` ending its last one, which they read as no frame): the trace's notes keep that reading
(`READ_BEFORE`), and `as_read_before` gives it, so the signatures they made keep receiving it.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from rounds_bot.grouping.stacktrace import dotnet
from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

#: a numbered inner exception begins (`InnerExceptionPrefix`, then `AggregateException_InnerException`)
_NUMBERED = re.compile(r"^\s*---> \(Inner Exception #\d{1,9}\) (?P<header>\S.*)$")
#: and ends: `<---` after its text's last character
_CLOSE = "<---"
#: the note of a trace whose aggregate releases before read otherwise: that reading, as `_encoded` writes it
READ_BEFORE = ".NET AggregateException read before: "


def parse(lines: list[str]) -> ParsedTrace | None:
    """A .NET trace: an `AggregateException` with numbered inner errors by its distinct errors, any other as
    `dotnet.parse` reads it."""
    before = dotnet.parse(lines)
    if before is None or not any("(Inner Exception #" in line for line in lines):
        return before
    main, blocks = _split(lines)
    head = dotnet.parse(main)
    if head is None or not blocks:
        return before
    chains = [head.exceptions[1:]] if len(head.exceptions) > 1 else []
    for block in blocks:
        read = dotnet.parse(block)
        if read is not None:
            chains.append(tuple(replace(e, relation="inner") for e in read.exceptions))
    distinct: dict[str, tuple[ParsedException, ...]] = {}
    for chain in chains:
        distinct.setdefault(_identity(chain), chain)
    exceptions = (head.exceptions[0], *(e for key in sorted(distinct) for e in distinct[key]))
    notes = (*((NEWLY_READ,) if NEWLY_READ in before.notes else ()), READ_BEFORE + _encoded(before))
    return ParsedTrace("dotnet", exceptions, notes=notes)


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """The trace as releases before read its text, when they read it otherwise (`READ_BEFORE`), else None."""
    for note in trace.notes:
        if note.startswith(READ_BEFORE):
            return _decoded(note[len(READ_BEFORE) :])
    return None


def _split(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    """The lines before the first numbered inner exception, and each numbered one's, without its number and
    `<---` (a block not closed, cut short by a length limit, is left out: its last frames are missing)."""
    main: list[str] = []
    blocks: list[list[str]] = []
    open_block: list[str] | None = None
    for line in lines:
        numbered = _NUMBERED.match(line)
        if numbered is not None:
            open_block = [numbered["header"]]
        elif open_block is None:
            if not blocks:
                main.append(line)
            continue
        else:
            open_block.append(line)
        if open_block[-1].endswith(_CLOSE):
            open_block[-1] = open_block[-1].removesuffix(_CLOSE)
            blocks.append(open_block)
            open_block = None
    return main, blocks


def _identity(chain: tuple[ParsedException, ...]) -> str:
    """What a hash reads of an error's chain: types and frames, line numbers aside (never hashed); as text,
    which also gives the fixed order."""
    return repr(tuple((e.type, tuple(replace(f, lineno=None) for f in e.frames)) for e in chain))


def _encoded(trace: ParsedTrace) -> str:
    exceptions = [
        [e.type, e.relation, e.value, [[f.module, f.function, f.filename, f.lineno] for f in e.frames]]
        for e in trace.exceptions
    ]
    return json.dumps([exceptions, list(trace.notes)], separators=(",", ":"))


def _decoded(text: str) -> ParsedTrace:
    exceptions, notes = json.loads(text)
    return ParsedTrace(
        "dotnet",
        tuple(
            ParsedException(
                type_,
                value,
                tuple(
                    Frame(function=function, module=module, filename=file, lineno=line)
                    for module, function, file, line in frames
                ),
                relation,
            )
            for type_, relation, value, frames in exceptions
        ),
        notes=tuple(notes),
    )
