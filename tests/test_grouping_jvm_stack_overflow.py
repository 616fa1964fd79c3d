"""A stack overflow cut inside its recursion: HotSpot prints a thread's innermost 1,024 frames
(`MaxJavaStackTraceDepth`), Go before 1.21 its innermost 100, a Python traceback printed with a limit its last
entries, so no frame below the cycle is printed and which frame of the cycle is outermost depends on where the
stack ran out. The cycle's pass is rotated to start at the frame that sorts first: one bug, one crash site,
one signature at any depth; a signature the previous release made from either cut keeps receiving it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import engine_knowing

from rounds_bot.grouping.crash_site import site_of_text
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.frames import collapse_leading_cycle
from rounds_bot.grouping.stacktrace import Frame
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
DEPTH = "\tat com.acme.tree.Node.depth(Node.java:31)\n"
CHILD_DEPTH = "\tat com.acme.tree.Node.childDepth(Node.java:40)\n"


def _jvm(top: str, frames: int = 1024) -> str:
    """`Node.depth` and `Node.childDepth` calling each other until the stack ran out, `top` innermost."""
    cycle = (DEPTH, CHILD_DEPTH) if top == "depth" else (CHILD_DEPTH, DEPTH)
    lines = "".join(cycle[index % 2] for index in range(frames))
    return 'Exception in thread "main" java.lang.StackOverflowError\n' + lines


#: the hashes the previous release stored for a signature it made from `_jvm(top)` (its `GroupingEngine`
#: assigned an event of service `tree` with that stack trace, and its state of the signature held these): it
#: kept the pass the cut left outermost, so the two cuts were two signatures (`depth`'s reads otherwise now)
PREVIOUS_RELEASE_HASHES = {
    "depth": (
        "dce0f4f41e4cf73c99803e2f40ff1923da6293f62b4be779282adc4c2a3d0caa",
        "c80e4db74d4e7e966ac6bc7434fa8899052e67ec8faa6c786bc9be40397a37ec",
    ),
    "childDepth": (
        "81c0ce96cd3fd66bd10b88aa335785b682c90b5a7c7e66b734218c7788b58784",
        "08f7aea7469e202157cbd73838b7d273f5640a7e3bebbbf20de12431bd13376e",
    ),
}


def _go(top: str, frames: int = 100) -> str:
    """Go's fatal stack overflow before 1.21: its innermost 100 frames, `...additional frames elided...`."""
    walk = "main.walk(0xc000012345?)\n\t/app/tree/walk.go:12 +0x25\n"
    visit = "main.visit(0xc000012345?)\n\t/app/tree/walk.go:20 +0x3a\n"
    cycle = (walk, visit) if top == "walk" else (visit, walk)
    return (
        "runtime: goroutine stack exceeds 1000000000-byte limit\n"
        "runtime: sp=0xc020160398 stack=[0xc020160000, 0xc040160000]\n"
        "fatal error: stack overflow\n\n"
        "runtime stack:\n"
        "runtime.throw({0x4a0b5d?, 0x0?})\n\t/usr/local/go/src/runtime/panic.go:1047 +0x5d\n"
        "runtime.newstack()\n\t/usr/local/go/src/runtime/stack.go:1105 +0x5bd\n"
        "runtime.morestack()\n\t/usr/local/go/src/runtime/asm_amd64.s:570 +0x8b\n\n"
        "goroutine 1 [running]:\n"
        + "".join(cycle[index % 2] for index in range(frames))
        + "...additional frames elided...\n"
    )


def _python(top: str, entries: int, *, entry: bool) -> str:
    """A RecursionError of `walk` and `visit`, `top` innermost; `entry=False` prints its last entries only
    (a limit), the module that started the recursion left out."""
    walk = '  File "/app/tree/walk.py", line 12, in walk\n    return visit(node.child)\n'
    visit = '  File "/app/tree/walk.py", line 20, in visit\n    return walk(node.left)\n'
    cycle = (walk, visit) if top == "walk" else (visit, walk)
    printed = [cycle[index % 2] for index in range(entries)][::-1]  # oldest first
    start = '  File "/app/tree/main.py", line 4, in <module>\n    walk(root)\n' if entry else ""
    return (
        "Traceback (most recent call last):\n"
        + start
        + "".join(printed)
        + "RecursionError: maximum recursion depth exceeded\n"
    )


def _event(
    n: int, stacktrace: str, error_type: str = "java.lang.StackOverflowError", message: str = ""
) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="tree",
        error_type=error_type,
        message=message,
        stacktrace=stacktrace,
    )


def test_a_stack_overflow_cut_anywhere_in_its_cycle_is_one_signature() -> None:
    texts = [_jvm("depth"), _jvm("childDepth"), _jvm("depth", 1023), _jvm("childDepth", 1023)]
    found = GroupingEngine().assign_all([_event(n, text) for n, text in enumerate(texts)])
    assert len({a.signature_id for a in found}) == 1
    assert [a.tier for a in found] == ["new", "fingerprint", "fingerprint", "fingerprint"]
    sites = {site.crash_site for site in map(site_of_text, texts) if site is not None}
    assert sites == {"com.acme.tree.Node:childDepth"}


@pytest.mark.parametrize(
    ("texts", "error_type", "message"),
    [
        ([_go("walk"), _go("visit"), _go("walk", 99)], "fatal error", "stack overflow"),
        (
            [_python("walk", 1000, entry=False), _python("visit", 1000, entry=False)],
            "RecursionError",
            "maximum recursion depth exceeded",
        ),
    ],
    ids=["go", "python"],
)
def test_other_runtimes_cut_recursions_are_one_signature_too(
    texts: list[str], error_type: str, message: str
) -> None:
    found = GroupingEngine().assign_all([_event(n, t, error_type, message) for n, t in enumerate(texts)])
    assert len({a.signature_id for a in found}) == 1


def test_a_recursion_with_its_entry_printed_keeps_its_outermost_pass() -> None:
    """Below the cycle, the frame that entered it fixes which pass is outermost: nothing is rotated."""
    walk, visit, main = (
        Frame("walk", filename="/app/t.py"),
        Frame("visit", filename="/app/t.py"),
        Frame("main"),
    )
    assert collapse_leading_cycle((walk, visit, walk, visit, walk, main)) == (visit, walk, main)
    assert collapse_leading_cycle((visit, walk, visit, walk, main)) == (visit, walk, main)
    texts = [_python("walk", 990, entry=True), _python("visit", 991, entry=True)]
    found = GroupingEngine().assign_all([_event(n, t, "RecursionError") for n, t in enumerate(texts)])
    assert len({a.signature_id for a in found}) == 1


def test_a_cut_cycle_starts_at_the_frame_that_sorts_first() -> None:
    a, b, c = (Frame(name, module="com.acme.Graph") for name in ("alpha", "beta", "gamma"))
    cut = [(b, c, a) * 4, (c, a, b) * 4, (a, b, c) * 4 + (a,)]
    assert {collapse_leading_cycle(frames) for frames in cut} == {(a, b, c)}
    # as releases before collapsed them: the pass the cut left outermost
    assert collapse_leading_cycle((b, c, a) * 4, rotated=False) == (b, c, a)


def test_without_a_signature_before_the_cut_trace_starts_one_of_its_own() -> None:
    found = GroupingEngine().assign_all([_event(1, _jvm("depth")), _event(2, _jvm("childDepth"))])
    assert found[0].signature_id == found[1].signature_id and found[0].tier == "new"
    assert found[0].fingerprint_hash not in PREVIOUS_RELEASE_HASHES["depth"]


@pytest.mark.parametrize("how", ["given", "looked up"])
@pytest.mark.parametrize("top", ["depth", "childDepth"])
def test_a_signature_the_previous_release_made_keeps_receiving_the_cut_trace(how: str, top: str) -> None:
    engine = engine_knowing(
        "sig_before", service="tree", title="StackOverflowError", hashes=PREVIOUS_RELEASE_HASHES[top], how=how
    )
    found = engine.assign_all([_event(1, _jvm(top)), _event(2, _jvm(top))])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    if top == "depth":  # read otherwise now: found by the hashes the previous reading gives
        assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)
    registered = engine.state("sig_before").hashes
    assert set(PREVIOUS_RELEASE_HASHES[top]) <= set(registered)
    assert found[0].fingerprint_hash in registered
