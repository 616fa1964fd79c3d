"""A round's batch that holds many names of one runtime message keeps them apart.

The batch's variability rule (`variability`) takes a word position holding many different words for a
statement's parameter. A name a runtime's message gives the code (`mask_names`: `has no attribute 'email'`,
`relation "orders" does not exist`, `x.map is not a function`) is fixed per bug however many of them one
round sees, so those positions are never opened."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.models import ErrorEvent

EPOCH = datetime(2026, 11, 1, tzinfo=UTC)
NAMES = ("email", "id", "name", "address", "phone", "created", "owner", "status")
STATEMENTS = (
    "'NoneType' object has no attribute '{}'",
    'relation "{}" does not exist',
    "Cannot read properties of undefined (reading '{}')",
    "undefined method '{}' for nil",
    "data.{} is not a function",
)


def events(statement: str) -> list[ErrorEvent]:
    return [
        ErrorEvent(
            event_id=f"e{number}",
            timestamp=EPOCH + timedelta(seconds=number),
            service="shop",
            message=statement.format(NAMES[number % len(NAMES)]),
        )
        for number in range(len(NAMES))
    ]


@pytest.mark.parametrize("statement", STATEMENTS)
def test_a_batch_of_many_names_of_one_statement_keeps_each_name_apart(statement: str) -> None:
    batch = events(statement)
    assigned = GroupingEngine().assign_all(batch)
    by_name: dict[str, set[str]] = {}
    for event, assignment in zip(batch, assigned, strict=True):
        by_name.setdefault(event.message, set()).add(assignment.signature_id)
    assert all(len(ids) == 1 for ids in by_name.values()), by_name
    assert len({next(iter(ids)) for ids in by_name.values()}) == len(NAMES)


def test_a_batch_still_opens_a_word_that_varies_beside_no_name() -> None:
    batch = [
        ErrorEvent(
            event_id=f"j{number}",
            timestamp=EPOCH + timedelta(seconds=number),
            service="jobs",
            message=f"job {name} failed: destination unreachable",
        )
        for number, name in enumerate(("cleanup", "reindex", "backup", "export", "import", "rollup"))
    ]
    assert len({a.signature_id for a in GroupingEngine().assign_all(batch)}) == 1
