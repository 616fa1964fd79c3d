"""More runtimes' messages that name code, and the numbers that tell one failure from another.

With no stack trace (an error log, a failed span's status) the message is all there is. CPython's
`No module named 'yaml'`, Node's `Cannot find module 'lodash'`, PHP's `Class "App\\Mailer" not found`, .NET's
`(Parameter 'order')`, an SQL engine's missing table or column, graphql-js's unknown field: the quoted word
is the code's, fixed per bug. So is a client's HTTP status code (a 404 and a 500 are two problems) and the
remote port of a connection error (5432 is PostgreSQL, 6379 Redis). Masking them as values merged every such
pair into one problem; the values around them (an address, a tenant's schema, a URL, a dictionary's key)
stay masked, and a signature made while they were masked (`rounds-fp:7`) keeps receiving its events.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import partial

import pytest

from rounds_bot.grouping import shapes
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.normalize import (
    SHAPE_DIGITS,
    kept_pieces,
    mask_spans_seventh,
    may_keep_pieces,
    normalize_seventh,
    normalize_uncached,
)
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import ErrorEvent

EPOCH = datetime(2026, 11, 1, tzinfo=UTC)

#: two bugs each (message, message, error type)
PAIRS = [
    ("No module named 'requests'", "No module named 'yaml'", "ModuleNotFoundError"),
    (
        "cannot import name 'foo' from 'app.utils' (/srv/app/utils.py)",
        "cannot import name 'bar' from 'app.utils' (/srv/app/utils.py)",
        "ImportError",
    ),
    ("Cannot find module './routes/admin'", "Cannot find module 'lodash'", "Error"),
    ('Class "App\\Services\\Mailer" not found', 'Class "App\\Services\\Sms" not found', "Error"),
    ("Value cannot be null. (Parameter 'order')", "Value cannot be null. (Parameter 'customer')", None),
    (
        "Method not found: 'Void Acme.Billing.Invoice.Send()'.",
        "Method not found: 'Void Acme.Billing.Ledger.Post()'.",
        "MissingMethodException",
    ),
    (
        "Could not load file or assembly 'Newtonsoft.Json, Version=13.0.0.0, Culture=neutral, "
        "PublicKeyToken=30ad4fe6b2a6aeed' or one of its dependencies.",
        "Could not load file or assembly 'Serilog, Version=2.0.0.0, Culture=neutral, "
        "PublicKeyToken=24c2f752a8e58a10' or one of its dependencies.",
        "FileNotFoundException",
    ),
    (
        "Unknown column 'user_nmae' in 'field list'",
        "Unknown column 'totl' in 'field list'",
        "ProgrammingError",
    ),
    ("Table 'shop.ordrs' doesn't exist", "Table 'shop.usrs' doesn't exist", "ProgrammingError"),
    ("Invalid object name 'dbo.Orders'.", "Invalid object name 'dbo.Users'.", "SqlException"),
    ("no such table: orders_2024", "no such table: users_2024", "OperationalError"),
    ('relation "public.orders" does not exist', 'relation "public.users" does not exist', "UndefinedTable"),
    (
        'Cannot query field "emial" on type "User".',
        'Cannot query field "adress" on type "User".',
        "GraphQLError",
    ),
    (
        'Unknown argument "limt" on field "Query.orders".',
        'Unknown argument "ofset" on field "Query.orders".',
        "GraphQLError",
    ),
    ("Request failed with status code 404", "Request failed with status code 500", "AxiosError"),
    ("Response code 429 (Too Many Requests)", "Response code 503 (Service Unavailable)", "HTTPError"),
    (
        "404 Client Error: Not Found for url: https://api.example.com/v1/users/42",
        "500 Server Error: Internal Server Error for url: https://api.example.com/v1/users/42",
        "HTTPError",
    ),
    (
        "dial tcp 10.0.3.7:5432: connect: connection refused",
        "dial tcp 10.0.3.7:6379: connect: connection refused",
        "*net.OpError",
    ),
    ("connect ECONNREFUSED 10.0.3.7:5432", "connect ECONNREFUSED 10.0.3.7:6379", "Error"),
]

#: one bug each: a statement whose value varies (`{}`: 50 different ones)
VARYING = [
    ("dial tcp 10.0.{}.7:5432: connect: connection refused", "*net.OpError"),
    ("connect ECONNREFUSED 10.2.{}.1:5432", "Error"),
    ("connect ECONNREFUSED ::{}:5432", "Error"),
    ("dial tcp [fd00::{}]:6379: i/o timeout", "*net.OpError"),
    ("read tcp 10.0.0.5:{}->10.0.0.9:5432: read: connection reset by peer", "*net.OpError"),
    ("write tcp 10.1.{}.5:40112->10.0.0.9:5432: write: broken pipe", "*net.OpError"),
    ("404 Client Error: Not Found for url: https://api.example.com/v1/users/{}", "HTTPError"),
    # a read or write on an accepted connection: the remote end is the client, its port an ephemeral one
    ("write tcp 172.17.0.2:8080->172.17.0.1:4{:04d}: write: broken pipe", "*net.OpError"),
    ("read tcp 10.0.0.9:443->10.0.0.5:5{:04d}: read: connection reset by peer", "*net.OpError"),
    ("Table 'tenant_{}.orders' doesn't exist", "ProgrammingError"),
    ("Invalid object name 'tenant{}.Orders'.", "SqlException"),
    ('relation "tenant_{}.orders" does not exist', "UndefinedTable"),
    ("no such table: t{}.orders", "OperationalError"),
    # values, which look like names: a dictionary's key is data (as CPython's `KeyError`'s), and so is
    # the column SQL Server names (a string in double quotes is read as a column)
    ('Undefined array key "user{}@example.com"', "ErrorException"),
    ("The given key 'u{}' was not present in the dictionary.", "KeyNotFoundException"),
    ("Invalid column name 'alice{}'.", "SqlException"),
]

#: one bug each, whatever the quoted word: a value that only looks like a name
ONE_BUG = [
    ('Undefined array key "email"', 'Undefined array key "phone"', "ErrorException"),
    (
        "The given key 'currency' was not present in the dictionary.",
        "The given key 'locale' was not present in the dictionary.",
        "KeyNotFoundException",
    ),
    ("KeyError: 'DATABASE_URL'", "KeyError: 'REDIS_URL'", "KeyError"),
    ("Invalid column name 'alice'.", "Invalid column name 'bob'.", "SqlException"),
    ('ERROR:  column "alice" does not exist', 'ERROR:  column "bob" does not exist', "UndefinedColumn"),
    # an absolute path names where a release was deployed
    ("Cannot find module '/srv/releases/a1/app.js'", "Cannot find module '/srv/releases/b2/app.js'", "Error"),
    # no status code: another product's wording, a code outside 1xx to 5xx
    ("Export failed with 404 items left", "Export failed with 500 items left", "ExportError"),
    ("Request failed with status code 604", "Request failed with status code 699", "AxiosError"),
    # three digits before an upper-case word: a size, an id, an amount as often as a status
    ("Allocated 256 MB", "Allocated 512 MB", "MemoryError"),
    ("Job 123 FAILED", "Job 456 FAILED", "JobError"),
    ("charged 250 EUR", "charged 300 EUR", "PaymentError"),
    ("upstream said 200 OK", "upstream said 201 OK", "ProxyError"),
    # a column the engine names where a value concatenated into the SQL may stand: data
    (
        "Unknown column 'alice' in 'where clause'",
        "Unknown column 'bob' in 'where clause'",
        "OperationalError",
    ),
]


def event(number: int, message: str, error_type: str | None = None, service: str = "shop") -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{number}",
        timestamp=EPOCH + timedelta(seconds=number),
        service=service,
        message=message,
        error_type=error_type,
    )


@pytest.mark.parametrize(("first", "second", "error_type"), PAIRS)
def test_two_names_or_numbers_are_two_problems_on_a_fresh_database(
    first: str, second: str, error_type: str | None
) -> None:
    engine = GroupingEngine()
    one, two = engine.assign(event(1, first, error_type)), engine.assign(event(2, second, error_type))
    assert one.signature_id != two.signature_id
    # the other order gives the same problems the same keys
    again = GroupingEngine()
    assert again.assign(event(3, second, error_type)).fingerprint_hash == two.fingerprint_hash
    assert again.assign(event(4, first, error_type)).fingerprint_hash == one.fingerprint_hash


@pytest.mark.parametrize(("statement", "error_type"), VARYING)
def test_one_problem_however_its_values_vary(statement: str, error_type: str) -> None:
    engine = GroupingEngine()
    one_at_a_time = {
        engine.assign(event(n, statement.format(n + 1), error_type)).signature_id for n in range(50)
    }
    batch = [event(n, statement.format(n + 100), error_type) for n in range(50)]
    in_one_batch = {assignment.signature_id for assignment in GroupingEngine().assign_all(batch)}
    assert len(one_at_a_time) == 1 and len(in_one_batch) == 1


@pytest.mark.parametrize(("first", "second", "error_type"), ONE_BUG)
def test_a_value_that_only_looks_like_a_name_or_a_status_stays_a_value(
    first: str, second: str, error_type: str
) -> None:
    engine = GroupingEngine()
    assert (
        engine.assign(event(1, first, error_type)).signature_id
        == engine.assign(event(2, second, error_type)).signature_id
    )


@pytest.mark.parametrize(
    ("message", "normalized"),
    [
        (
            "dial tcp 10.0.3.7:5432: connect: connection refused",
            "dial tcp <ip>:5432: connect: connection refused",
        ),
        (
            "read tcp 10.0.0.5:54321->10.0.0.9:5432: read: connection reset by peer",
            "read tcp <ip>:<int>-><ip>:<int>: read: connection reset by peer",
        ),
        ("connect ECONNREFUSED ::1:5432", "connect ECONNREFUSED <ip>:5432"),
        ("dial tcp [fe80::1%eth0]:6379: i/o timeout", "dial tcp <ip>:6379: i/o timeout"),
        ("Response code 429 (Too Many Requests)", "Response code 429 (Too Many Requests)"),
        ('404 NOT_FOUND "No order 42"', "<int> NOT_FOUND <str>"),
        ("Table 'shop.ordrs' doesn't exist", "Table '<str>.ordrs' doesn't exist"),
        ("Invalid object name 'Orders'.", "Invalid object name 'Orders'."),
        ("Invalid column name 'Emial'.", "Invalid column name <str>."),
        ("no such table: main.orders_2024", "no such table: <str>.orders_2024"),
        ("Unknown column 'o.totl' in 'where clause'", "Unknown column <str> in <str>"),
        ("Unknown column 'o.totl' in 'on clause'", "Unknown column 'o.totl' in 'on clause'"),
        ("no such column: totl_2", "no such column: totl_<int>"),
        # a name the rules masked before it was kept stays masked: an address, a digest
        ("no such table: alice@example.com", "no such table: <email>"),
        ("no such table: d41d8cd98f00b204e9800998ecf8427e", "no such table: <md5>"),
        (
            "cannot import name 'x' from partially initialized module 'app.a' (most likely due to a circular "
            "import) (/srv/app/a.py)",
            "cannot import name 'x' from partially initialized module 'app.a' (most likely due to a circular "
            "import) (<path>)",
        ),
        (
            "Cannot find package 'zod' imported from /srv/app/index.js",
            "Cannot find package 'zod' imported from <path>",
        ),
        ('Class "App\\Mailer" not found', 'Class "App\\Mailer" not found'),
        ('Unknown argument "x" on directive "@include".', 'Unknown argument "x" on directive "@include".'),
        ('Undefined array key "email"', "Undefined array key <str>"),
    ],
)
def test_the_name_or_number_stays_and_the_values_are_masked(message: str, normalized: str) -> None:
    assert normalize_uncached(message) == normalized


def read_as_seventh() -> pytest.MonkeyPatch:
    """A context in which the engine reads messages as `rounds-fp:7` did."""
    patch = pytest.MonkeyPatch()
    patch.setattr(shapes, "mask_spans", mask_spans_seventh)
    patch.setattr(shapes, "kept_pieces", partial(kept_pieces, seventh=True))
    # (no digit was part of a shape then)
    patch.setattr(
        shapes, "shape_of", lambda text: text.encode("utf-8", "surrogatepass").translate(SHAPE_DIGITS)
    )
    return patch


def saved_seventh(events: list[ErrorEvent]) -> tuple[list[SignatureState], list[str]]:
    """The signatures `rounds-fp:7` made of `events`, as a database keeps them, and where each went."""
    patch = read_as_seventh()
    try:
        engine = GroupingEngine()
        ids = [engine.assign(each).signature_id for each in events]
    finally:
        patch.undo()
    states = [
        engine.state(sid).model_copy(update={"fingerprint_version": "rounds-fp:7"})
        for sid in dict.fromkeys(ids)
    ]
    return states, ids


def test_before_this_reading_each_pair_was_one_problem() -> None:
    merged = 0
    for number, (first, second, error_type) in enumerate(PAIRS):
        if normalize_seventh(first) != normalize_seventh(second):
            continue  # other words told them apart then already (a reason phrase, a table's name of letters)
        _, ids = saved_seventh(
            [event(2 * number, first, error_type), event(2 * number + 1, second, error_type)]
        )
        assert ids[0] == ids[1], first
        merged += 1
    assert merged >= len(PAIRS) - 4


@pytest.mark.parametrize(("first", "second", "error_type"), PAIRS)
def test_a_signature_made_before_keeps_receiving_both(
    first: str, second: str, error_type: str | None
) -> None:
    states, before = saved_seventh([event(1, first, error_type), event(2, second, error_type)])
    after = GroupingEngine(known=states)
    again = [
        after.assign(event(10 + n, message, error_type)).signature_id
        for n, message in enumerate((first, second))
    ]
    assert again == before


def test_a_statement_no_earlier_signature_holds_keeps_its_numbers_apart() -> None:
    states, _ = saved_seventh([event(1, "No module named 'yaml'", "ModuleNotFoundError")])
    after = GroupingEngine(known=states)
    one = after.assign(event(2, "Request failed with status code 404", "AxiosError"))
    two = after.assign(event(3, "Request failed with status code 500", "AxiosError"))
    assert one.tier == two.tier == "new" and one.signature_id != two.signature_id


def test_an_event_gets_the_same_key_in_a_fresh_engine_and_in_one_that_saw_the_others() -> None:
    shared = GroupingEngine()
    messages = [(message, error_type) for first, second, error_type in PAIRS for message in (first, second)]
    seen = [shared.assign(event(n, *each)).fingerprint_hash for n, each in enumerate(messages)]
    fresh = [GroupingEngine().assign(event(n, *each)).fingerprint_hash for n, each in enumerate(messages)]
    assert seen == fresh and len(set(seen)) == len(messages)


NAMES = ("email", "phone", "address", "status", "owner", "created", "total", "currency", "locale", "region")
STATEMENTS = [
    ("No module named '{}'", "ModuleNotFoundError"),
    ("Cannot find module '{}'", "Error"),
    ("Value cannot be null. (Parameter '{}')", "ArgumentNullException"),
    ("Unknown column '{}' in 'field list'", "ProgrammingError"),
    ("Table 'shop.{}' doesn't exist", "ProgrammingError"),
    ('Cannot query field "{}" on type "User".', "GraphQLError"),
]


@pytest.mark.parametrize(("statement", "error_type"), STATEMENTS)
def test_a_batch_of_many_names_of_one_statement_keeps_each_name_apart(
    statement: str, error_type: str
) -> None:
    # the batch's variability rule never takes a kept name for a varying word (`variability`)
    batch = [event(n, statement.format(NAMES[n % len(NAMES)]), error_type) for n in range(3 * len(NAMES))]
    by_name: dict[str, set[str]] = {}
    for each, assignment in zip(batch, GroupingEngine().assign_all(batch), strict=True):
        by_name.setdefault(each.message, set()).add(assignment.signature_id)
    assert all(len(ids) == 1 for ids in by_name.values()), by_name
    assert len({next(iter(ids)) for ids in by_name.values()}) == len(NAMES)


def test_a_batch_of_many_status_codes_keeps_each_apart() -> None:
    codes = (400, 401, 403, 404, 409, 422, 429, 500, 502, 503, 504)
    batch = [
        event(n, f"Request failed with status code {codes[n % len(codes)]}", "AxiosError") for n in range(33)
    ]
    assigned = GroupingEngine().assign_all(batch)
    assert len({a.signature_id for a in assigned}) == len(codes)


def test_the_literal_prefilter_lets_every_kept_name_or_number_through() -> None:
    # a message the prefilter turns away is read without looking for kept pieces (the log stream's speed)
    messages = [message for first, second, _ in PAIRS for message in (first, second)]
    messages += [statement.format(7) for statement, _ in VARYING + STATEMENTS]
    messages += [
        "Something failed with status code 404 again",
        "GET /x: 502 Server Error: Bad Gateway for url",
    ]
    for message in messages:
        if kept_pieces(message):
            assert may_keep_pieces(message), message
    assert not may_keep_pieces("Received block blk_-1608999687919862906 of size 91178 from /10.250.19.102")
