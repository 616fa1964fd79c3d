"""Values in free-text messages that varied between occurrences of one bug and split it.

A count's noun agrees with the count (pydantic's `1 validation error for Order` and `2 validation errors
for Order`, Python's `(1 sub-exception)` and `(2 sub-exceptions)`); a date is written with its month's
name (`January 5, 2024`, Oracle's `05-JAN-24`) or a time with AM or PM (.NET's and JavaScript's en-US
`1/5/2024 3:01:02 PM`); PostgreSQL prints the row's values in its DETAIL line (`Key (username)=(bob)
already exists.`, `Failing row contains (42, null, bob).`), which psycopg and SQLAlchemy put in the
exception's message. Each must be one signature, two statements stay two, and a database an earlier
version wrote, whose templates hold the words and values as that version read them, keeps receiving
their events.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from rounds_bot.grouping import shapes
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.normalize import mask_spans_before, normalize_uncached
from rounds_bot.grouping.skeletons import render, skeleton, skeleton_with_plurals
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import ErrorEvent

EPOCH = datetime(2026, 11, 1, tzinfo=UTC)
_UNIQUE = (
    "(psycopg2.errors.UniqueViolation) duplicate key value violates unique constraint"
    ' "users_username_key"\nDETAIL:  Key (username)=({}) already exists.\n\n[SQL: INSERT INTO users ...]'
)
_NOT_NULL = (
    'null value in column "email" of relation "users" violates not-null constraint\n'
    "DETAIL:  Failing row contains ({})."
)

#: (bug, message): occurrences of one bug differ as real occurrences do
ONE_BUG_EACH = [
    ("order-invalid", "1 validation error for Order"),
    ("order-invalid", "2 validation errors for Order"),
    ("order-invalid", "3 validation errors for Order"),
    ("cart-invalid", "1 validation error for Cart"),
    ("cart-invalid", "4 validation errors for Cart"),
    ("group", "unhandled errors in a TaskGroup (1 sub-exception)"),
    ("group", "unhandled errors in a TaskGroup (2 sub-exceptions)"),
    ("retries", "upload failed, 1 retry left"),
    ("retries", "upload failed, 3 retries left"),
    ("retries", "upload failed, 1,024 retries left"),
    ("due", "payment due January 5, 2024 was missed"),
    ("due", "payment due March 25, 2024 was missed"),
    ("due", "payment due Friday, 5 Jan 2024 was missed"),
    ("oracle", "batch loaded 05-JAN-24 is stale"),
    ("oracle", "batch loaded 17-MAR-24 is stale"),
    ("clock", "lease taken at 1/5/2024 10:11:12 AM expired"),
    ("clock", "lease taken at 11/28/2026 3:01:02 PM expired"),
    ("unique", _UNIQUE.format("bob")),
    ("unique", _UNIQUE.format("alice")),
    ("unique", _UNIQUE.format("dmitri k")),
    ("not-null", _NOT_NULL.format("42, null, bob, 2024-01-05")),
    ("not-null", _NOT_NULL.format("7, null, carol smith, 2024-02-11")),
]


def event(number: int, message: str) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{number}", timestamp=EPOCH + timedelta(seconds=number), service="shop", message=message
    )


def signatures_per_bug(engine: GroupingEngine, lines: list[tuple[str, str]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for number, (bug, message) in enumerate(lines):  # one by one: no batch learns a varying word
        found.setdefault(bug, set()).add(engine.assign(event(number, message)).signature_id)
    return found


def test_each_bug_is_one_signature_and_two_bugs_stay_two() -> None:
    found = signatures_per_bug(GroupingEngine(), ONE_BUG_EACH)
    assert {bug: len(ids) for bug, ids in found.items()} == dict.fromkeys(found, 1)
    assert len(set().union(*found.values())) == len(found)


@pytest.mark.parametrize(
    ("message", "template"),
    [
        ("3 validation errors for Order", "<*> validation error for Order"),
        (
            "unhandled errors in a TaskGroup (2 sub-exceptions)",
            "unhandled errors in a TaskGroup <*> sub-exception)",
        ),
        ("found 2 entries, expected 1", "found <*> entry, expected <*>"),
        # a singular word ending in s is left as it is, and a word after the count's noun too
        ("2 status codes were unknown", "<*> status code were unknown"),
        ("1 class has no tests", "<*> class has no tests"),
        ("2 items were dropped", "<*> item were dropped"),
    ],
)
def test_the_noun_after_a_count_is_read_in_the_singular(message: str, template: str) -> None:
    assert render(skeleton(normalize_uncached(message))) == template


@pytest.mark.parametrize(
    ("message", "normalized"),
    [
        ("payment due January 5, 2024 was missed", "payment due <date> was missed"),
        ("card expired on Friday, 5th Jan 2024", "card expired on <date>"),
        ("batch loaded 05-JAN-24 is stale", "batch loaded <date> is stale"),
        ("lease taken at 1/5/2024 10:11:12 AM expired", "lease taken at <date> <date> expired"),
        ("retry at 3:01 p.m. failed", "retry at <date> failed"),
        ("Key (sku, region)=(A-1, eu) already exists.", "Key (sku, region)=<data> already exists."),
        ("Failing row contains (42, null, (1,2)).", "Failing row contains <data>."),
        # a month's name that is no date, and a number before a word, stay as they are
        ("5 May be retried", "<int> May be retried"),
        ("March 3 deploy failed", "March <int> deploy failed"),
    ],
)
def test_dates_twelve_hour_times_and_row_values_are_masked(message: str, normalized: str) -> None:
    assert normalize_uncached(message) == normalized


@pytest.fixture
def as_read_before(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The engine reading messages as `rounds-fp:4` did: its masking rules, plurals as printed."""
    with monkeypatch.context() as patch:
        patch.setattr(shapes, "mask_spans", mask_spans_before)
        patch.setattr(shapes, "skeleton", skeleton_with_plurals)
        yield


def saved_before(lines: list[tuple[str, str]]) -> tuple[list[SignatureState], list[str]]:
    engine = GroupingEngine()
    ids = [engine.assign(event(n, message)).signature_id for n, (_, message) in enumerate(lines)]
    states = [
        engine.state(sid).model_copy(update={"fingerprint_version": "rounds-fp:4"})
        for sid in dict.fromkeys(ids)
    ]
    return states, ids


def test_before_these_readings_the_bugs_split(as_read_before: None) -> None:
    found = signatures_per_bug(GroupingEngine(), ONE_BUG_EACH)
    split = {bug for bug, ids in found.items() if len(ids) > 1}
    assert split == {
        "order-invalid",
        "cart-invalid",
        "group",
        "retries",
        "due",
        "clock",
        "unique",
        "not-null",
    }


def test_signatures_an_earlier_version_made_keep_receiving_their_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(shapes, "mask_spans", mask_spans_before)
        patch.setattr(shapes, "skeleton", skeleton_with_plurals)
        states, before = saved_before(ONE_BUG_EACH)
    after = GroupingEngine(known=states)
    again = [
        after.assign(event(100 + n, message)).signature_id for n, (_, message) in enumerate(ONE_BUG_EACH)
    ]
    assert again == before
    # another count goes where the stored template of its reading then takes it, the plural's
    assert after.assign(event(200, "5 validation errors for Order")).signature_id == before[1] != before[0]
    # a statement no stored template holds is one signature whatever its count
    lines = ("1 validation error for Invoice", "2 validation errors for Invoice")
    first, second = (after.assign(event(300 + n, line)) for n, line in enumerate(lines))
    assert first.tier == "new" and second.signature_id == first.signature_id
