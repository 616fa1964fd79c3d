"""Words that vary across a statement's lines are its values, learned from a round's batch."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.memo import BoundedMemo
from rounds_bot.grouping.skeletons import skeleton
from rounds_bot.grouping.variability import varying_skeletons
from rounds_bot.models import ErrorEvent

JOBS = ("nightly-export", "cleanup", "reindex-catalog", "sync-prices", "weekly-report")


def log(message: str, index: int, service: str = "scheduler") -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{index}",
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        service=service,
        message=message,
    )


def lines(*messages: str) -> list[tuple[tuple[str, tuple[str, ...]], int]]:
    counted: dict[tuple[str, tuple[str, ...]], int] = {}
    for message in messages:
        key = ("svc", skeleton(message))
        counted[key] = counted.get(key, 0) + 1
    return list(counted.items())


def test_a_word_that_takes_many_values_in_a_fixed_statement_is_a_value() -> None:
    found = varying_skeletons(lines(*(f"job {job} failed: destination unreachable" for job in JOBS)))
    assert set(found.values()) == {("job", "<*>", "failed:", "destination", "unreachable")}
    assert len(found) == len(JOBS)


def test_a_few_states_repeated_over_many_lines_stay_words() -> None:
    states = [f"[instance: <*>] VM {state} (Lifecycle Event)" for state in ("Started", "Paused", "Stopped")]
    assert varying_skeletons(lines(*(states * 10))) == {}


def test_two_values_are_not_enough_and_the_first_word_never_varies() -> None:
    assert (
        varying_skeletons(lines("job cleanup failed: destination unreachable", "job sync failed: it is down"))
        == {}
    )
    firsts = (f"{who} may not approve refunds" for who in ("alice", "bob", "carol"))
    assert varying_skeletons(lines(*firsts)) == {}


def test_a_statement_with_too_few_fixed_words_is_left_alone() -> None:
    assert varying_skeletons(lines(*(f"job {job} failed" for job in JOBS))) == {}


def test_the_partition_of_varying_lines_does_not_depend_on_their_order() -> None:
    messages = [f"job {job} failed: destination unreachable" for job in JOBS * 2] + [
        f"user {who} may not approve refunds" for who in ("alice", "bob", "carol", "dmitri", "eve")
    ]
    rng = random.Random(4)
    partitions = set()
    for _ in range(5):
        rng.shuffle(messages)
        events = [log(m, i) for i, m in enumerate(messages)]
        members: dict[str, set[str]] = {}
        for event, assignment in zip(events, GroupingEngine().assign_all(events), strict=True):
            members.setdefault(assignment.signature_id, set()).add(event.message.split()[0])
        partitions.add(frozenset(frozenset(m) for m in members.values()))
    assert partitions == {frozenset({frozenset({"job"}), frozenset({"user"})})}


def test_words_of_another_service_do_not_count() -> None:
    events = [
        log(f"job {job} failed: destination unreachable", i, service=f"svc{i}") for i, job in enumerate(JOBS)
    ]
    assert len({a.signature_id for a in GroupingEngine().assign_all(events)}) == len(JOBS)


def test_a_batch_and_the_same_events_one_by_one_agree_where_no_word_varies() -> None:
    messages = [
        "disk limit not specified, defaulting to unlimited",
        "vcpu limit not specified, defaulting to unlimited",
    ]
    events = [log(m, i) for i, m in enumerate(messages * 3)]
    one_by_one = GroupingEngine()
    assert [a.signature_id for a in GroupingEngine().assign_all(events)] == [
        one_by_one.assign(e).signature_id for e in events
    ]


def test_boolean_literals_in_a_fixed_statement_are_a_value() -> None:
    found = varying_skeletons(
        lines(
            *(["feature flag new-checkout is true for this tenant"] * 5),
            "feature flag new-checkout is false for this tenant",
        )
    )
    assert set(found.values()) == {("feature", "flag", "new-checkout", "is", "<*>", "for", "this", "tenant")}


def test_a_batch_groups_alike_when_its_shapes_are_forgotten_between_the_two_passes() -> None:
    # The batch keeps counts per skeleton only, never an event's shape: the second pass looks each
    # shape up again, even when the bounded shape memo has dropped it meanwhile.
    messages = [f"job {job} failed: destination unreachable" for job in JOBS * 2] + [
        f"user {who} may not approve refund {n}" for n, who in enumerate(("alice", "bob", "carol", "dmitri"))
    ]
    events = [log(m, i) for i, m in enumerate(messages)]
    expected = [(a.signature_id, a.tier, a.explanation) for a in GroupingEngine().assign_all(events)]
    forgetful = GroupingEngine()
    forgetful._shapes._shapes = BoundedMemo(entries=2, budget=1 << 20)
    assert [(a.signature_id, a.tier, a.explanation) for a in forgetful.assign_all(events)] == expected
    assert len({signature for signature, _, _ in expected}) == 2


STATES = (
    "new", "paid", "packed", "shipped", "delivered", "returned", "refunded", "cancelled", "held", "lost",
    "disputed", "archived",
)  # fmt: skip


def test_a_field_of_many_values_printed_over_many_lines_is_a_value() -> None:
    """A dozen states, each printed many times: the repeats do not make them different statements."""
    rng = random.Random(7)
    messages = [f"order <*> is in state {rng.choice(STATES)} before the refund started" for _ in range(600)]
    found = varying_skeletons(lines(*messages))
    assert set(found.values()) == {
        ("order", "<*>", "is", "in", "state", "<*>", "before", "the", "refund", "started")
    }


def test_two_fields_of_many_values_in_one_statement_are_both_values() -> None:
    rng = random.Random(8)
    messages = [
        f"order <*> is in state {rng.choice(STATES)}, expected {rng.choice(STATES)} before refund"
        for _ in range(3_000)
    ]
    found = varying_skeletons(lines(*messages))
    assert set(found.values()) == {
        ("order", "<*>", "is", "in", "state", "<*>", "expected", "<*>", "before", "refund")
    }
    events = [log(message, index) for index, message in enumerate(messages)]
    assert len({a.signature_id for a in GroupingEngine().assign_all(events)}) == 1


def test_a_few_states_beside_a_field_of_many_values_stay_words() -> None:
    """Of two varying positions, the one of many values is opened; a few states repeated stay words."""
    rng = random.Random(9)
    messages = [
        f"order <*> is in state {rng.choice(STATES[:3])}, expected {rng.choice(STATES)} before refund"
        for _ in range(3_000)
    ]
    opened = {tokens[5:8] for tokens in varying_skeletons(lines(*messages)).values()}
    assert opened == {(f"{state},", "expected", "<*>") for state in STATES[:3]}


def test_two_fields_whose_lines_seldom_agree_on_either_are_both_values() -> None:
    """300 lines over 144 pairs of states: too few lines agree on one state to show the other varying
    alone, so the two positions are read together."""
    rng = random.Random(10)
    messages = [
        f"order <*> is in state {rng.choice(STATES)}, expected {rng.choice(STATES)} before refund"
        for _ in range(300)
    ]
    found = varying_skeletons(lines(*messages))
    assert set(found.values()) == {
        ("order", "<*>", "is", "in", "state", "<*>", "expected", "<*>", "before", "refund")
    }
    assert len(found) == len(set(messages))
    events = [log(message, index) for index, message in enumerate(messages)]
    assert len({a.signature_id for a in GroupingEngine().assign_all(events)}) == 1
