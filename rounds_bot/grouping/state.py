"""What the round stores per signature, so a fresh engine can pick up where the last one left."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pydantic import Field

from rounds_bot.grouping.fingerprint import FINGERPRINT_VERSION
from rounds_bot.grouping.templates import TemplateState
from rounds_bot.grouping.vectors import SimilarityVector
from rounds_bot.models import Frozen


class SignatureState(Frozen):
    """All a signature needs to be re-loaded into a fresh engine (stored per signature)."""

    signature_id: str
    service: str
    fingerprint_version: str = FINGERPRINT_VERSION
    seq: int = Field(description="creation order; breaks ties deterministically")
    title: str = ""
    hashes: list[str] = Field(default_factory=list, description="fingerprint hashes of this group")
    error_codes: list[str] = Field(default_factory=list)
    templates: list[TemplateState] = Field(default_factory=list)
    similarity: SimilarityVector | None = None
    related: list[str] = Field(default_factory=list)
    related_similarity: dict[str, float] = Field(
        default_factory=dict,
        description="the TF-IDF cosine the engine found for a related signature, the first time it named it",
    )
    crash_site: str | None = Field(
        default=None, description="`module:function` of the innermost app frame; tier 3 never crosses it"
    )


#: objects made at once from which on they are kept out of the collector's walks (see `collector_paused`)
BULK = 10_000


def states_from_json(texts: Iterable[str]) -> list[SignatureState]:
    """Saved states read in bulk (from the database), with the garbage collector paused."""
    with collector_paused() as pause:
        states = [SignatureState.model_validate_json(text) for text in texts]
        pause.made = len(states)
    return states


@dataclass
class Pause:
    #: how many long-lived things the paused code made (set by it; see `collector_paused`)
    made: int = 0


@contextmanager
def collector_paused() -> Iterator[Pause]:
    """Pause Python's cyclic garbage collector while many long-lived objects are made at once:
    they hold no cycles to collect, and each collection would walk all of them again.

    When the paused code made `BULK` or more (it says so in `Pause.made`), every object tracked
    so far is moved out of the collector's sight (`gc.freeze`): otherwise the first collections
    after the pause walk each of them up to three times (once per generation), about a quarter
    of a second for 100,000 signatures, and later full collections again, to find nothing. Frozen
    objects are still freed when no longer referenced; only a reference cycle that was garbage
    at that moment is never collected, a bounded cost paid at most once per bulk load.
    """
    enabled = gc.isenabled()
    gc.disable()
    pause = Pause()
    try:
        yield pause
    finally:
        if pause.made >= BULK:
            gc.freeze()
        if enabled:
            gc.enable()
