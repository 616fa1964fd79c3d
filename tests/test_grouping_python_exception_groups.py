"""Python exception groups (PEP 654: asyncio's `TaskGroup`, trio's and anyio's, the `exceptiongroup` backport)
are grouped by the errors inside them, as Sentry groups an exception group: by its distinct top-level
exceptions, in any order, the group itself only when there are several. A signature the previous release
made from a group's trace, which it read block by block in print order, keeps receiving its events.

The traces are the real OpenTelemetry Python SDK's records of real `asyncio.TaskGroup` failures
(`tests/fixtures/python_exception_groups.json`, paths moved to `/app`), and one of the backport's on
Python 3.10."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from known_states import engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.fingerprint import title_for
from rounds_bot.grouping.normalize import normalize_uncached
from rounds_bot.grouping.stacktrace import Frame, ParsedTrace, as_read_before, parse_stacktrace, python
from rounds_bot.grouping.stacktrace.model import trace_lines
from rounds_bot.grouping.stacktrace.python_groups import title_parts
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
RECORDS = json.loads(
    (Path(__file__).parent / "fixtures" / "python_exception_groups.json").read_text(encoding="utf-8")
)
#: the hashes the previous release stored for a signature it made from `charge_and_ship` (its
#: `GroupingEngine` assigned an event of service `shop` with that record, and its state of the signature
#: held these): the group and both members, in print order, each read as a block of its own
PREVIOUS_RELEASE_HASHES = (
    "835b0354c0870ee116320df117a6537798142d8ded469a4caf5a6c6d6c67b134",
    "579534164d5c0536a3183806ea69d406f4f2a06220c392548fce084055da5efd",
    "7d5d01d6c443bdd37dc0fd4d67d2717e4badeee22748ab91692a7d90ab179704",
)


def _event(n: int, case: str, service: str = "shop") -> ErrorEvent:
    record = RECORDS[case]
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service=service,
        error_type=record["type"],
        message=record["message"],
        stacktrace=record["stacktrace"],
    )


def _parsed(case: str) -> ParsedTrace:
    trace = parse_stacktrace(RECORDS[case]["stacktrace"])
    assert trace is not None
    return trace


def _read(case: str) -> list[tuple[str, str, list[str | None]]]:
    """Each exception read: its type, relation and functions, crash site first."""
    return [(e.type, e.relation, [f.function for f in e.frames]) for e in _parsed(case).exceptions]


def _signatures(*cases: str) -> list[str]:
    return [a.signature_id for a in GroupingEngine().assign_all(_event(n, c) for n, c in enumerate(cases))]


GROUP_FRAMES = ["__aexit__", "checkout", "run_until_complete", "run", "run", "main"]


def test_a_groups_distinct_errors_are_read_after_it_in_a_fixed_order() -> None:
    expected = [
        ("ExceptionGroup", "raised", GROUP_FRAMES),
        ("KeyError", "inner", ["ship"]),
        ("ValueError", "inner", ["charge"]),
    ]
    assert _read("charge_and_ship") == expected
    assert _read("ship_and_charge") == expected


def test_the_same_errors_in_another_order_are_one_problem() -> None:
    found = GroupingEngine().assign_all([_event(1, "charge_and_ship"), _event(2, "ship_and_charge")])
    assert found[0].signature_id == found[1].signature_id
    assert found[1].tier == "fingerprint"


def test_groups_of_other_errors_at_one_task_group_are_other_problems() -> None:
    """(ValueError in `charge`, KeyError in `ship`), the ValueError alone, two KeyErrors: three problems,
    though all three failed at one `async with` with one group type and message."""
    both, charge, ships = _signatures("charge_and_ship", "charge_only", "two_ships")
    assert len({both, charge, ships}) == 3


def test_a_group_of_one_distinct_error_reads_as_that_error_alone() -> None:
    assert _read("charge_only") == [("ValueError", "raised", ["charge"])]
    # two KeyErrors raised at one place are one error, twice: the group is left out
    (ship,) = _parsed("two_ships").exceptions
    assert (ship.type, ship.value, [f.function for f in ship.frames]) == ("KeyError", "'sku-6'", ["ship"])


def test_a_members_chain_counts_as_in_a_traceback() -> None:
    """`raise LookupError(...) from error` inside a task: the member is the LookupError, raised, and its
    cause follows it, as a traceback of its own would read."""
    assert _read("chained_member") == [
        ("ExceptionGroup", "raised", GROUP_FRAMES),
        ("LookupError", "inner", ["load", "reload"]),
        ("KeyError", "cause", ["load"]),
        ("ValueError", "inner", ["charge"]),
    ]


def test_a_nested_groups_errors_count_as_the_outer_groups() -> None:
    """A task that failed with a TaskGroup of its own: its group is left out and its errors are the outer
    group's (Sentry's top-level exceptions), so (ValueError, (ValueError, KeyError)) is (ValueError,
    KeyError)."""
    assert _read("nested_groups") == _read("charge_and_ship")
    nested, flat = _signatures("nested_groups", "charge_and_ship")
    assert nested == flat


def test_past_the_fifteen_errors_python_prints_none_is_read() -> None:
    """Python prints 15 of a group's errors and `and 5 more exceptions`: the errors printed are the group's
    (twenty ValueErrors raised in `charge`, nested in a group of one, read as that ValueError), and the line
    is no part of any error's message."""
    (charge,) = _parsed("more_than_fifteen").exceptions
    assert (charge.type, charge.value, [f.function for f in charge.frames]) == (
        "ValueError",
        "card declined for order 100",
        ["charge"],
    )
    many, one = _signatures("more_than_fifteen", "charge_only")
    assert many == one


def test_a_note_added_to_an_error_stays_with_its_message() -> None:
    assert _read("noted_member") == [("ValueError", "raised", ["audit"])]
    assert _parsed("noted_member").exceptions[0].value == "bad total for order 10 while auditing order 10"


def test_a_group_raised_as_a_cause_is_read_in_its_chain() -> None:
    """`raise RuntimeError(...) from group`: the RuntimeError is raised, its cause is the group, read by the
    errors inside it."""
    assert _read("group_as_cause") == [
        ("RuntimeError", "raised", ["checkout_or_fail", "run_until_complete", "run", "run", "main"]),
        ("ExceptionGroup", "cause", ["__aexit__", "checkout", "checkout_or_fail"]),
        ("KeyError", "inner", ["ship"]),
        ("ValueError", "inner", ["charge"]),
    ]


def test_the_backports_groups_read_alike() -> None:
    assert _read("backport") == [
        ("exceptiongroup.ExceptionGroup", "raised", ["checkout", "<module>"]),
        ("KeyError", "inner", ["ship", "checkout"]),
        ("ValueError", "inner", ["charge", "checkout"]),
    ]


def test_a_group_built_without_raising_its_errors_reads_its_members() -> None:
    """Members never raised print no traceback: each is its exception line, read with no frame; the
    group's own frames are then what places it, so it stays."""
    text = (  # as Python 3.11 prints it
        "  + Exception Group Traceback (most recent call last):\n"
        '  |   File "/app/shop/cart.py", line 7, in <module>\n'
        '  |     validate([ValueError("no stock"), ValueError("no stock")])\n'
        '  |   File "/app/shop/cart.py", line 4, in validate\n'
        '  |     raise ExceptionGroup("invalid cart", errors)\n'
        "  | ExceptionGroup: invalid cart (2 sub-exceptions)\n"
        "  +-+---------------- 1 ----------------\n"
        "    | ValueError: no stock\n"
        "    +---------------- 2 ----------------\n"
        "    | ValueError: no stock\n"
        "    +------------------------------------\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert [(e.type, e.relation, len(e.frames)) for e in trace.exceptions] == [
        ("ExceptionGroup", "raised", 2),
        ("ValueError", "inner", 0),
    ]
    parts = title_parts(trace, "ExceptionGroup", "invalid cart (<int> sub-exceptions)", ["", ""])
    assert parts == ("ValueError", "")  # the error inside names it (its value as normalised, given here)


def test_a_source_line_python_3_13_prints_behind_a_bar_is_a_frames_source() -> None:
    """Python 3.13 prints the line of a statement of several lines that failed, which may begin with `|`
    (`| int("x"))`): behind a member's margin it is that frame's source, not a margin of its own."""
    text = (
        "  + Exception Group Traceback (most recent call last):\n"
        '  |   File "/app/shop/orders.py", line 39, in checkout\n'
        "  |     async with asyncio.TaskGroup() as group:\n"
        "  |                ~~~~~~~~~~~~~~~~~^^\n"
        '  |   File "/usr/local/lib/python3.13/asyncio/taskgroups.py", line 154, in __aexit__\n'
        "  |     raise me from None\n"
        "  | ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)\n"
        "  +-+---------------- 1 ----------------\n"
        "    | Traceback (most recent call last):\n"
        '    |   File "/app/shop/orders.py", line 10, in ship\n'
        '    |     return stock[f"sku-{order}"]\n'
        "    |            ~~~~~^^^^^^^^^^^^^^^^\n"
        "    | KeyError: 'sku-2'\n"
        "    +---------------- 2 ----------------\n"
        "    | Traceback (most recent call last):\n"
        '    |   File "/app/shop/orders.py", line 46, in parse_quantity\n'
        '    |     | int("x"))\n'
        "    |       ~~~^^^^^\n"
        "    | ValueError: invalid literal for int() with base 10: 'x'\n"
        "    +------------------------------------\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert [(e.type, [(f.function, f.context_line) for f in e.frames]) for e in trace.exceptions] == [
        (
            "ExceptionGroup",
            [("__aexit__", "raise me from None"), ("checkout", "async with asyncio.TaskGroup() as group:")],
        ),
        ("KeyError", [("ship", 'return stock[f"sku-{order}"]')]),
        ("ValueError", [("parse_quantity", '| int("x"))')]),
    ]


def test_a_trace_without_a_group_reads_as_before() -> None:
    text = RECORDS["group_as_cause"]["stacktrace"].split("The above exception was the direct cause")[1]
    text = text.split("\n", 2)[2]  # the RuntimeError's traceback alone
    trace = parse_stacktrace(text)
    assert trace is not None and trace == python.parse(trace_lines(text))
    assert not trace.notes and as_read_before(trace) is None


def _hashed(trace: ParsedTrace) -> list[tuple[str, str, tuple[Frame, ...]]]:
    """What the hashes read of a trace: each exception's type, relation (the site's root cause), frames."""
    return [(e.type, e.relation, e.frames) for e in trace.exceptions]


@pytest.mark.parametrize("case", sorted(RECORDS))
def test_the_reading_releases_before_gave_a_group_is_kept_to_look_up(case: str) -> None:
    """Releases before read a group block by block, in print order (`python.parse`): that reading is given
    to look up first, whenever it differs from this one in what a hash reads."""
    before = python.parse(trace_lines(RECORDS[case]["stacktrace"]))
    assert before is not None
    now = _parsed(case)
    given = as_read_before(now)
    if given is None:
        assert _hashed(now) == _hashed(before)
    else:
        assert _hashed(given) == _hashed(before) != _hashed(now)
        assert not given.notes


def test_this_versions_own_hashes_of_a_group_are_none_of_the_previous_releases() -> None:
    """The reading by the errors inside is new: only the reading kept to look up finds what was stored."""
    engine = GroupingEngine()
    made = engine.assign(_event(1, "charge_and_ship"))
    assert made.tier == "new"
    assert set(PREVIOUS_RELEASE_HASHES).isdisjoint(engine.state(made.signature_id).hashes)


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_the_previous_release_made_keeps_receiving_the_group(how: str) -> None:
    engine = engine_knowing(
        "sig_before",
        service="shop",
        title="ExceptionGroup: unhandled errors in a TaskGroup (<int> sub-exceptions)",
        hashes=PREVIOUS_RELEASE_HASHES,
        how=how,
    )
    found = engine.assign_all([_event(1, "charge_and_ship"), _event(2, "charge_and_ship")])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)
    registered = engine.state("sig_before").hashes
    assert set(PREVIOUS_RELEASE_HASHES) < set(registered)
    assert found[0].fingerprint_hash in registered
    # and the same errors in another order, which that release made another signature of, find it now
    later = engine.assign(_event(3, "ship_and_charge"))
    assert (later.signature_id, later.tier) == ("sig_before", "fingerprint")


def test_without_a_signature_before_a_group_starts_one_of_its_errors() -> None:
    found = GroupingEngine().assign_all([_event(1, "charge_and_ship")])
    assert found[0].tier == "new" and found[0].fingerprint_hash not in PREVIOUS_RELEASE_HASHES


@pytest.mark.parametrize(
    ("case", "title"),
    [
        ("charge_only", "ValueError: card declined for order <int>"),
        ("two_ships", "KeyError: 'sku-<int>'"),
        ("charge_and_ship", "KeyError: 'sku-<int>' (and 1 more error in its ExceptionGroup)"),
        ("nested_groups", "KeyError: 'sku-<int>' (and 1 more error in its ExceptionGroup)"),
        ("backport", "KeyError: 'sku-<int>' (and 1 more error in its ExceptionGroup)"),
        # a group that is a cause: the raised exception names the problem, as any chain's
        ("group_as_cause", "RuntimeError: checkout failed"),
    ],
)
def test_a_groups_title_names_the_error_inside(case: str, title: str) -> None:
    record, trace = RECORDS[case], _parsed(case)
    values = [normalize_uncached(e.value) for e in trace.exceptions]
    parts = title_parts(trace, record["type"], normalize_uncached(record["message"]), values)
    assert title_for(*parts) == title


def test_the_engine_titles_a_groups_problem_by_the_error_inside() -> None:
    """The title an issue gets is the engine's: the first error read inside the group, not the group."""
    [alone, pair] = GroupingEngine().assign_all([_event(0, "charge_only"), _event(1, "charge_and_ship")])
    assert alone.title == "ValueError: card declined for order <int>"
    assert pair.title == "KeyError: 'sku-<int>' (and 1 more error in its ExceptionGroup)"
