"""The registry remembers which lookup keys and hashes it asked the store for in bounded memos: one that
forgets (cleared whole when full) asks again, finds what it found before, and groups exactly alike."""

from __future__ import annotations

import random

import pytest
from test_grouping_corpus import EVENTS
from test_grouping_placement import placed_as_a_round
from test_grouping_store import saved, stream

from rounds_bot.grouping import registry as registry_module
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.known import KnownSignatures
from rounds_bot.grouping.memo import OVERHEAD
from rounds_bot.grouping.placement import Placement
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import ErrorEvent
from rounds_bot.store import Store


class CountedLookup:
    """A lookup that counts the keys it is asked for (and answers as the store does)."""

    def __init__(self, store: Store) -> None:
        self._lookup: KnownSignatures = store.grouping_lookup()
        self.keys_asked = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._lookup, name)

    def find(self, keys: list[str]) -> list[SignatureState]:
        self.keys_asked += len(keys)
        return self._lookup.find(keys)


def second_round(store: Store, events: list[ErrorEvent]) -> tuple[list[Placement], dict[str, object], int]:
    """A round over a store of known signatures: its placements, the states it keeps, the keys it asked."""
    lookup = CountedLookup(store)
    engine = GroupingEngine(lookup=lookup)
    placements = placed_as_a_round(engine, events)
    states: dict[str, object] = {s: engine.state(s) for s in engine.signature_ids()}
    return placements, states, lookup.keys_asked


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_round_whose_asked_memos_hold_almost_nothing_groups_as_one_that_remembers_every_key(
    fresh_db: Store, seed: int
) -> None:
    rng = random.Random(seed)
    events = [*EVENTS, *stream(seed, 300)]
    rng.shuffle(events)
    known = GroupingEngine()
    for event in events[: len(events) // 2]:
        known.assign(event)
    saved(known, fresh_db)
    later = events[len(events) // 3 :] + rng.sample(events, len(events) // 2)  # known, new and repeated
    remembering = second_round(fresh_db, later)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(registry_module, "ASKED_KEYS", 2)
        patch.setattr(registry_module, "ASKED_HASHES_BUDGET", OVERHEAD + 80)  # about one hash
        forgetting = second_round(fresh_db, later)
    assert forgetting[:2] == remembering[:2]
    assert forgetting[2] > remembering[2]  # it did forget, and asked again
