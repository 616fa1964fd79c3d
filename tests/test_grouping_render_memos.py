"""The memos that draw a fingerprint's tree (the explainer's, by fingerprint, and the stacks' lines,
`components._STACK_LINES`) hold what they drew weakly: a tree nobody else holds is freed at once, and what
is drawn is what drawing it anew gives, however many trees come and go (and their ids are reused)."""

from __future__ import annotations

import random
import weakref

import pytest

from rounds_bot.grouping import components
from rounds_bot.grouping.components import Component, leaf, node, render
from rounds_bot.grouping.explanation import Explainer
from rounds_bot.grouping.fingerprint import Fingerprint
from rounds_bot.settings.grouping import GroupingConfig


def _tree(rng: random.Random) -> Component:
    frames = [
        node(
            "frame",
            leaf("module", f"shop.m{rng.randrange(5)}"),
            leaf("function", f"f{rng.randrange(5)}", hint=None if rng.random() < 0.7 else "not in-app"),
        )
        for _ in range(rng.randrange(1, 6))
    ]
    return node("app", leaf("type", f"E{rng.randrange(3)}"), node("stacktrace", *frames))


def _drawn_anew(tree: Component) -> str:
    components._STACK_LINES.clear()
    return render(tree)


def _fingerprint(tree: Component) -> Fingerprint:
    return Fingerprint(variant="app", hash="h", tree=tree)


def test_trees_are_drawn_as_drawing_them_anew_draws_them_however_they_come_and_go() -> None:
    rng = random.Random(3)
    explainer = Explainer(GroupingConfig())
    kept: list[Fingerprint] = []
    for _ in range(400):
        tree = _tree(rng)
        fingerprint = _fingerprint(tree)
        if rng.random() < 0.3:
            kept.append(fingerprint)  # some stay alive, to be drawn again; the rest are let go
        again = rng.choice(kept) if kept and rng.random() < 0.5 else fingerprint
        drawn = render(again.tree)
        explained = explainer.explain(again, "new", "sig_1", None, [])
        expected = _drawn_anew(again.tree)
        assert drawn == expected
        assert explained.split("\nnew signature")[0] == expected


@pytest.mark.usefixtures("collector_off")
def test_a_tree_drawn_and_explained_is_freed_once_nobody_holds_it() -> None:
    explainer = Explainer(GroupingConfig())
    fingerprint = _fingerprint(_tree(random.Random(1)))
    stack = fingerprint.tree.children[-1]
    assert stack.name == "stacktrace"
    first = explainer.explain(fingerprint, "new", "sig_1", None, [])
    assert explainer.explain(fingerprint, "new", "sig_1", None, []) == first
    held_fingerprint, held_stack = weakref.ref(fingerprint), weakref.ref(stack)
    del fingerprint, stack
    assert held_fingerprint() is None and held_stack() is None
