"""An engine reading known signatures from the store is freed the moment it is let go: its registry and
template miner (which fetch known signatures for each other) hold no reference cycle, so a round reuses
their memory in the steps after grouping without waiting for the cyclic collector."""

from __future__ import annotations

import gc
import random
import weakref

import pytest
from test_grouping_corpus import EVENTS
from test_grouping_placement import placed_as_a_round
from test_grouping_store import saved, stream

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.registry import Registry, _fetching_into
from rounds_bot.store import Store


@pytest.mark.usefixtures("collector_off")
@pytest.mark.parametrize("seed", [1, 2])
def test_an_engine_over_known_signatures_is_freed_without_the_cyclic_collector(
    fresh_db: Store, seed: int
) -> None:
    events = [*EVENTS, *stream(seed, 200)]
    random.Random(seed).shuffle(events)
    known = GroupingEngine()
    for event in events[: len(events) // 2]:
        known.assign(event)
    saved(known, fresh_db)
    engine = GroupingEngine(lookup=fresh_db.grouping_lookup(unchanged_while_used=True))
    placed_as_a_round(engine, events)
    registry = weakref.ref(engine._known_signatures)
    miner = weakref.ref(engine._miner)
    assert registry() is not None and miner() is not None
    del engine
    assert registry() is None
    assert miner() is None


def test_a_miner_outliving_its_registry_fetches_nothing(fresh_db: Store) -> None:
    engine = GroupingEngine(lookup=fresh_db.grouping_lookup())
    fetch = _fetching_into(engine._known_signatures)
    assert fetch(["h:unknown"]) is False  # alive, and nothing is filed under the key
    orphan = Registry(engine._miner, engine._index, fresh_db.grouping_lookup())
    orphaned_fetch = _fetching_into(orphan)
    del orphan
    gc.collect()
    assert orphaned_fetch(["h:unknown"]) is False
