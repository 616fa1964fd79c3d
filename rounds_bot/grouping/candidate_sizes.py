"""What the candidate reader's memos hold per entry (`memo.BoundedMemo`'s `size`): estimates that bound the
memos' real bytes, measured as the deep size of everything a memo keeps alive (a candidate's view, title,
site and component trees; a reading's roles, site and fingerprint), so that the memos' budgets bound memory.
Frames, their components and stacks' components are shared by many entries: a memo pays for each once
(`shared_costs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from rounds_bot.grouping.memo import Ledger, text_size
from rounds_bot.grouping.shared_costs import frames_cost, tree_cost

if TYPE_CHECKING:
    from rounds_bot.grouping.fingerprint import Fingerprint
    from rounds_bot.grouping.stacktrace import Frame, ParsedTrace

#: a reading's key (`candidates._ReadingKey`): runtime, notes, each exception's type, relation and frames,
#: service, and whether earlier versions' hashes are worked out
ReadingKey = tuple[str, tuple[str, ...], tuple[tuple[str, str, tuple["Frame", ...]], ...], str, bool]


class Candidate(Protocol):
    """What sizing reads of a candidate (`candidates.Candidate`, whose module imports this one)."""

    @property
    def trace(self) -> ParsedTrace | None: ...
    @property
    def fingerprint(self) -> Fingerprint: ...


class Reading(Protocol):
    """What sizing reads of a reading (`candidates._Reading`)."""

    @property
    def collapsed(self) -> tuple[tuple[Frame, ...], ...] | None: ...
    @property
    def fingerprint(self) -> Fingerprint | None: ...


#: what a candidate holds beyond its key's text and its trace's frames: its view, title, site and the
#: components of its tree (measured: up to about 3.5 KB; its trees share their stacks with
#: `exception_chain`'s memo, yet this memo keeps them alive too)
CANDIDATE_BYTES = 4 * 1024
#: how many times a candidate holds its key's text: its view, title and tree's values are made of it
KEY_TEXT_COPIES = 4
#: what a trace candidate holds of its own beyond any candidate's: its trace's objects, its site, its
#: fingerprint's object (its tree is counted by `shared_costs.tree_cost`)
TRACE_CANDIDATE_BYTES = 4 * 1024
#: what a trace candidate holds of its own per frame of its trace: the frame's slot in its trace's tuples and
#: its role (the role's object and reason: a candidate's roles are its reading's, counted in each memo)
CANDIDATE_FRAME_BYTES = 128
#: what a reading holds of its own beyond its frames and fingerprint tree: its roles' tuples, its site, its
#: fingerprint's object and the key's tuples
READING_BYTES = 4 * 1024
#: what a reading holds of its own per frame: the frame's slots in the key's and the collapsed frames'
#: tuples and its role (object and reason)
READING_FRAME_BYTES = 128


def candidate_size(key: tuple[object, ...], _: object) -> int:
    """A candidate of an error code or a template: its key's text, and what it is made of."""
    return KEY_TEXT_COPIES * text_size(key) + CANDIDATE_BYTES


def trace_candidate_size(key: tuple[object, ...], candidate: Candidate | None, ledger: Ledger) -> int:
    """A trace candidate: as any candidate, its frames and its fingerprint's tree (what other entries of the
    memo share, only when none has paid for it: `shared_costs`); none: its key alone."""
    if candidate is None:
        return KEY_TEXT_COPIES * text_size(key)
    size = candidate_size(key, candidate) + TRACE_CANDIDATE_BYTES
    if candidate.trace is not None:
        size += text_size(candidate.trace.notes)
        for exception in candidate.trace.exceptions:
            frames = exception.frames
            size += CANDIDATE_FRAME_BYTES * len(frames) + frames_cost(frames, ledger)
    return size + tree_cost(candidate.fingerprint.tree, ledger)


def reading_size(key: ReadingKey, reading: Reading, ledger: Ledger) -> int:
    """A reading of a trace's frames, kept per the frames (`candidates._ReadingKey`)."""
    runtime, notes, exceptions, service, _versions = key
    size = READING_BYTES + len(runtime) + len(service) + text_size(notes)
    for error_type, relation, frames in exceptions:
        size += (
            len(error_type) + len(relation) + READING_FRAME_BYTES * len(frames) + frames_cost(frames, ledger)
        )
    if reading.collapsed is not None:
        for frames in reading.collapsed:
            size += READING_FRAME_BYTES * len(frames) + frames_cost(frames, ledger)
    if reading.fingerprint is not None:
        size += tree_cost(reading.fingerprint.tree, ledger)
    return size
