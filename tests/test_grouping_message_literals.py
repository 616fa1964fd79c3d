"""Literals printed into free-text messages that varied between occurrences of one bug and split it.

A request target of one segment with its query (`GET /search?q=shoes&page=2 failed`); a Python bytes
literal, as `repr` writes one (`b'\\xff\\xfe'`, `b"it's"`); a Ruby object as `inspect` writes it, the
default one (`#<Order:0x000055d5c6a3b2f8 @id=12>`) or ActiveRecord's (`#<User id: 5, email: "a@b.c">`),
whose attributes vary in number and kind; a string quoted with escapes, as Go's `%q` (`strconv.Quote`)
and JSON write one (`parsing "say \\"hi there\\"": invalid syntax`). Each must be one signature, two
statements stay two, and a database an earlier version wrote, whose templates hold the literals as that
version read them, keeps receiving their events.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rounds_bot.grouping import shapes
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.normalize import mask_spans_before, mask_spans_fifth, normalize_uncached
from rounds_bot.grouping.skeletons import skeleton_with_plurals
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import ErrorEvent

EPOCH = datetime(2026, 11, 1, tzinfo=UTC)

#: (bug, message): occurrences of one bug differ as real occurrences do
ONE_BUG_EACH = [
    ("search", "GET /search?q=hat failed"),
    ("search", "GET /search?q=shoes failed"),
    ("search", "GET /search?q=shoes&page=2 failed"),
    ("search", "GET /search?q=hat&page=9 failed"),
    ("search", "GET /search?q=red%20hat&sort=price failed"),
    ("login", "POST /login?next=/account failed"),
    ("login", "POST /login?next=/cart failed"),
    ("decode", "invalid start byte: b'\\xff\\xfe'"),
    ("decode", "invalid start byte: b'\\xfe'"),
    ("decode", "invalid start byte: b'\\x80abc'"),
    ("reply", "unexpected reply b'OK' from cache"),
    ("reply", "unexpected reply b'-ERR unknown command' from cache"),
    ("reply", 'unexpected reply b"it\'s" from cache'),
    ("user", 'undefined method `name\' for #<User id: 5, email: "a@b.c">'),
    ("user", 'undefined method `name\' for #<User id: 77, email: "x@y.z", name: "Bob Smith">'),
    ("user", "undefined method `name' for #<User id: nil, email: nil>"),
    ("order", "undefined method `total' for #<Order:0x000055d5c6a3b2f8 @id=12>"),
    ("order", "undefined method `total' for #<Order:0x00007f1a2b3c4d5e @id=99, @state=:paid>"),
    ("order", 'undefined method `total\' for #<Order:0x00007f1a2b3c4d5e @note="big order", @rush=true>'),
    ("atoi", 'strconv.Atoi: parsing "12a": invalid syntax'),
    ("atoi", 'strconv.Atoi: parsing "say \\"hi there\\"": invalid syntax'),
    ("atoi", 'strconv.Atoi: parsing "x": invalid syntax'),
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
    ("message", "normalized"),
    [
        ("GET /search?q=shoes&page=2 failed", "GET <path> failed"),
        ("fetch /search?q=shoes: timeout", "fetch <path>: timeout"),
        ("GET /?q=x, then retried", "GET <path>, then retried"),
        # a one-segment path without a query is a name, and a question mark ends a sentence
        ("GET /health failed", "GET /health failed"),
        ("is /tmp? it is full", "is /tmp? it is full"),
        ("invalid start byte: b'\\xff\\xfe'", "invalid start byte: <str>"),
        ("got b\"it's\" and b'' back", "got <str> and <str> back"),
        # smtplib's reply keeps its text (its enhanced status code names the failure), a whole message too
        ("failed: (421, b'4.7.0 Service not available')", "failed: (<int>, b'4.7.0 Service not available')"),
        ("b'user_id'", "b'user_id'"),
        ('for #<User id: 5, email: "a@b.c">', "for #<User <data>"),
        ("for #<Order:0x000055d5c6a3b2f8 @id=12, @state=:paid>", "for #<Order:<data>"),
        ("for #<ActiveRecord::Relation [#<User id: 1>]>", "for #<ActiveRecord::Relation <data>"),
        # a class alone, or a generic's angle brackets, are no object
        ("expected #<Class> here", "expected #<Class> here"),
        ("List<Order> is empty", "List<Order> is empty"),
        ('parsing "say \\"hi there\\"": invalid syntax', "parsing <str>: invalid syntax"),
        (
            "invalid character '\\'' looking for beginning of value",
            "invalid character <str> looking for beginning of value",
        ),
        # a Windows path's last backslash escapes nothing: the quote still closes it
        ('cannot open "C:\\temp\\" now', "cannot open <str> now"),
    ],
)
def test_literals_are_masked(message: str, normalized: str) -> None:
    assert normalize_uncached(message) == normalized


def read_as(mask: object) -> pytest.MonkeyPatch:
    """A context in which the engine masks messages with `mask`."""
    patch = pytest.MonkeyPatch()
    patch.setattr(shapes, "mask_spans", mask)
    return patch


def test_before_these_readings_the_bugs_split() -> None:
    patch = read_as(mask_spans_fifth)
    try:
        found = signatures_per_bug(GroupingEngine(), ONE_BUG_EACH)
    finally:
        patch.undo()
    assert {bug for bug, ids in found.items() if len(ids) > 1} == {
        "search",
        "login",
        "decode",
        "reply",
        "user",
        "order",
        "atoi",
    }


def saved(lines: list[tuple[str, str]], version: str) -> tuple[list[SignatureState], list[str]]:
    engine = GroupingEngine()
    ids = [engine.assign(event(n, message)).signature_id for n, (_, message) in enumerate(lines)]
    states = [
        engine.state(sid).model_copy(update={"fingerprint_version": version}) for sid in dict.fromkeys(ids)
    ]
    return states, ids


def test_signatures_rounds_fp_5_made_keep_receiving_their_events() -> None:
    patch = read_as(mask_spans_fifth)
    try:
        states, before = saved(ONE_BUG_EACH, "rounds-fp:5")
    finally:
        patch.undo()
    after = GroupingEngine(known=states)
    again = [
        after.assign(event(100 + n, message)).signature_id for n, (_, message) in enumerate(ONE_BUG_EACH)
    ]
    assert again == before
    # a statement no stored template holds is one signature whatever its literal
    lines = ("checkout of /basket?id=a failed", "checkout of /basket?id=b failed")
    first, second = (after.assign(event(300 + n, line)) for n, line in enumerate(lines))
    assert first.tier == "new" and second.signature_id == first.signature_id


#: messages `rounds-fp:4` read otherwise twice over: a count's plural, a month's name, and a literal
READ_OTHERWISE_TWICE = [
    ("retry", "GET /search?q=shoes failed 3 times since March 5, 2024"),
    ("retry", "GET /search?q=hat failed 2 times since March 6, 2024"),
    ("decode", "2 bytes dropped: b'\\xff\\xfe'"),
]


def test_signatures_rounds_fp_4_made_keep_receiving_their_events() -> None:
    patch = read_as(mask_spans_before)
    patch.setattr(shapes, "skeleton", skeleton_with_plurals)
    try:
        states, before = saved(READ_OTHERWISE_TWICE, "rounds-fp:4")
    finally:
        patch.undo()
    after = GroupingEngine(known=states)
    again = [
        after.assign(event(100 + n, message)).signature_id
        for n, (_, message) in enumerate(READ_OTHERWISE_TWICE)
    ]
    assert again == before
