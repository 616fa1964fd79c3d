"""What a step adds to its job's summary (`$GITHUB_STEP_SUMMARY`), within what GitHub takes of one step.

GitHub uploads a step's summary file when the step ends and refuses one larger than 1 MiB: the upload is
aborted ("supports content up to a size of 1024k") with an error annotation, and the step's summary is lost
whole, not only its tail (GitHub Docs, "Workflow commands for GitHub Actions", "Adding a job summary": "each
step is restricted to a maximum size of 1MiB"). A first round with thousands of new signatures renders a
report of megabytes (20,000 new signatures: 6 MB), so what is added is cut, at the end of a line, to the room
the step's file has left, and a last line says how much was left out and where the whole is: the step's log,
which always gets all of it.

A report is added as it is rendered, in pieces (`appending_to_summary`): what fits is held (at most the
room, 1 MiB) until the last piece says whether all of it fits, and past the room only the lines are counted,
so the cut and the note are those of the whole text (`within`) without the whole text ever being held. The
head cannot be written as it comes: the note says how many lines were left out, its length depends on how
many digits that count has, and the head's end depends on the note's length, so it is known only once the
last line is.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: the most GitHub takes of one step's summary file, in bytes
STEP_SUMMARY_LIMIT = 1024 * 1024


def append_to_summary(path: Path, markdown: str) -> None:
    """Append `markdown` to the step's summary file at `path`, cut to what the file has room for."""
    with appending_to_summary(path) as addition:
        addition.add(markdown)


@contextmanager
def appending_to_summary(path: Path) -> Iterator[SummaryAddition]:
    """An addition to the step's summary file at `path`, given in pieces inside the block and appended when it
    ends, cut as `within` cuts the pieces joined; nothing is appended if the block raises."""
    addition = SummaryAddition(STEP_SUMMARY_LIMIT - _size(path))
    yield addition
    with path.open("a", encoding="utf-8") as out:
        out.write(addition.kept())


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


class SummaryAddition:
    """Text given in pieces, of which `kept()` is what `within` keeps of the pieces joined, in `room` bytes.
    It holds the pieces until their UTF-8 bytes outgrow the room (a cut head is shorter than the room, so it
    lies in them); after that it only counts the lines the pieces end, for the note."""

    def __init__(self, room: int) -> None:
        self._room = room
        self._held: list[str] = []
        self._held_bytes = 0
        self._outgrown = False
        self._newlines = 0
        self._ends_a_line = False  # as `str.endswith("\n")`: the empty text ends none

    def add(self, piece: str) -> None:
        if not piece:
            return
        self._newlines += piece.count("\n")
        self._ends_a_line = piece.endswith("\n")
        if self._outgrown:
            return
        self._held.append(piece)
        self._held_bytes += len(piece) if piece.isascii() else len(piece.encode("utf-8"))
        self._outgrown = self._held_bytes > self._room

    def kept(self) -> str:
        held = "".join(self._held)
        if not self._outgrown:
            return held
        return _head_and_note(held.encode("utf-8"), self._room, self._newlines + (not self._ends_a_line))


def within(markdown: str, room: int) -> str:
    """`markdown` if its UTF-8 bytes fit in `room`; else its longest head of whole lines that fits with a
    closing line saying how many lines were left out; nothing when not even that line fits."""
    encoded = markdown.encode("utf-8")
    if len(encoded) <= room:
        return markdown
    return _head_and_note(encoded, room, markdown.count("\n") + (not markdown.endswith("\n")))


def _head_and_note(encoded: bytes, room: int, total_lines: int) -> str:
    """The longest head of whole lines of a text of `total_lines` lines that fits in `room` with the note
    saying how many lines were left out. `encoded` is the text's UTF-8 bytes, or any head of them longer
    than `room`: the cut only looks inside the room."""
    # the note is sized for the most lines that could be left out: a shorter head never outgrows it
    note_room = len(_note(total_lines).encode("utf-8"))
    limit = room - note_room
    if limit < 0:  # not even the note fits: nothing, so the step's summary stays within the limit
        return ""
    cut = encoded.rfind(b"\n", 0, limit)  # the head is `encoded[: cut + 1]`, at most `limit` bytes
    if cut < 0:
        return _note(total_lines)
    head = encoded[: cut + 1].decode("utf-8")  # a newline ends a whole character: the cut splits none
    return head + _note(total_lines - head.count("\n"))


def _note(left_out: int) -> str:
    return (
        f"\n… {left_out} more lines are not shown here: GitHub takes at most 1 MiB of a step's summary. "
        "The whole report is in the step's log.\n"
    )
