"""The memos' size estimates of entries holding stack frames bound the entries' real bytes: every entry
the corpus gives, and the corpus with its frames' names made long and non-ASCII, is estimated at no less
than its deep size (what it keeps alive, shared objects included), so the budgets bound memory."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from test_grouping_corpus import EVENTS

from rounds_bot.grouping import exception_chain, frames
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.memo import BoundedMemo
from rounds_bot.models import ErrorEvent
from tests.deep_size import deep_size

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]{2,}")
#: the words trace formats are recognised by, kept as they are
_KEYWORDS = frozenset(
    [
        "Traceback",
        "most",
        "recent",
        "call",
        "last",
        "File",
        "line",
        "during",
        "handling",
        "the",
        "above",
        "exception",
        "another",
        "occurred",
        "direct",
        "cause",
        "following",
        "was",
        "goroutine",
        "running",
        "created",
        "panic",
        "Caused",
        "Suppressed",
        "more",
        "Exception",
        "Error",
        "main",
        "at",
        "in",
        "native",
        "Native",
        "Method",
        "Unknown",
        "Source",
        "anonymous",
        "eval",
        "new",
        "async",
    ]
)
#: ASCII, Latin-1, CJK and astral characters: strings of one, two and four bytes a character
_ALPHABET = "abcxyz_" + "éü" + "漢字" + "😀"


def _with_odd_names(events: list[ErrorEvent], seed: int) -> list[ErrorEvent]:
    """The events with every identifier of their traces replaced, consistently, by a random one of up to
    80 characters of any width: the frames' text grows, their count and layout stay."""
    rng = random.Random(seed)
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        name = match.group(0)
        if name in _KEYWORDS or name.endswith(("Error", "Exception")):
            return name
        if name not in names:
            names[name] = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(3, 80)))
        return names[name]

    return [
        event.model_copy(update={"stacktrace": _IDENTIFIER.sub(rename, event.stacktrace)})
        if event.stacktrace
        else event
        for event in events
    ]


_Put = tuple[str, object, object, int]


@contextmanager
def _recorded(memos: dict[str, BoundedMemo[object, object]]) -> Iterator[list[_Put]]:
    """Every entry put in `memos`, with its estimate."""
    puts: list[_Put] = []
    originals: dict[str, Callable[[object, object], int]] = {}
    for name, memo in memos.items():
        size = originals[name] = memo._size

        def recording(key: object, value: object, name: str = name, size: Callable[..., int] = size) -> int:
            estimate = size(key, value)
            puts.append((name, key, value, estimate))
            return estimate

        memo._size = recording
    try:
        yield puts
    finally:
        for name, memo in memos.items():
            memo._size = originals[name]


def _memos_holding_frames(engine: GroupingEngine) -> dict[str, BoundedMemo[object, object]]:
    candidates = engine._candidates
    return {
        "stacks": exception_chain._STACKS,
        "frame components": frames._COMPONENTS,
        "trace candidates": candidates._trace_candidates,
        "readings": candidates._readings,
        "template fingerprints": candidates._template_fingerprints,
        "code candidates": candidates._code_candidates,
        "parses by content": candidates._traces._by_content,
        "cut readings": candidates._traces._cuts,
    }


@pytest.mark.parametrize("seed", [None, 1, 2])
def test_each_entry_of_a_memo_holding_frames_is_estimated_at_no_less_than_its_deep_size(
    seed: int | None,
) -> None:
    events = EVENTS if seed is None else _with_odd_names(EVENTS, seed)
    for memo in (exception_chain._STACKS, frames._COMPONENTS):
        memo.clear()  # entries of earlier tests would not be put again
    engine = GroupingEngine()
    memos = _memos_holding_frames(engine)
    with _recorded(memos) as puts:
        engine.assign_all(events)
    seen = {name for name, *_ in puts}
    assert {"stacks", "frame components", "trace candidates", "readings", "parses by content"} <= seen
    under = [
        (name, estimate, deep_size((key, value)))
        for name, key, value, estimate in puts
        if estimate < deep_size((key, value))
    ]
    assert not under, under[:5]
