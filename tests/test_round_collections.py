"""A round collects cyclic garbage less often, and gives the caller its own thresholds back, failed or not."""

from __future__ import annotations

import gc

import pytest

from rounds_bot.round.run import ROUND_GC_THRESHOLDS, fewer_collections


def test_the_thresholds_hold_inside_and_are_the_callers_again_after_even_a_failure() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == ROUND_GC_THRESHOLDS
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("the round failed")
    assert gc.get_threshold() == before


def test_garbage_in_cycles_is_still_collected_inside() -> None:
    class Node:
        def __init__(self) -> None:
            self.me = self

    with fewer_collections():
        for _ in range(10 * ROUND_GC_THRESHOLDS[0]):
            Node()
        assert gc.get_count()[0] < ROUND_GC_THRESHOLDS[0]
