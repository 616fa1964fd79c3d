"""What the candidate reader's memos hold per entry (`memo.BoundedMemo`'s `size`): estimates that bound the
entries' real bytes, measured as the deep size of the objects an entry keeps alive (a candidate's view,
title, site and component trees; a reading's roles, site and fingerprint), so that the memos' budgets bound
memory. A frame costs far more than its text: its objects are counted per frame (`memo.frames_size`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from rounds_bot.grouping.memo import frames_size, text_size

if TYPE_CHECKING:
    from rounds_bot.grouping.stacktrace import Frame, ParsedTrace


class _Traced(Protocol):
    """What sizing reads of a candidate (`candidates.Candidate`, which imports this module): its trace."""

    @property
    def trace(self) -> ParsedTrace | None: ...


#: what a candidate holds beyond its key's text and its trace's frames: its view, title, site and the
#: components of its tree (measured: up to about 3.5 KB; its trees share their stacks with
#: `exception_chain`'s memo, yet this memo keeps them alive too)
CANDIDATE_BYTES = 4 * 1024
#: how many times a candidate holds its key's text: its view, title and tree's values are made of it
KEY_TEXT_COPIES = 4
#: what a trace candidate holds beyond any candidate's: its trace, roles, site and the trees of its
#: fingerprints (the app's and the system's) around their frames (measured: up to about 14.5 KB)
TRACE_CANDIDATE_BYTES = 15 * 1024
#: what a trace candidate holds per frame of its trace beyond the frame's text: the frame, its roles, and
#: its components in the fingerprint's trees
CANDIDATE_FRAME_BYTES = 768
#: what a reading holds beyond its frames: its roles, site and fingerprint (measured: up to about 13 KB)
READING_BYTES = 14 * 1024
#: what a reading holds per frame beyond the frame's text: the frame, its role and its components in the
#: reading's fingerprint
READING_FRAME_BYTES = 768


def candidate_size(key: tuple[object, ...], _: object) -> int:
    """A candidate of an error code or a template: its key's text, and what it is made of."""
    return KEY_TEXT_COPIES * text_size(key) + CANDIDATE_BYTES


def trace_candidate_size(key: tuple[object, ...], candidate: _Traced | None) -> int:
    """A trace candidate: as any candidate, and its trace's frames (none: its key alone)."""
    if candidate is None:
        return KEY_TEXT_COPIES * text_size(key)
    exceptions = () if candidate.trace is None else candidate.trace.exceptions
    return (
        candidate_size(key, candidate)
        + TRACE_CANDIDATE_BYTES
        + sum(frames_size(exception.frames, CANDIDATE_FRAME_BYTES) for exception in exceptions)
    )


def reading_size(
    key: tuple[str, tuple[str, ...], tuple[tuple[str, str, tuple[Frame, ...]], ...], str, bool], _: object
) -> int:
    """A reading of a trace's frames, kept per the frames (`candidates._ReadingKey`)."""
    runtime, notes, exceptions, service, _versions = key
    size = READING_BYTES + len(runtime) + len(service) + text_size(notes)
    for error_type, relation, frames in exceptions:
        size += len(error_type) + len(relation) + frames_size(frames, READING_FRAME_BYTES)
    return size
