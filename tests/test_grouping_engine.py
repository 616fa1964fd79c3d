"""The grouping engine: its tiers, its ids, and re-loading it from saved signature states."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from known_states import KnownStates
from pydantic import ValidationError

from rounds_bot.errors import ConfigError
from rounds_bot.grouping.engine import GroupingConfig, GroupingEngine, SignatureState
from rounds_bot.models import Assignment, ErrorEvent

TRACES = Path(__file__).parent / "golden" / "grouping" / "traces"
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def event(**fields: object) -> ErrorEvent:
    fields.setdefault("event_id", "e")
    fields.setdefault("timestamp", EPOCH)
    return ErrorEvent(**fields)  # type: ignore[arg-type]


def trace(name: str) -> str:
    return (TRACES / f"{name}.txt").read_text(encoding="utf-8")


def java_trace(top: list[str], test: str) -> str:
    frames = [f"\tat com.acme.chart.{frame}(X.java:{n + 10})" for n, frame in enumerate(top)]
    frames.append(f"\tat com.acme.chart.tests.{test}(Tests.java:99)")
    frames += [
        "\tat junit.framework.TestCase.runTest(TestCase.java:176)",
        "\tat junit.framework.TestCase.runBare(TestCase.java:141)",
    ]
    return "java.lang.NullPointerException\n" + "\n".join(frames)


# --- tier 1: error codes ------------------------------------------------------------------------


def test_same_service_and_error_code_is_one_signature_whatever_the_message() -> None:
    engine = GroupingEngine()
    first = engine.assign(
        event(service="pay", message="card 4242 declined", attributes={"error.code": "card_declined"})
    )
    second = engine.assign(
        event(service="pay", message="totally different text", attributes={"error.code": "card_declined"})
    )
    assert (first.tier, second.tier) == ("new", "error_code")
    assert first.signature_id == second.signature_id


def test_another_error_code_is_another_signature_even_with_the_same_message() -> None:
    engine = GroupingEngine()
    first = engine.assign(event(service="pay", message="declined", error_code="E100"))
    second = engine.assign(event(service="pay", message="declined", error_code="E200"))
    assert first.signature_id != second.signature_id


def test_an_error_code_is_per_service() -> None:
    engine = GroupingEngine()
    first = engine.assign(event(service="pay", message="x", error_code="E100"))
    second = engine.assign(event(service="shop", message="x", error_code="E100"))
    assert first.signature_id != second.signature_id


def test_error_code_is_read_from_the_message_with_the_default_pattern() -> None:
    engine = GroupingEngine()
    first = engine.assign(event(service="db", message="query failed with error code ORA-00942 on table 7"))
    second = engine.assign(event(service="db", message="insert aborted, errorCode=ORA-00942"))
    assert second.tier == "error_code"
    assert first.signature_id == second.signature_id


def test_configured_code_attributes_are_read_in_priority_order() -> None:
    engine = GroupingEngine(GroupingConfig(error_code_attributes=["app.code", "error.code"]))
    first = engine.assign(event(service="s", message="a", attributes={"error.code": "X", "app.code": "A1"}))
    second = engine.assign(event(service="s", message="b", attributes={"app.code": "A1"}))
    assert first.signature_id == second.signature_id


def test_a_bare_number_in_a_message_is_not_an_error_code() -> None:
    engine = GroupingEngine()
    first = engine.assign(event(service="s", message="ciod: Received signal 11, code=1, errno=2"))
    second = engine.assign(event(service="s", message="ciod: Received signal 6, code=2, errno=5"))
    assert second.tier == "fingerprint"
    assert first.signature_id == second.signature_id


# --- tier 2: fingerprints -----------------------------------------------------------------------


def test_the_same_trace_again_is_grouped_by_fingerprint() -> None:
    engine = GroupingEngine()
    first = engine.assign(event(service="shop", stacktrace=trace("java_caused_by")))
    second = engine.assign(event(service="shop", stacktrace=trace("java_caused_by"), message="other text"))
    assert (first.tier, second.tier) == ("new", "fingerprint")
    assert first.signature_id == second.signature_id


def test_log_lines_of_one_template_are_grouped_by_fingerprint() -> None:
    engine = GroupingEngine()
    ids = {
        engine.assign(event(service="auth", message=f"user {n} not found in shard {n % 7}")).signature_id
        for n in range(50)
    }
    assert len(ids) == 1


# --- tier 3: similarity -------------------------------------------------------------------------


def test_the_same_crash_site_reached_through_other_callers_joins_by_its_site() -> None:
    engine = GroupingEngine()
    top = ["plot.XYPlot.getDataRange", "axis.NumberAxis.autoAdjustRange", "axis.NumberAxis.configure"]
    first = engine.assign(
        event(
            service="chart",
            error_type="NullPointerException",
            stacktrace=java_trace([*top, "ui.Zoom.in"], "T.t"),
        )
    )
    second = engine.assign(
        event(
            service="chart",
            error_type="NullPointerException",
            stacktrace=java_trace([*top, "export.Png.write"], "T.t"),
        )
    )
    assert second.fingerprint_hash != first.fingerprint_hash
    assert (second.tier, second.signature_id) == ("fingerprint", first.signature_id)
    assert "same crash site" in second.explanation


def test_a_similar_trace_joins_by_similarity_above_the_merge_threshold() -> None:
    engine = GroupingEngine()
    top = ["plot.XYPlot.getDataRange", "axis.NumberAxis.autoAdjustRange", "axis.NumberAxis.configure"]
    first = engine.assign(
        event(
            service="chart",
            error_type="NullPointerException",
            stacktrace=java_trace([*top, "ui.Zoom.in"], "T.t"),
        )
    )
    # another exception type at the same site: not the site's problem by rule, alike by its text
    other_type = java_trace([*top, "export.Png.write"], "T.t").replace(
        "NullPointerException", "IllegalArgumentException", 1
    )
    second = engine.assign(event(service="chart", error_type="NullPointerException", stacktrace=other_type))
    assert second.fingerprint_hash != first.fingerprint_hash
    assert second.tier == "similarity"
    assert second.signature_id == first.signature_id
    assert second.similarity is not None and second.similarity >= engine.config.merge_threshold
    assert "grouped by similarity" in second.explanation


def test_two_tests_that_reach_the_same_fault_are_one_fingerprint() -> None:
    engine = GroupingEngine()
    top = ["plot.XYPlot.getDataRange", "axis.NumberAxis.autoAdjustRange", "axis.NumberAxis.configure"]
    first = engine.assign(event(service="chart", stacktrace=java_trace(top, "LogAxisTests.testAutoRange")))
    second = engine.assign(event(service="chart", stacktrace=java_trace(top, "ScatterTests.testDraw")))
    assert (first.tier, second.tier) == ("new", "fingerprint")
    assert second.signature_id == first.signature_id
    assert "not in-app: test code" in second.explanation


def test_a_dissimilar_trace_is_a_new_signature() -> None:
    engine = GroupingEngine()
    first = engine.assign(event(service="chart", stacktrace=java_trace(["a.A.one", "b.B.two"], "T.t1")))
    second = engine.assign(event(service="chart", stacktrace=java_trace(["c.C.three", "d.D.four"], "U.t2")))
    assert second.tier == "new"
    assert first.signature_id != second.signature_id


def test_similarity_never_crosses_services() -> None:
    engine = GroupingEngine()
    top = ["plot.XYPlot.getDataRange", "axis.NumberAxis.autoAdjustRange"]
    first = engine.assign(event(service="a", stacktrace=java_trace(top, "T.t1")))
    second = engine.assign(event(service="b", stacktrace=java_trace(top, "U.t2")))
    assert second.tier == "new"
    assert first.signature_id != second.signature_id


CIOD = "ciod: Error reading message prefix on CioStream socket to 10.0.0.{}:7000, {}"


def test_similar_log_lines_are_only_linked_as_related_never_merged() -> None:
    engine = GroupingEngine()
    first = engine.assign(event(service="ciod", message=CIOD.format(1, "Link has been severed")))
    second = engine.assign(event(service="ciod", message=CIOD.format(1, "Connection reset by peer")))
    assert second.tier == "new"
    assert second.signature_id != first.signature_id
    assert first.signature_id in second.related
    assert "possibly related to" in second.explanation
    # the link is remembered: later events of the group report it too
    third = engine.assign(event(service="ciod", message=CIOD.format(9, "Connection reset by peer")))
    assert third.related == second.related


def test_each_related_signature_carries_the_score_why_grouped_shows_for_it() -> None:
    engine = GroupingEngine()
    first = engine.assign(event(service="ciod", message=CIOD.format(1, "Link has been severed")))
    second = engine.assign(event(service="ciod", message=CIOD.format(1, "Connection reset by peer")))
    score = second.related_similarity[first.signature_id]
    assert f"possibly related to {first.signature_id} ({score:.2f})" in second.explanation
    # kept with the signature: a later event of the group, and a fresh engine, report the same score
    third = engine.assign(event(service="ciod", message=CIOD.format(9, "Connection reset by peer")))
    assert third.related_similarity == second.related_similarity
    state = engine.state(second.signature_id)
    assert state.related_similarity == {first.signature_id: score}
    fresh = GroupingEngine(known=[engine.state(first.signature_id), state])
    again = fresh.assign(event(service="ciod", message=CIOD.format(5, "Connection reset by peer")))
    assert again.related_similarity == {first.signature_id: score}


# --- ids and states -----------------------------------------------------------------------------


def test_signature_ids_are_stable_and_derived_from_the_first_fingerprint() -> None:
    first = GroupingEngine().assign(event(service="s", message="cart 7 is empty"))
    again = GroupingEngine().assign(event(service="s", message="cart 7 is empty"))
    assert first.signature_id == again.signature_id == "sig_" + first.fingerprint_hash[:16]
    assert re.fullmatch(r"sig_[0-9a-f]{16}", first.signature_id)


def test_signature_state_survives_a_json_round_trip() -> None:
    engine = GroupingEngine()
    assignment = engine.assign(event(service="shop", stacktrace=trace("python_chained_cause")))
    state = engine.state(assignment.signature_id)
    assert SignatureState.model_validate_json(state.model_dump_json()) == state
    assert SignatureState.model_validate(state.model_dump(mode="json")) == state


def test_state_of_an_unknown_signature_says_which() -> None:
    with pytest.raises(KeyError, match="sig_nope"):
        GroupingEngine().state("sig_nope")


def _mixed_stream(seed: int, count: int) -> list[ErrorEvent]:
    rng = random.Random(seed)
    users = ["webmaster", "chen", "test9", "root"]
    tops = [
        ["plot.XYPlot.getDataRange", "axis.NumberAxis.autoAdjustRange", "axis.NumberAxis.configure"],
        ["plot.XYPlot.getDataRange", "axis.DateAxis.autoAdjustRange", "axis.DateAxis.configure"],
        ["data.KeyedObjects.getObject", "data.KeyedObjects2D.getObject"],
        ["cli.Parser.processProperties", "cli.Parser.parse"],
    ]
    goldens = [
        "python_chained_cause",
        "java_caused_by",
        "node_cause",
        "go_panic",
        "dotnet_inner",
        "ruby_cause",
    ]
    makers = [
        lambda: {
            "service": "auth",
            "message": f"Invalid user {rng.choice(users)} from 10.0.{rng.randrange(9)}.{rng.randrange(99)}",
        },
        lambda: {
            "service": "auth",
            "message": f"session opened for user {rng.choice(users)} by (uid={rng.randrange(3)})",
        },
        lambda: {
            "service": "ciod",
            "message": CIOD.format(
                rng.randrange(9), rng.choice(["Link has been severed", "Connection timed out"])
            ),
        },
        lambda: {
            "service": "pay",
            "message": f"card {rng.randrange(9999)} declined",
            "attributes": {"error.code": rng.choice(["E1", "E2"])},
        },
        lambda: {
            "service": "chart",
            "error_type": "NullPointerException",
            "stacktrace": java_trace(rng.choice(tops), f"T{rng.randrange(6)}.test{rng.randrange(3)}"),
        },
        lambda: {
            "service": "shop",
            "stacktrace": trace(rng.choice(goldens)),
            "environment": rng.choice(["prod", "staging"]),
        },
        lambda: {
            "service": "shop",
            "message": " ".join(str(rng.randrange(50)) for _ in range(rng.randint(1, 3))),
        },
    ]
    return [event(event_id=str(n), **rng.choice(makers)()) for n in range(count)]


def _essence(assignment: Assignment) -> tuple:
    return (
        assignment.signature_id,
        assignment.tier,
        assignment.fingerprint_hash,
        tuple(assignment.related),
        tuple(assignment.related_similarity.items()),
        assignment.similarity,
        assignment.explanation,
        assignment.title,
        assignment.normalized_message,
    )


def _reloaded(saved: list[SignatureState], how: str) -> GroupingEngine:
    """An engine given every saved state up front, or one that looks each up when needed."""
    return GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))


@pytest.mark.parametrize("how", ["given", "looked up"])
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_a_reloaded_engine_groups_later_events_exactly_as_the_original(seed: int, how: str) -> None:
    events = _mixed_stream(seed, 600)
    original = GroupingEngine()
    for item in events[:300]:
        original.assign(item)
    saved = [
        SignatureState.model_validate_json(original.state(s).model_dump_json())
        for s in original.signature_ids()
    ]
    random.Random(seed).shuffle(saved)  # the store gives states back in any order
    reloaded = _reloaded(saved, how)
    for item in events[300:]:
        assert _essence(reloaded.assign(item)) == _essence(original.assign(item))
    touched = reloaded.signature_ids()
    if how == "given":
        assert sorted(original.signature_ids()) == sorted(touched)
    for signature_id in touched:
        assert original.state(signature_id) == reloaded.state(signature_id)


def test_an_engine_that_looks_signatures_up_loads_only_what_its_events_need() -> None:
    original = GroupingEngine()
    for item in _mixed_stream(31, 400):
        original.assign(item)
    saved = [original.state(s) for s in original.signature_ids()]
    engine = GroupingEngine(lookup=KnownStates(saved))
    again = engine.assign(event(service="auth", message="Invalid user chen from 10.0.1.2"))
    assert again.tier == "fingerprint"
    assert len(engine.signature_ids()) < len(saved)


def test_the_same_stream_always_gives_the_same_answers() -> None:
    events = _mixed_stream(21, 300)
    first, second = GroupingEngine(), GroupingEngine()
    assert [_essence(first.assign(e)) for e in events] == [_essence(second.assign(e)) for e in events]


# --- configuration ------------------------------------------------------------------------------


def test_a_threshold_out_of_range_is_refused() -> None:
    with pytest.raises(ValidationError):
        GroupingConfig(merge_threshold=1.5)


def test_default_configuration_is_the_documented_one() -> None:
    config = GroupingConfig()
    assert "error.code" in config.error_code_attributes
    assert 0 < config.related_threshold < config.merge_threshold <= 1
    assert config.in_app_include == [] and config.in_app_exclude == []


def test_related_threshold_above_merge_threshold_is_refused() -> None:
    with pytest.raises(ConfigError, match="related band"):
        GroupingConfig(merge_threshold=0.5, related_threshold=0.7)


@pytest.mark.parametrize(
    ("pattern", "problem"), [("code=(", "not a valid regular expression"), ("code=\\w+", "has no group")]
)
def test_a_bad_error_code_pattern_is_refused_with_the_reason(pattern: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        GroupingConfig(error_code_pattern=pattern)


# --- awkward events -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"message": ""},
        {"message": "   "},
        {"message": "\x00\x01\x02 binary \udc80 junk"},
        {"message": "x" * 1_000_000},
        {"message": "boom", "stacktrace": "   "},
        {"message": "boom", "stacktrace": "not a trace at all"},
        {"message": "boom", "stacktrace": "java.lang.Error\n" + "\tat a.B.c(B.java:1)\n" * 10_000},
        {"message": "boom", "stacktrace": 'Traceback (most recent call last):\n  File "x", line\n\x00'},
        {"message": "", "error_type": "", "attributes": {"error.code": ""}},
    ],
)
def test_awkward_events_still_get_a_signature(fields: dict) -> None:
    assignment = GroupingEngine().assign(event(service="s", **fields))
    assert assignment.signature_id.startswith("sig_")
