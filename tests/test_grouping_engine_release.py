"""An engine let go as a round reads its signatures' states (`GroupingEngine.released_states`): the states are
those `state` gives, whatever the engine was given or looked up; the engine and every memo engines share are
freed as they are read (without the cyclic collector), the engine refuses any later use, and an engine made
afterwards, in the same process, answers as one in a fresh process."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
from test_grouping_corpus import EVENTS
from test_grouping_placement import placed_as_a_round
from test_grouping_store import saved, stream

from rounds_bot.grouping import inapp, memo, terms
from rounds_bot.grouping.engine import EngineReleased, GroupingEngine
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.store import Store

ROOT = Path(__file__).resolve().parents[1]


def _events(seed: int) -> list[ErrorEvent]:
    events = [*EVENTS, *stream(seed, 300)]
    random.Random(seed).shuffle(events)
    return events


def _signature_ids(engine: GroupingEngine, seed: int) -> list[str]:
    """The engine's signatures in a shuffled order, with ids it never loaded among them."""
    ids = [*engine.signature_ids(), "sig_never_seen", "sig_0000000000000000"]
    random.Random(seed).shuffle(ids)
    return ids


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_released_states_are_those_the_engine_gives_for_the_signatures_it_knows(seed: int) -> None:
    events = _events(seed)
    read, released = GroupingEngine(), GroupingEngine()
    placed_as_a_round(read, events)
    placed_as_a_round(released, events)
    ids = _signature_ids(read, seed)
    expected = {}
    for signature_id in ids:
        try:
            expected[signature_id] = read.state(signature_id)
        except KeyError:
            continue
    got = list(released.released_states(ids))
    assert [signature_id for signature_id, _ in got] == list(expected)  # in the order asked, unknown left out
    assert dict(got) == expected
    assert any(state.templates for state in expected.values())
    assert any(state.similarity is not None for state in expected.values())


@pytest.mark.parametrize("seed", [4, 5])
def test_the_released_states_of_an_engine_over_known_signatures_are_those_it_gives(
    fresh_db: Store, seed: int
) -> None:
    events = _events(seed)
    known = GroupingEngine()
    for event in events[: len(events) // 2]:
        known.assign(event)
    saved(known, fresh_db)
    read = GroupingEngine(lookup=fresh_db.grouping_lookup(unchanged_while_used=True))
    released = GroupingEngine(lookup=fresh_db.grouping_lookup(unchanged_while_used=True))
    placed = [p.signature_id for p in placed_as_a_round(read, events)]
    assert [p.signature_id for p in placed_as_a_round(released, events)] == placed
    # the signatures a round reads: those its events were placed in, a known one among them
    ids = list(dict.fromkeys(placed))
    assert set(ids) & {state.signature_id for state in saved(known, Store.memory())}
    expected = {signature_id: read.state(signature_id) for signature_id in ids}
    assert dict(released.released_states(ids)) == expected


def test_a_released_engine_refuses_to_place_or_to_give_a_state() -> None:
    engine = GroupingEngine()
    first = engine.assign(EVENTS[0])
    states = engine.released_states([first.signature_id])  # let go here, before its states are read
    with pytest.raises(EngineReleased):
        engine.assign(EVENTS[1])
    with pytest.raises(EngineReleased):
        list(engine.place_each(EVENTS[:2], set()))
    with pytest.raises(EngineReleased):
        engine.assign_message("disk full", "api")
    with pytest.raises(EngineReleased):
        engine.state(first.signature_id)
    with pytest.raises(EngineReleased):
        engine.released_states([first.signature_id])
    assert [signature_id for signature_id, _ in states] == [first.signature_id]


@pytest.mark.usefixtures("collector_off")
def test_a_released_engine_holds_nothing_once_its_states_are_read(fresh_db: Store) -> None:
    events = _events(6)
    known = GroupingEngine()
    for event in events[: len(events) // 2]:
        known.assign(event)
    saved(known, fresh_db)
    del known
    engine = GroupingEngine(lookup=fresh_db.grouping_lookup(unchanged_while_used=True))
    placed = placed_as_a_round(engine, events)
    # what reads the states (the registry, with the miner, index and store look-up it reads) is freed once
    # they are read
    readers = {"_known_signatures", "_miner", "_index", "_lookup", "config"}
    parts = {
        name: weakref.ref(part) for name, part in vars(engine).items() if name not in readers and _weak(part)
    }
    registry, miner, index = engine._known_signatures, engine._miner, engine._index
    held = [weakref.ref(registry), weakref.ref(miner), weakref.ref(index)]
    states = engine.released_states(dict.fromkeys(p.signature_id for p in placed))
    del registry
    assert len(parts) > 5 and [name for name, part in parts.items() if part() is not None] == []
    assert memo._SHARED and all(len(shared) == 0 for shared in memo._SHARED)
    assert not terms._FEATURES and not inapp._OWNED
    read = 0
    for _ in states:
        read += 1
        assert miner._by_skeleton == {} and miner._cached == {}  # what matching reads: dropped first
    assert read == len(set(p.signature_id for p in placed))
    del miner, index
    assert [part() for part in held] == [None, None, None]


def _weak(part: object) -> bool:
    try:
        weakref.ref(part)
    except TypeError:
        return False
    return True


def test_the_memos_engines_share_answer_the_same_once_cleared_and_filled_again() -> None:
    events = _events(7)
    engine = GroupingEngine()
    before = engine.assign_all(events)
    assert terms._FEATURES and inapp._OWNED
    features = dict(terms._FEATURES)
    owned = dict(inapp._OWNED)
    memo.forget_shared()
    assert not terms._FEATURES and not inapp._OWNED
    assert all(terms.feature_of(term) == feature for term, feature in features.items())
    assert GroupingEngine().assign_all(events) == before
    assert owned == inapp._OWNED


def test_the_owner_memo_cleared_whenever_it_is_full_answers_as_one_that_keeps_every_pair(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`inapp._OWNED` is small (a pair is asked about about twice a round): cleared at every second pair, the
    assignments, explanations included, are those of a memo that never forgets."""
    events = _events(8)
    memo.forget_shared()
    monkeypatch.setattr(inapp, "_OWNED_LIMIT", 10**9)
    engine = GroupingEngine()  # (the shared memos are cleared when the last engine is let go)
    kept_whole = engine.assign_all(events)
    assert len(inapp._OWNED) > 2
    del engine
    memo.forget_shared()
    monkeypatch.setattr(inapp, "_OWNED_LIMIT", 2)
    engine = GroupingEngine()
    assert engine.assign_all(events) == kept_whole
    assert len(inapp._OWNED) <= 2


#: a fresh process's assignments of the events of a seed, as JSON
_FRESH = """
import json, sys
sys.path.insert(0, "tests")
from test_grouping_engine_release import _events, _dumped
from rounds_bot.grouping.engine import GroupingEngine
print(json.dumps(_dumped(GroupingEngine().assign_all(_events(int(sys.argv[1]))))))
"""


def _dumped(assignments: list[Assignment]) -> list[dict[str, object]]:
    return [assignment.model_dump(mode="json") for assignment in assignments]


def test_an_engine_made_after_one_is_released_answers_as_one_in_a_fresh_process() -> None:
    first = GroupingEngine()
    placed = placed_as_a_round(first, _events(8))
    assert list(first.released_states(dict.fromkeys(p.signature_id for p in placed)))
    del first
    later = _dumped(GroupingEngine().assign_all(_events(9)))
    fresh = subprocess.run(
        [sys.executable, "-c", _FRESH, "9"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert later == json.loads(fresh)
