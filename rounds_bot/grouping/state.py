"""What the round stores per signature, so a fresh engine can pick up where the last one left."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

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
    crash_site: str | None = Field(
        default=None, description="`module:function` of the innermost app frame; tier 3 never crosses it"
    )


def states_from_json(texts: Iterable[str]) -> list[SignatureState]:
    """Saved states read in bulk (from the database), with the garbage collector paused."""
    with collector_paused():
        return [SignatureState.model_validate_json(text) for text in texts]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while many long-lived objects are made at once:
    they hold no cycles to collect, and each collection would walk all of them again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
