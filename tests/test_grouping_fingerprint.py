"""The fingerprint: what contributes, what never does, and how it explains itself."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rounds_bot.grouping.components import Component, hash_tree, leaf, node, render
from rounds_bot.grouping.engine import GroupingConfig, GroupingEngine, SignatureState
from rounds_bot.grouping.fingerprint import FINGERPRINT_VERSION
from rounds_bot.models import Assignment, ErrorEvent

GOLDEN = Path(__file__).parent / "golden" / "grouping"
EXPLAIN = GOLDEN / "explain"
TRACES = GOLDEN / "traces"
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def assign(engine: GroupingEngine | None = None, **fields: object) -> Assignment:
    engine = GroupingEngine() if engine is None else engine
    return engine.assign(ErrorEvent(event_id="e", timestamp=EPOCH, **fields))  # type: ignore[arg-type]


def trace(name: str) -> str:
    return (TRACES / f"{name}.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "case", sorted(p.name.removesuffix(".event.json") for p in EXPLAIN.glob("*.event.json"))
)
def test_explanation_renders_as_recorded(case: str) -> None:
    event = json.loads((EXPLAIN / f"{case}.event.json").read_text(encoding="utf-8"))
    expected = (EXPLAIN / f"{case}.txt").read_text(encoding="utf-8")
    assert assign(**event).explanation + "\n" == expected


def test_line_numbers_never_enter_the_hash() -> None:
    original = trace("java_caused_by")
    moved = re.sub(r"\.java:(\d+)\)", lambda m: f".java:{int(m.group(1)) + 7})", original)
    assert moved != original
    assert (
        assign(service="shop", stacktrace=original).fingerprint_hash
        == assign(service="shop", stacktrace=moved).fingerprint_hash
    )


def test_a_change_in_library_frames_keeps_the_in_app_hash() -> None:
    original = trace("python_chained_cause")
    # a new psycopg release: other private functions below the same public call
    upgraded = original.replace("_fetch_pipeline", "_fetch_rows").replace("line 861", "line 902")
    assert (
        assign(service="shop", stacktrace=original).fingerprint_hash
        == assign(service="shop", stacktrace=upgraded).fingerprint_hash
    )


def test_a_change_in_an_in_app_source_line_changes_the_hash() -> None:
    original = trace("python_chained_cause")
    edited = original.replace('cart = load_cart(session["cart_id"])', "cart = load_cart(request.cart_id)")
    assert (
        assign(service="shop", stacktrace=original).fingerprint_hash
        != assign(service="shop", stacktrace=edited).fingerprint_hash
    )


def test_environment_and_version_never_split_a_group() -> None:
    engine = GroupingEngine()
    first = assign(
        engine, service="shop", message="cart 7 is empty", environment="production", service_version="1.0"
    )
    second = assign(
        engine, service="shop", message="cart 9 is empty", environment="staging", service_version="2.3"
    )
    assert first.signature_id == second.signature_id
    assert second.tier == "fingerprint"


def test_recursion_depth_does_not_change_the_fingerprint() -> None:
    def overflow(depth: int) -> str:
        frames = "\tat com.acme.Tree.depth(Tree.java:12)\n\tat com.acme.Tree.visit(Tree.java:30)\n" * depth
        return "java.lang.StackOverflowError\n" + frames + "\tat com.acme.Main.main(Main.java:5)\n"

    shallow = assign(service="tree", stacktrace=overflow(300))
    deep = assign(service="tree", stacktrace=overflow(2000))
    assert shallow.fingerprint_hash == deep.fingerprint_hash
    assert "repeats of the app's; the app's frames read as a set" in deep.explanation


def test_identical_consecutive_frames_are_ignored_as_recursion() -> None:
    text = "java.lang.StackOverflowError\n" + "\tat com.acme.Tree.depth(Tree.java:12)\n" * 50
    explanation = assign(service="tree", stacktrace=text).explanation
    assert "left out of a stack overflow" in explanation and "repeats of the app's" in explanation


def test_exception_type_with_or_without_module_is_one_type() -> None:
    engine = GroupingEngine()
    first = assign(engine, service="s", error_type="builtins.ValueError", message="bad value 3")
    second = assign(engine, service="s", error_type="ValueError", message="bad value 4")
    assert first.signature_id == second.signature_id


def test_the_service_always_contributes() -> None:
    assert (
        assign(service="a", message="disk full").fingerprint_hash
        != assign(service="b", message="disk full").fingerprint_hash
    )


def test_a_trace_without_in_app_frames_uses_all_frames() -> None:
    explanation = assign(
        service="s",
        stacktrace="java.lang.NullPointerException\n\tat java.util.Objects.requireNonNull(Objects.java:208)",
    ).explanation
    assert "+ chain: all frames" in explanation


def test_configured_prefixes_decide_what_is_in_app() -> None:
    text = trace("java_caused_by")
    default = assign(service="s", stacktrace=text).explanation
    configured = GroupingEngine(
        GroupingConfig(in_app_exclude=["com.acme.shop.audit"], in_app_include=["java.util.Optional"])
    )
    explanation = assign(configured, service="s", stacktrace=text).explanation
    assert "+ frame: java.util.Optional map" in explanation
    assert "excluded prefix 'com.acme.shop.audit'" in explanation
    assert "- frame: java.util.Optional map" in default


def test_generated_class_names_do_not_split_a_group() -> None:
    base = trace("java_caused_by")
    rebuilt = base.replace("$$8a3f1c2b", "$$ffee0011").replace(
        "GeneratedMethodAccessor231", "GeneratedMethodAccessor7"
    )
    assert (
        assign(service="s", stacktrace=base).fingerprint_hash
        == assign(service="s", stacktrace=rebuilt).fingerprint_hash
    )


def test_the_fingerprint_version_is_part_of_every_hash() -> None:
    tree = node("fingerprint", leaf("service", "s"))
    assert hash_tree(tree, "rounds-fp:1") != hash_tree(tree, "rounds-fp:2")


def test_only_contributing_leaves_enter_the_hash() -> None:
    a = node("fingerprint", leaf("service", "s"), leaf("message", "x", "ignored"))
    b = node("fingerprint", leaf("service", "s"), leaf("message", "y", "ignored"))
    assert hash_tree(a, "v") == hash_tree(b, "v")


def test_a_node_whose_children_all_fail_to_contribute_does_not_contribute() -> None:
    tree = node("stacktrace", leaf("frame", "a", "not in-app"))
    assert not tree.effective
    assert "(nothing below contributes)" in render(tree)


def test_rendering_is_bounded_for_huge_traces() -> None:
    frames = "".join(f"\tat com.acme.Gen{n}.run(Gen{n}.java:1)\n" for n in range(10_000))
    explanation = assign(service="s", stacktrace="java.lang.Error\n" + frames).explanation
    assert len(explanation.splitlines()) <= 130
    assert "beyond the first 64 frames" in explanation


def test_components_are_hashable_structures_not_strings() -> None:
    assert isinstance(leaf("a", "b"), Component)


def test_a_signature_of_the_previous_fingerprint_version_still_receives_its_trace() -> None:
    # what rounds-fp:1 saved for this trace: its in-app hash, then its all-frames hash
    saved = SignatureState(
        signature_id="sig_4092a063ba376255",
        service="shop",
        fingerprint_version="rounds-fp:1",
        seq=0,
        hashes=[
            "4092a063ba37625574086e3bdfbe12bb777e757ea789905072a8969ec5a4d9ec",
            "52ccdbd60c1ca88349da6080f4767316ce4ff70bf2753ea7e53666df74385cd5",
        ],
    )
    engine = GroupingEngine(known=[saved])
    again = assign(engine, service="shop", stacktrace=trace("java_caused_by"))
    assert (again.tier, again.signature_id) == ("fingerprint", "sig_4092a063ba376255")
    assert again.fingerprint_version == FINGERPRINT_VERSION != "rounds-fp:1"


def _stack_of(tree: Component) -> Component:
    chain = next(child for child in tree.children if child.name == "chain")
    exception = chain.children[0]
    return next(child for child in exception.children if child.name == "stacktrace")


def test_a_problems_stack_is_one_component_whatever_its_message() -> None:
    from rounds_bot.grouping import exception_chain
    from rounds_bot.grouping.candidates import CandidateReader
    from rounds_bot.grouping.inapp import InAppRules
    from rounds_bot.grouping.shapes import ShapeCache
    from rounds_bot.grouping.templates import TemplateMiner

    reader = CandidateReader(InAppRules(), ShapeCache(), TemplateMiner())
    text = trace("go_panic")
    other = text.replace("index out of range [5] with length 3", "slice bounds out of range")
    one = reader.candidate(ErrorEvent(event_id="1", timestamp=EPOCH, stacktrace=text), None)
    two = reader.candidate(ErrorEvent(event_id="2", timestamp=EPOCH, stacktrace=other), None)
    assert render(one.fingerprint.tree) != render(two.fingerprint.tree)  # the values differ ...
    shared = _stack_of(one.fingerprint.tree)
    assert _stack_of(two.fingerprint.tree) is shared  # ... the frames are read once
    exception_chain._STACKS.clear()
    again = CandidateReader(InAppRules(), ShapeCache(), TemplateMiner()).candidate(
        ErrorEvent(event_id="3", timestamp=EPOCH, stacktrace=text), None
    )
    fresh = _stack_of(again.fingerprint.tree)
    assert fresh is not shared and render(fresh) == render(shared)
    assert hash_tree(fresh, FINGERPRINT_VERSION) == hash_tree(shared, FINGERPRINT_VERSION)
    assert again.fingerprint.hash == one.fingerprint.hash


def test_an_error_codes_candidate_is_worked_out_once_per_message_and_code() -> None:
    from rounds_bot.grouping.candidates import CandidateReader
    from rounds_bot.grouping.error_codes import ErrorCode
    from rounds_bot.grouping.inapp import InAppRules
    from rounds_bot.grouping.shapes import ShapeCache
    from rounds_bot.grouping.templates import TemplateMiner

    reader = CandidateReader(InAppRules(), ShapeCache(), TemplateMiner())
    code = ErrorCode("PAY-17", "error.code")

    def candidate(message: str, service: str = "pay") -> object:
        event = ErrorEvent(
            event_id="e", timestamp=EPOCH, service=service, message=message, error_code="PAY-17"
        )
        return reader.candidate(event, code)

    first = candidate("card 41 declined")
    assert candidate("card 97 declined") is first  # one normalised message
    assert candidate("card declined twice") is not first
    assert candidate("card 41 declined", service="shop") is not first


def test_a_go_errors_generic_type_is_left_out_of_its_signatures_title_and_kept_in_its_hash() -> None:
    """`*fmt.wrapError` says nothing a title needs; it still keeps its template apart from another type's."""

    def go_error(n: int, error_type: str) -> ErrorEvent:
        return ErrorEvent(
            event_id=f"g{n}",
            timestamp=datetime(2026, 11, 1, tzinfo=UTC),
            service="api",
            error_type=error_type,
            message=f"load cart {n}: sql: no rows in result set",
        )

    wrapped, typed = GroupingEngine().assign_all([go_error(1, "*fmt.wrapError"), go_error(2, "*pq.Error")])
    assert wrapped.title == "load cart <int>: sql: no rows in result set"
    assert typed.title == "Error: load cart <int>: sql: no rows in result set"
    assert wrapped.signature_id != typed.signature_id
