"""A runtime's message that names a piece of code: the name is the bug's, never a value.

For an error with no stack trace (an error log, a failed span's status) the message is all there is. In
`'NoneType' object has no attribute 'email'` the quoted word is an attribute of the code, fixed per bug:
`... 'id'` is another bug. So are the argument of CPython's `TypeError`s, the name of its `NameError`,
the property V8 was reading and the callee it could not call, the method Ruby's `NoMethodError` names, and
the constraint, relation and column PostgreSQL names. Masking them as quoted values merged every such pair
into one problem. The values in the same messages stay masked (`KeyError: 'alice'`, the key PostgreSQL's
DETAIL line prints), and a signature made while the names were masked keeps receiving its events.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rounds_bot.grouping import shapes
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.normalize import mask_spans_fifth, mask_spans_sixth, normalize_uncached
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import ErrorEvent

EPOCH = datetime(2026, 11, 1, tzinfo=UTC)

#: two bugs each: the same runtime's message naming two pieces of code
PAIRS = [
    ("'NoneType' object has no attribute 'email'", "'NoneType' object has no attribute 'id'"),
    ("module 'json' has no attribute 'loads2'", "module 'json' has no attribute 'dumps2'"),
    ("name 'usr' is not defined", "name 'user_id' is not defined"),
    ("f() got an unexpected keyword argument 'retries'", "f() got an unexpected keyword argument 'timeout'"),
    (
        "charge() missing 1 required positional argument: 'order_id'",
        "charge() missing 1 required positional argument: 'amount'",
    ),
    (
        "Cannot read properties of undefined (reading 'id')",
        "Cannot read properties of undefined (reading 'map')",
    ),
    ("x.map is not a function", "x.filter is not a function"),
    ("data.info is not a function", "data.name is not a function"),
    ("undefined method 'name' for nil", "undefined method 'email' for nil"),
    ("undefined method `name' for nil:NilClass", "undefined method `line2' for nil:NilClass"),
    (
        'duplicate key value violates unique constraint "users_email_key"',
        'duplicate key value violates unique constraint "orders_pkey"',
    ),
    ('relation "orders" does not exist', 'relation "users" does not exist'),
]


def event(number: int, message: str, service: str = "shop") -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{number}", timestamp=EPOCH + timedelta(seconds=number), service=service, message=message
    )


@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_two_names_are_two_problems_on_a_fresh_database(first: str, second: str) -> None:
    engine = GroupingEngine()
    one, two = engine.assign(event(1, first)), engine.assign(event(2, second))
    assert one.signature_id != two.signature_id
    # the other order gives the same problems the same keys
    again = GroupingEngine()
    assert again.assign(event(3, second)).fingerprint_hash == two.fingerprint_hash
    assert again.assign(event(4, first)).fingerprint_hash == one.fingerprint_hash


@pytest.mark.parametrize(
    ("message", "normalized"),
    [
        ("'NoneType' object has no attribute 'email'", "<str> object has no attribute 'email'"),
        ("module 'json' has no attribute 'loads2'", "module <str> has no attribute 'loads2'"),
        (
            "type object 'User' has no attribute 'objects'. Did you mean: 'object'?",
            "type object <str> has no attribute 'objects'. Did you mean: <str>?",
        ),
        ("name 'usr' is not defined", "name 'usr' is not defined"),
        (
            "f() missing 3 required positional arguments: 'a', 'b', and 'c'",
            "f() missing <int> required positional arguments: 'a', 'b', and 'c'",
        ),
        (
            "f() missing 2 required keyword-only arguments: 'a' and 'b'",
            "f() missing <int> required keyword-only arguments: 'a' and 'b'",
        ),
        ("Cannot read properties of null (reading 'map')", "Cannot read properties of null (reading 'map')"),
        ("TypeError: items2.map is not a function", "TypeError: items2.map is not a function"),
        (
            "undefined method 'admin?' for an instance of User",
            "undefined method 'admin?' for an instance of User",
        ),
        # a qualified relation names its schema, which may be a tenant's: a value, the relation's name kept
        # (since `rounds-fp:8`: `mask_code_names`)
        ('relation "public.orders" does not exist', 'relation "<str>.orders" does not exist'),
        (
            'duplicate key value violates unique constraint "users_email_key"\n'
            "DETAIL:  Key (email)=(bob@x.io) already exists.",
            'duplicate key value violates unique constraint "users_email_key" '
            "DETAIL:  Key (email)=<data> already exists.",
        ),
        # values stay values: a key is data, a number read as a property is an index, a name's word
        # elsewhere is no name
        ("KeyError: 'alice'", "KeyError: <str>"),
        (
            "Cannot read properties of undefined (reading '0')",
            "Cannot read properties of undefined (reading <str>)",
        ),
        ("no user 'alice' has no attribute", "no user <str> has no attribute"),
        ('column "emial" of relation "users" is ambiguous', "column <str> of relation <str> is ambiguous"),
        ("unknown name 'bob smith' is not defined", "unknown name <str> is not defined"),
    ],
)
def test_the_name_stays_and_the_values_are_masked(message: str, normalized: str) -> None:
    assert normalize_uncached(message) == normalized


def test_one_problem_however_many_values_its_detail_prints() -> None:
    engine = GroupingEngine()
    ids = {
        engine.assign(
            event(
                n,
                'duplicate key value violates unique constraint "users_email_key"\n'
                f"DETAIL:  Key (email)=(user{n}.{'x' * (n % 7)}@example.io) already exists.",
            )
        ).signature_id
        for n in range(50)
    }
    other = engine.assign(
        event(
            99,
            'duplicate key value violates unique constraint "orders_pkey"\n'
            "DETAIL:  Key (id)=(42) already exists.",
        )
    )
    assert len(ids) == 1 and other.signature_id not in ids
    # the type CPython names beside the attribute is a value of the statement too
    types = {
        engine.assign(event(200 + n, f"'{kind}' object has no attribute 'email'")).signature_id
        for n, kind in enumerate(("NoneType", "dict", "User"))
    }
    assert len(types) == 1


def test_a_name_that_holds_a_digit_is_read_the_same_whatever_its_digits() -> None:
    # the shape memo reads every message of one shape alike: two names that differ in their digits alone
    # are one name (a table's monthly partitions), whichever came first
    engine = GroupingEngine()
    one = engine.assign(event(1, 'duplicate key value violates unique constraint "events_2024_05_pkey"'))
    two = engine.assign(event(2, 'duplicate key value violates unique constraint "events_2025_11_pkey"'))
    fresh = GroupingEngine().assign(
        event(3, 'duplicate key value violates unique constraint "events_2025_11_pkey"')
    )
    assert one.signature_id == two.signature_id and fresh.fingerprint_hash == one.fingerprint_hash


def read_as_sixth() -> pytest.MonkeyPatch:
    """A context in which the engine masks messages as `rounds-fp:6` did."""
    patch = pytest.MonkeyPatch()
    patch.setattr(shapes, "mask_spans", mask_spans_sixth)
    patch.setattr(shapes, "kept_pieces", lambda text, **_: ())  # a name with a digit was a parameter then
    return patch


def saved_sixth(messages: list[str], *, fifth: bool = False) -> tuple[list[SignatureState], list[str]]:
    """The signatures `rounds-fp:6` (or, `fifth`, `rounds-fp:5`) made of `messages`, as a database keeps
    them, and where each went."""
    patch = read_as_sixth()
    if fifth:
        patch.setattr(shapes, "mask_spans", mask_spans_fifth)
    try:
        engine = GroupingEngine()
        ids = [engine.assign(event(n, message)).signature_id for n, message in enumerate(messages)]
    finally:
        patch.undo()
    version = "rounds-fp:5" if fifth else "rounds-fp:6"
    states = [
        engine.state(sid).model_copy(update={"fingerprint_version": version}) for sid in dict.fromkeys(ids)
    ]
    return states, ids


def test_before_this_reading_each_pair_was_one_problem() -> None:
    for first, second in PAIRS:
        if first.startswith("x.map"):
            continue  # a callee of words alone was kept then already
        _, ids = saved_sixth([first, second])
        assert ids[0] == ids[1], first


@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_a_signature_made_before_keeps_receiving_both_names(first: str, second: str) -> None:
    states, before = saved_sixth([first, second])
    after = GroupingEngine(known=states)
    again = [after.assign(event(10 + n, message)).signature_id for n, message in enumerate((first, second))]
    assert again == before


def test_a_statement_no_earlier_signature_holds_keeps_its_names_apart() -> None:
    states, _ = saved_sixth(["'NoneType' object has no attribute 'email'"])
    after = GroupingEngine(known=states)
    one = after.assign(event(1, 'relation "orders" does not exist'))
    two = after.assign(event(2, 'relation "users" does not exist'))
    assert one.tier == two.tier == "new" and one.signature_id != two.signature_id


def test_an_event_gets_the_same_key_in_a_fresh_engine_and_in_one_that_saw_the_others() -> None:
    shared = GroupingEngine()
    messages = [message for pair in PAIRS for message in pair]
    seen = [shared.assign(event(n, message)).fingerprint_hash for n, message in enumerate(messages)]
    fresh = [
        GroupingEngine().assign(event(n, message)).fingerprint_hash for n, message in enumerate(messages)
    ]
    assert seen == fresh and len(set(seen)) == len(messages)


def test_a_signature_rounds_fp_5_made_is_found_after_the_reading_of_rounds_fp_6() -> None:
    # read otherwise by each version since: the query's literal (`rounds-fp:6`), the attribute (`rounds-fp:7`)
    lines = [
        "GET /profile?tab=info failed: 'NoneType' object has no attribute 'email'",
        "GET /profile?tab=orders failed: 'NoneType' object has no attribute 'id'",
    ]
    states, before = saved_sixth(lines, fifth=True)
    after = GroupingEngine(known=states)
    assert [after.assign(event(10 + n, line)).signature_id for n, line in enumerate(lines)] == before


#: one bug each, whatever the quoted word: a value that only looks like a name
ONE_BUG = [
    # a string literal in double quotes, read as a column (`WHERE name = "alice"`)
    ('ERROR:  column "alice" does not exist', 'ERROR:  column "bob" does not exist'),
    # a schema per tenant
    ('relation "tenant_4411.orders" does not exist', 'relation "tenant_17.orders" does not exist'),
    ('relation "acme.orders" does not exist', 'relation "globex.orders" does not exist'),
    # a map keyed by id was undefined
    (
        "Cannot read properties of undefined (reading 'u_8f3a2c')",
        "Cannot read properties of undefined (reading 'u_1b9e7d')",
    ),
    # another product's wording
    ("user name 'jsmith' is not defined", "user name 'mdoe' is not defined"),
]


@pytest.mark.parametrize(("first", "second"), ONE_BUG)
def test_a_value_that_only_looks_like_a_name_stays_a_value(first: str, second: str) -> None:
    engine = GroupingEngine()
    assert engine.assign(event(1, first)).signature_id == engine.assign(event(2, second)).signature_id


def test_a_name_error_keeps_its_name_after_its_type_too() -> None:
    assert "'usr'" in normalize_uncached("NameError: name 'usr' is not defined")
