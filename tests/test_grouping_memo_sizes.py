"""The memos' size estimates of entries holding stack frames bound the entries' real bytes: every entry
the corpus gives, and the corpus with its frames' names made long and non-ASCII, is estimated at no less
than its deep size (what it keeps alive, shared objects included), so the budgets bound memory."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest
from test_grouping_corpus import EVENTS

from rounds_bot.grouping import exception_chain, frames
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.memo import BoundedMemo, SharingMemo
from rounds_bot.grouping.trace_memo import TraceMemo
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


#: an estimate and the deep size of what it estimates, of a memo named
_Check = tuple[str, int, int]


def _checked_when_fullest(
    memos: dict[str, BoundedMemo[object, object]], monkeypatch: pytest.MonkeyPatch
) -> list[_Check]:
    """Each memo's estimate beside the deep size of all it holds when it is fullest, before each clear
    (the caller checks them once more at the end: `_fullest`)."""
    checks: list[_Check] = []
    names = {id(memo): name for name, memo in memos.items()}
    for cls in (BoundedMemo, SharingMemo):
        clear = cls.clear

        def clearing(memo: BoundedMemo[object, object], clear: Callable[..., None] = clear) -> None:
            name = names.get(id(memo))
            if name is not None and len(memo):
                checks.append((name, memo.held, deep_size(memo._data)))
            clear(memo)

        monkeypatch.setattr(cls, "clear", clearing)
    return checks


def _fullest(memos: dict[str, BoundedMemo[object, object]], checks: list[_Check]) -> list[_Check]:
    return [*checks, *((name, memo.held, deep_size(memo._data)) for name, memo in memos.items() if len(memo))]


@pytest.mark.parametrize("seed", [None, 1, 2])
def test_each_memo_holding_frames_is_estimated_at_no_less_than_the_deep_size_of_all_it_holds(
    seed: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = EVENTS if seed is None else _with_odd_names(EVENTS, seed)
    for memo in (exception_chain._STACKS, frames._COMPONENTS):
        memo.clear()  # entries of earlier tests would not be put again
    engine = GroupingEngine()
    memos = _memos_holding_frames(engine)
    checks = _checked_when_fullest(memos, monkeypatch)
    engine.assign_all(events)
    checks = _fullest(memos, checks)
    assert {"stacks", "frame components", "trace candidates", "readings", "parses by content"} <= {
        name for name, *_ in checks
    }
    under = [(name, held, deep) for name, held, deep in checks if held < deep]
    assert not under, under[:5]


def test_a_cut_texts_readings_are_charged_as_they_are_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cut text's entry gives a reading per normalised message after it was put (`_CutEntry.given`): each is
    charged then, so long messages in wide characters (2,000 a message, 8 a trace) cannot make the entries
    hold more than the memo's estimate (they once held ten times their estimate)."""
    rng = random.Random(1)
    memo = TraceMemo()
    memos: dict[str, BoundedMemo[object, object]] = {
        "cut readings": memo._cuts,  # type: ignore[dict-item]
        "parses by content": memo._by_content,  # type: ignore[dict-item]
    }
    checks = _checked_when_fullest(memos, monkeypatch)
    for trace in range(60):
        for _ in range(8):
            message = "".join(rng.choice("漢字éü") for _ in range(2000))
            text = f'Traceback (most recent call last):\n  File "/app/m{trace}.py", line 3, in f\n    g()\n'
            memo.parsed(f"{text}ValueError: {message}", message)
    checks = _fullest(memos, checks)
    assert {name for name, *_ in checks} == set(memos)
    under = [(name, held, deep) for name, held, deep in checks if held < deep]
    assert not under, under[:5]
