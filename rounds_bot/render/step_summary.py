"""What a step adds to its job's summary (`$GITHUB_STEP_SUMMARY`), within what GitHub takes of one step.

GitHub uploads a step's summary file when the step ends and refuses one larger than 1 MiB: the upload is
aborted ("supports content up to a size of 1024k") with an error annotation, and the step's summary is lost
whole, not only its tail (GitHub Docs, "Workflow commands for GitHub Actions", "Adding a job summary": "each
step is restricted to a maximum size of 1MiB"). A first round with thousands of new signatures renders a
report of megabytes (20,000 new signatures: 6 MB), so what is added is cut, at the end of a line, to the room
the step's file has left, and a last line says how much was left out and where the whole is: the step's log,
which always gets all of it.
"""

from __future__ import annotations

from pathlib import Path

#: the most GitHub takes of one step's summary file, in bytes
STEP_SUMMARY_LIMIT = 1024 * 1024


def append_to_summary(path: Path, markdown: str) -> None:
    """Append `markdown` to the step's summary file at `path`, cut to what the file has room for."""
    try:
        used = path.stat().st_size
    except FileNotFoundError:
        used = 0
    with path.open("a", encoding="utf-8") as out:
        out.write(within(markdown, STEP_SUMMARY_LIMIT - used))


def within(markdown: str, room: int) -> str:
    """`markdown` if its UTF-8 bytes fit in `room`; else its longest head of whole lines that fits with a
    closing line saying how many lines were left out; nothing when not even that line fits."""
    encoded = markdown.encode("utf-8")
    if len(encoded) <= room:
        return markdown
    total_lines = markdown.count("\n") + (not markdown.endswith("\n"))
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
