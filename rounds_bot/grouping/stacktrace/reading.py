"""For the parsers that read a trace line by line: the exception being read, until its header and
frames are complete, then the trace."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TypeVar

from rounds_bot.grouping.memo import MB, OVERHEAD, BoundedMemo, shared_memo
from rounds_bot.grouping.stacktrace.model import Frame, ParsedException, ParsedTrace, Relation, Runtime


@dataclass
class OpenException:
    """An exception being read line by line: its header so far, and the frames found under it."""

    type: str
    value: str
    relation: Relation
    frames: list[Frame] = field(default_factory=list)

    def close(self) -> ParsedException:
        return ParsedException(self.type, self.value, tuple(self.frames), self.relation)


def finish_trace(
    runtime: Runtime, exceptions: list[ParsedException], current: OpenException | None
) -> ParsedTrace | None:
    """The trace once every line is read, the exception still open included; None without a frame."""
    if current is not None:
        exceptions.append(current.close())
    if not any(e.frames for e in exceptions):
        return None
    return ParsedTrace(runtime, tuple(exceptions))


#: `renamed_note`'s mark of a frame whose module is kept as it was read
_SAME_MODULE = object()


def renamed_note(
    prefix: str, exception: int, frame: int, name: str | None, module: object = _SAME_MODULE
) -> str:
    """The note of a frame a parser names otherwise than releases before named it (a generated name's
    number left out): `prefix + "<exception> <frame> <name>"`, their indexes in the trace and that name, and
    after a new line the module they read when it differs (a frame's text is one line: no name holds one)."""
    note = f"{prefix}{exception} {frame} {name}"
    return note if module is _SAME_MODULE else f"{note}\n{module or ''}"


def named_before(trace: ParsedTrace, prefix: str) -> ParsedTrace | None:
    """The trace with each frame noted under `prefix` (`renamed_note`) named as releases before named it, and
    without those notes; None when none is noted."""
    noted = [note[len(prefix) :].split(" ", 2) for note in trace.notes if note.startswith(prefix)]
    if not noted:
        return None
    frames = [list(exception.frames) for exception in trace.exceptions]
    for exception, at, named in noted:
        function, moved, module = named.partition("\n")
        read = frames[int(exception)][int(at)]
        read = replace(read, function=function, module=(module or None) if moved else read.module)
        frames[int(exception)][int(at)] = read
    return replace(
        trace,
        exceptions=tuple(
            replace(exception, frames=tuple(read))
            for exception, read in zip(trace.exceptions, frames, strict=True)
        ),
        notes=tuple(note for note in trace.notes if not note.startswith(prefix)),
    )


T = TypeVar("T")
_LINE_MEMO_LIMIT = 100_000
#: the bytes each line memo may hold (there is one per runtime's frame test, and a few more)
LINE_MEMO_BUDGET = 2 * MB


def memoised_by_line(read: Callable[[str], T]) -> Callable[[str], T]:
    """`read` with its answers kept per line text: the same lines (a framework's frames, a
    runner's) recur in trace after trace. Bounded: a full memo is cleared, never evicted piecemeal."""
    memo: BoundedMemo[str, T] = shared_memo(_LINE_MEMO_LIMIT, LINE_MEMO_BUDGET, _line_size)
    known = memo.get
    missing = object()

    def memoised(line: str) -> T:
        answer = known(line, missing)
        if answer is missing:
            return memo.put(line, read(line))
        return answer  # type: ignore[return-value]

    return memoised


def _line_size(line: str, _: object) -> int:
    """A line and its answer (a frame holds about the line's text again)."""
    return OVERHEAD + 2 * len(line)
