"""The ids a round has read (`IdSet`): exactly a Python set's answers, most ids packed past the first few."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rounds_bot.round.occurrences import _not_counted
from rounds_bot.sources import id_set
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.id_set import FILTER_BITS, RECENT, IdSet
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from tests.test_round_streaming import NOW, event

SAMPLE = Path(__file__).parent / "fixtures" / "otlp" / "shop_sample.otlp.jsonl"


def _keys(rng: random.Random) -> list[int | str]:
    """Ids as a round keys them, and ids made to be awkward: on one filter bit, equal to a bool, too big to
    pack, negative, texts that look like numbers."""
    usual: list[int | str] = [rng.getrandbits(128) for _ in range(400)]
    one_bit: list[int | str] = [n * FILTER_BITS for n in range(1, 60)]  # `hash` & mask: all on bit 0
    high_only: list[int | str] = [n << 100 for n in range(60)]
    odd: list[int | str] = [0, 1, 2**128 - 1, 2**128, 2**200, -1, -(2**70), "1", "ab" * 16, "", "group:7"]
    return usual + one_bit + high_only + odd


@pytest.mark.parametrize("recent", [1, 2, 7, 64, 100_000])
def test_an_id_set_answers_as_a_python_set_whatever_is_packed(recent: int) -> None:
    rng = random.Random(recent)
    pool = _keys(rng)
    ids, expected = IdSet(recent=recent), set[int | str]()
    for _ in range(4_000):
        key = rng.choice(pool)
        assert ids.first(key) is (key not in expected)
        expected.add(key)
        probe = rng.choice([*pool[:50], rng.getrandbits(128), True, False])
        assert (probe in ids) is (probe in expected)
    assert len(ids) == len(expected)
    assert all(key in ids for key in expected)
    if recent < 100:
        assert ids.packed > 0


def test_an_id_set_of_the_default_size_answers_as_a_python_set_past_several_packs() -> None:
    """What `RECENT` is changes only how many ids stay objects: ids repeated across several packed batches,
    and new ones, are told as a set tells them."""
    rng = random.Random(16)
    ids, expected = IdSet(), set[int | str]()
    added = [rng.getrandbits(128) for _ in range(3 * RECENT + 5)]
    for key in added:
        assert ids.first(key) is (key not in expected)
        expected.add(key)
    assert ids.packed >= 3 * RECENT
    for key in rng.sample(added, 2_000) + [rng.getrandbits(128) for _ in range(2_000)]:
        assert ids.first(key) is (key not in expected)
        expected.add(key)
    assert len(ids) == len(expected)


def test_ids_past_the_recent_ones_are_packed_not_kept_as_objects() -> None:
    ids = IdSet(range(10_000), recent=100)
    assert len(ids) == 10_000
    assert ids.packed >= 10_000 - 100
    assert all(ids.first(n) is False for n in range(10_000))
    assert all(ids.first(n) is True for n in range(10_000, 10_050))


def test_a_small_set_packs_nothing() -> None:
    ids = IdSet(range(1_000))
    assert ids.packed == 0 and len(ids) == 1_000


def test_a_file_read_with_its_ids_packed_gives_the_same_poll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "three_times.jsonl"
    path.write_text(SAMPLE.read_text() * 3)  # every record repeated
    everything = Window(start=NOW.replace(year=2000), end=NOW.replace(year=2100))
    kept = OtlpFileSource(path).poll(everything, frozenset())
    monkeypatch.setattr(id_set, "RECENT", 2)
    packed = OtlpFileSource(path).poll(everything, frozenset())
    assert list(packed.events) == list(kept.events)
    assert (packed.already_counted, packed.notes) == (kept.already_counted, kept.notes)


def test_the_events_not_counted_are_the_same_with_their_ids_packed(monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store.memory()
    store.mark_seen([(f"{n:032x}", "sig_1", NOW) for n in (2, 5)])
    window = Window(start=NOW, end=NOW.replace(year=2100))
    events = [event(n, trace_id=f"{n % 3:032x}" if n % 2 else None) for n in range(40)]
    events += [event(0, event_id="not-hex"), event(1, event_id="NOT-HEX"), event(2, event_id="not-hex")]
    events += events[::3]  # read twice
    polled = PollResult(events=events, already_counted=3)
    kept = _not_counted(store, window, polled)
    monkeypatch.setattr(id_set, "RECENT", 3)
    packed = _not_counted(store, window, polled)
    assert list(packed.to_group) == list(kept.to_group) and list(packed.enclosed) == list(kept.enclosed)
    assert (packed.already_counted, packed.others) == (kept.already_counted, kept.others)
