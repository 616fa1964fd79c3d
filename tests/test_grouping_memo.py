"""The engine's memos are bounded by entries and by the bytes they hold, and are cleared whole."""

from __future__ import annotations

import gc

import pytest
from test_grouping_corpus import EVENTS

from rounds_bot.grouping import components, exception_chain, frames, memo, stacktrace
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.memo import ENGINE_BUDGET, OVERHEAD, BoundedMemo, SharingMemo, text_size
from rounds_bot.grouping.stacktrace.reading import LINE_MEMO_BUDGET
from rounds_bot.models import Assignment, ErrorEvent


def test_a_memo_full_by_entries_is_cleared_whole_before_the_next_entry() -> None:
    memo: BoundedMemo[str, int] = BoundedMemo(entries=2, budget=1 << 20)
    memo.put("a", 1)
    memo.put("b", 2)
    memo.put("c", 3)
    assert len(memo) == 1 and memo.get("c") == 3 and memo.get("a") is None


def test_a_memo_full_by_bytes_is_cleared_whole_before_the_next_entry() -> None:
    memo: BoundedMemo[str, str] = BoundedMemo(entries=100, budget=2 * OVERHEAD + 20)
    memo.put("k1", "x" * 10)
    assert memo.held == text_size("k1", "x" * 10)
    memo.put("k2", "y" * 10)  # would hold 2 * (OVERHEAD + 12) bytes: over the budget
    assert len(memo) == 1 and "k2" in memo and "k1" not in memo


def test_an_entry_larger_than_the_whole_budget_is_never_kept() -> None:
    memo: BoundedMemo[str, str] = BoundedMemo(entries=100, budget=OVERHEAD + 10)
    assert memo.put("big", "z" * 100) == "z" * 100
    assert len(memo) == 0 and memo.held == 0


def test_text_size_counts_the_text_of_keys_values_and_tuple_keys() -> None:
    assert text_size("abc", "de") == OVERHEAD + 5
    assert text_size(("abc", None, b"xy"), 3) == OVERHEAD + 5


class _Part:
    """An object entries may share."""


def _sharing_memo(budget: int = 1 << 20) -> SharingMemo[str, tuple[_Part, ...]]:
    """A memo charging 10 bytes an entry, and 100 for each part it holds that no entry kept has paid for."""
    return SharingMemo(
        100, budget, lambda _, parts, ledger: 10 + sum(ledger.once(part, 100) for part in parts)
    )


def test_a_sharing_memo_charges_an_object_its_entries_share_once() -> None:
    shared, own = _Part(), _Part()
    memo = _sharing_memo()
    memo.put("a", (shared,))
    memo.put("b", (shared, own, own))
    assert memo.held == (10 + 100) + (10 + 100)


def test_a_cleared_sharing_memo_charges_its_next_entry_for_everything_it_holds() -> None:
    shared = _Part()
    memo = _sharing_memo(budget=250)
    memo.put("a", (shared,))
    memo.put("b", (_Part(),))
    memo.put("c", (shared, _Part()))  # 210 more: over the budget, so the memo is cleared, and pays it all
    assert len(memo) == 1 and memo.held == 210


def test_an_entry_a_sharing_memo_does_not_keep_leaves_nothing_paid_for() -> None:
    shared = _Part()
    memo = _sharing_memo(budget=150)
    memo.put("big", (shared, _Part()))  # 210: more than the memo may hold, so not kept
    memo.put("a", (shared,))
    assert len(memo) == 1 and memo.held == 110  # the part was not paid for by an entry it does not keep


def test_a_sharing_memo_keeps_the_entry_it_holds_under_a_key_given_again() -> None:
    first, second = (_Part(),), (_Part(),)
    memo = _sharing_memo()
    memo.put("a", first)
    assert memo.put("a", second) is second  # what is given is given back, as `BoundedMemo.put` does
    assert memo.get("a") is first and memo.held == 110  # what it paid for is what it still holds


def _memos_of(*holders: object) -> list[BoundedMemo[object, object]]:
    found = []
    for holder in holders:
        for name in getattr(holder, "__slots__", ()) or vars(holder):
            value = getattr(holder, name, None)
            if isinstance(value, BoundedMemo):
                found.append(value)
    return found


def test_the_budgets_of_an_engines_memos_add_up_to_at_most_the_stated_total() -> None:
    engine = GroupingEngine()
    candidates = engine._candidates
    per_engine = _memos_of(
        candidates,
        candidates._traces,
        candidates.cut_digests,
        engine._explainer,
        engine._shapes,
        engine._known_signatures,
    )
    shared = [exception_chain._STACKS, components._STACK_LINES, frames._COMPONENTS, frames._MODULE_PATHS]
    line_memos = len(stacktrace._FRAME_LINES) + 2  # and the runtime votes and JVM frames kept per line
    assert len(memo._SHARED) == len(shared) + line_memos  # every one shared is cleared with the engines
    assert all(any(held is m for held in memo._SHARED) for m in shared)
    assert len(per_engine) == 14  # the message shapes' memo and the lookup keys asked for among them
    total = sum(m._budget for m in [*per_engine, *shared]) + line_memos * LINE_MEMO_BUDGET
    assert total == ENGINE_BUDGET  # the stated total is the sum, not a bound left loose


def test_the_shared_memos_are_cleared_once_no_engine_is_alive_and_the_answers_stay_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gc.collect()  # the engines of earlier tests let go; only this test's count, the collector off meanwhile
    monkeypatch.setattr(memo._Holders, "alive", 0)
    gc.disable()
    try:
        first = GroupingEngine()
        before = first.assign_all(EVENTS)
        assert any(len(shared) for shared in memo._SHARED)
        second = GroupingEngine()
        del first
        assert any(len(shared) for shared in memo._SHARED)  # an engine is still alive
        assert second.assign_all(EVENTS) == before
        del second
        assert all(len(shared) == 0 and shared.held == 0 for shared in memo._SHARED)
        assert GroupingEngine().assign_all(EVENTS) == before
    finally:
        gc.enable()


def _placed(engine: GroupingEngine, events: list[ErrorEvent]) -> list[tuple[str, str, Assignment | None]]:
    """Each event's placement, the signatures placed kept as a round keeps them (`place_each`)."""
    kept: set[str] = set()
    placements = []
    for placed in engine.place_each(events, kept):
        kept.add(placed.signature_id)
        placements.append((placed.signature_id, placed.tier, placed.assignment))
    return placements


def test_an_engine_whose_memos_keep_nothing_answers_as_one_whose_memos_keep_what_their_budgets_allow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The corpus twice: the second time, every memo a budget lets keep its entries answers from them.
    events = [*EVENTS, *EVENTS]
    assigned, placed = GroupingEngine().assign_all(events), _placed(GroupingEngine(), events)
    for shared in memo._SHARED:
        shared.clear()
    # a memo that keeps nothing is one cleared before every lookup: the smallest budget there can be
    monkeypatch.setattr(BoundedMemo, "put", lambda self, key, value: value)
    assert GroupingEngine().assign_all(events) == assigned
    assert _placed(GroupingEngine(), events) == placed
