"""How a Go panic is read: a call's lone argument is no part of its frame, and a runtime error's kind is
part of the panic's identity.

Go prints a call's arguments in parentheses after its function (runtime/traceback.go, `printArgs`: hex
words, `{`/`}` around a struct's, `?` after a value that may be stale, `...` for an inlined call); one
argument, `main.mustLoad(0x2a)`, was kept in the function's name, so one panic split per argument value.

A runtime error's text is one of a fixed set (runtime/error.go, runtime/panic.go), its values aside: the
index out of range and the nil map assignment of one function are two problems; two indexes are one.
A panic of the program's own (`panic(fmt.Sprintf(...))`) stays one problem per site, as before.
(`test_grouping_go_panics_earlier`: the signatures the release before made keep receiving them.)
"""

from __future__ import annotations

from itertools import permutations

import pytest
from go_panic_texts import (
    FLOAT_TO_INT,
    INDEX,
    LOADER_MESSAGE,
    MY_ERR,
    NIL_MAP,
    NIL_POINTER,
    ORDER,
    SLICE_CAP,
    SLICE_ORDER,
    TO_INT,
    assigned,
    checkout,
    event,
    functions,
    ids,
    loader,
    raised,
    served,
)

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.exception_chain import short_type
from rounds_bot.grouping.logged_traces import LOG_BODY, logged_exception
from rounds_bot.grouping.stacktrace import as_read_before, parse_stacktrace
from rounds_bot.grouping.stacktrace.go_panics import PROGRAM_PANIC, runtime_error_kind

# --- a call's arguments ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argument",
    [
        "0x2a",  # a small integer
        "...",  # an inlined call
        "0x0",  # a nil pointer
        "0x2a?",  # a value that may be stale
        "0x15f3a40?",  # a type's address, with the register ABI's `?` (Go 1.17+)
        "{0xc000012000}",  # a struct of one word
        "0xc000012000",  # a heap address, taken off before too
    ],
)
def test_a_calls_lone_argument_is_no_part_of_its_frame(argument: str) -> None:
    assert functions(loader(argument)) == ["mustLoad", "main"]


def test_a_method_after_its_receiver_keeps_its_name() -> None:
    text = loader("0x2a").replace("main.mustLoad(0x2a)", "github.com/acme/shop/config.(*Loader).Must(...)")
    assert functions(text) == ["(*Loader).Must", "main"]


def test_register_abi_arguments_are_no_part_of_any_frame() -> None:
    """Go 1.17's register ABI prints a struct's words in braces, `?` after a spilled value and `...` for the
    rest (runtime/traceback.go, `printArgs`): one panic printed with other values is one problem."""
    one = loader("{0x1b2e4c0, 0xc0009cd448}").replace("main.main()", "main.run(0x15f3a40?, ...)")
    other = loader("{0x1c00000, 0xc000aa0000}").replace("main.main()", "main.run(0x1600000?, ...)")
    assert functions(one) == functions(other) == ["mustLoad", "run"]
    found = GroupingEngine().assign_all([event(1, LOADER_MESSAGE, one), event(2, LOADER_MESSAGE, other)])
    assert found[0].signature_id == found[1].signature_id


def test_one_panic_passing_other_values_to_a_one_argument_call_is_one_problem() -> None:
    found = GroupingEngine().assign_all(
        [event(n, LOADER_MESSAGE, loader(argument, n)) for n, argument in enumerate(("0x2a", "0x7", "..."))]
    )
    assert len(set(ids(found))) == 1


def test_the_reading_before_names_the_frame_with_its_argument_and_types_the_panic_plainly() -> None:
    trace = parse_stacktrace(loader("0x2a"))
    assert trace is not None
    before = as_read_before(trace)
    assert before is not None and not before.notes
    assert [f.function for f in before.exceptions[0].frames] == ["mustLoad(0x2a)", "main"]
    assert before.exceptions[0].type == "panic"
    address = parse_stacktrace(loader("0xc000012000"))
    assert address is not None  # an address was taken off before too: only the type was read otherwise
    read = as_read_before(address)
    assert read is not None and [f.function for f in read.exceptions[0].frames] == ["mustLoad", "main"]


# --- a runtime error's kind ------------------------------------------------------------------------------


def test_runtime_errors_of_different_kinds_in_one_function_are_apart() -> None:
    assert len(set(ids(assigned(INDEX, NIL_POINTER, NIL_MAP, ORDER)))) == 4


@pytest.mark.parametrize("order", list(permutations([INDEX, NIL_MAP, ORDER])))
def test_on_a_fresh_database_kinds_are_apart_whichever_comes_first(order: tuple[str, ...]) -> None:
    """The program's own panic is typed apart too: typed `panic` as releases before typed every panic, its
    signature would be found by the reading before of every runtime error after it."""
    by_message = dict(zip(order, ids(assigned(*order)), strict=True))
    assert len(set(by_message.values())) == 3
    one_by_one = GroupingEngine()
    for message in order:
        assert assigned(message, engine=one_by_one)[0].signature_id == by_message[message]


def test_a_runtime_errors_values_do_not_split_it() -> None:
    found = assigned(
        INDEX,
        "runtime error: index out of range [17] with length 2",
        "runtime error: index out of range [-1]",
    )
    assert len(set(ids(found))) == 1


def _keys(*messages: str) -> list[str]:
    """Each panic's key (`Assignment.fingerprint_hash`), each read by a fresh engine. (Tier 3 may still join
    two kinds of one site whose texts are alike, as it joins any two traces of one crash site.)"""
    return [assigned(message)[0].fingerprint_hash for message in messages]


def test_a_slice_expressions_bounds_errors_are_one_kind_apart_from_an_index() -> None:
    """`s[lo:hi]` fails with `[:5] with capacity 3` or `[5:3]` as its values go (runtime/panic.go,
    `goPanicSliceAcap`, `goPanicSliceB`): one problem, another kind than an index's."""
    assert (
        raised(checkout(SLICE_CAP))[0]
        == raised(checkout(SLICE_ORDER))[0]
        == ("panic (slice bounds out of range)")
    )
    cap, order, index = _keys(SLICE_CAP, SLICE_ORDER, INDEX)
    assert cap == order != index
    assert len(set(ids(assigned(SLICE_CAP, SLICE_ORDER)))) == 1


def test_an_interface_conversions_types_are_code_and_part_of_its_kind() -> None:
    assert runtime_error_kind(TO_INT) == TO_INT
    assert runtime_error_kind("interface conversion: interface {} is *v1.Pod, not *client.V1Pod") == (
        "interface conversion: interface {} is *Pod, not *V1Pod"
    )
    trace = parse_stacktrace(checkout("interface conversion: interface {} is *v1.Pod, not *client.V1Pod"))
    assert trace is not None  # the type is read whole where a type's name is cut at its package's dot
    assert short_type(trace.exceptions[0].type) == trace.exceptions[0].type
    to_int, float_to_int, again = _keys(
        TO_INT, FLOAT_TO_INT, "interface conversion: interface {} is string, not int"
    )
    assert to_int == again != float_to_int


def test_the_programs_own_panics_at_one_site_stay_one_problem() -> None:
    assert len(set(ids(assigned(ORDER, "payment declined: card expired", "order 7 not found")))) == 1


def test_an_error_struct_as_the_panic_value_is_the_programs_own() -> None:
    assert raised(checkout(MY_ERR))[:2] == (PROGRAM_PANIC, MY_ERR)
    found = ids(assigned(MY_ERR, "main.MyErr{Code:4}", ORDER, INDEX))
    assert found[0] == found[1] == found[2] != found[3]


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (INDEX, "index out of range"),
        ("runtime error: index out of range [-1]", "index out of range"),
        ("runtime error: index out of range", "index out of range"),  # before Go 1.12: no values
        (SLICE_CAP, "slice bounds out of range"),
        ("runtime error: slice bounds out of range [::7] with length 3", "slice bounds out of range"),
        (SLICE_ORDER, "slice bounds out of range"),
        (NIL_POINTER, "invalid memory address or nil pointer dereference"),
        ("runtime error: integer divide by zero", "integer divide by zero"),
        (NIL_MAP, NIL_MAP),
        ("send on closed channel", "send on closed channel"),
        ("close of closed channel", "close of closed channel"),
        ("panic called with nil argument", "panic called with nil argument"),
        (
            "interface conversion: interface {} is nil, not string",
            "interface conversion: interface {} is nil, not string",
        ),
        (
            "interface conversion: interface {} is *main.T, not main.U",
            "interface conversion: interface {} is *T, not U",
        ),
        (
            "interface conversion: main.T is not main.I: missing method M",
            "interface conversion: T is not I: missing method M",
        ),
        ("runtime error: hash of unhashable type []int", "hash of unhashable type []int"),
        ("runtime error: hash of unhashable type func(...int)", "hash of unhashable type"),  # a `.` is left
        ("value method main.T.M called using nil *T pointer", "value method called using nil pointer"),
        (ORDER, None),
        (MY_ERR, None),
        ("runtime error: order 42 not found", None),  # no runtime text: the program's own
        ("handler: runtime error: index out of range [1] with length 1", None),  # wrapped by the program
        ("concurrent map writes", None),  # a `fatal error`'s: never a panic's kind
        ("", None),
    ],
)
def test_a_runtime_errors_kind_is_read_from_its_text(value: str, kind: str | None) -> None:
    assert runtime_error_kind(value) == kind


def test_a_runtime_error_is_typed_by_its_kind_and_shown_as_a_panic() -> None:
    assert raised(checkout(INDEX))[:2] == ("panic (index out of range)", INDEX)
    assert raised(checkout(ORDER))[:2] == (PROGRAM_PANIC, ORDER)


@pytest.mark.parametrize("suffix", [" [recovered]", " [recovered, repanicked]"])
def test_a_recovered_panic_is_read_as_the_panic_it_was(suffix: str) -> None:
    """A panic recovered and raised again prints ` [recovered]` after its value, since Go 1.25
    ` [recovered, repanicked]` (runtime/panic.go, `printpanics`): its kind and value are the panic's."""
    assert raised(checkout(INDEX, suffix)) == raised(checkout(INDEX))
    nested = checkout(INDEX, " [recovered]").replace("\n", f"\n\tpanic: {NIL_MAP}\n", 1)
    assert raised(nested)[:2] == ("panic (index out of range)", INDEX)  # the first panic's
    found = GroupingEngine().assign_all(
        [event(1, INDEX, checkout(INDEX)), event(2, INDEX, checkout(INDEX, suffix))]
    )
    assert found[0].signature_id == found[1].signature_id


@pytest.mark.parametrize(
    "value", ["concurrent map writes", "all goroutines are asleep - deadlock!", "index out of range"]
)
def test_a_fatal_error_is_the_runtimes_throw_and_typed_as_before(value: str) -> None:
    text = checkout(ORDER).replace(f"panic: {ORDER}", f"fatal error: {value}")
    trace = parse_stacktrace(text)
    assert trace is not None and trace.exceptions[0].type == "fatal error"
    assert as_read_before(trace) is None  # read as releases before read it
    throw, panic = ids(GroupingEngine().assign_all([event(1, value, text), event(2, ORDER, checkout(ORDER))]))
    assert throw != panic


def test_only_the_panicking_goroutine_counts() -> None:
    """A dump prints every goroutine (GOTRACEBACK=all); the first one printed panicked."""
    waiting = (
        "\ngoroutine 1 [chan receive, 5 minutes]:\n"
        "main.main()\n"
        "\t/app/cmd/shop/main.go:40 +0x1d\n"
        "\ngoroutine {n} [select]:\n"
        "github.com/acme/shop/internal/queue.(*Consumer).poll(0xc000200000)\n"
        "\t/app/internal/queue/consumer.go:{line} +0x11b\n"
    )
    one = checkout(INDEX) + waiting.format(n=9, line=71)
    other = checkout(NIL_MAP) + waiting.format(n=12, line=88)
    third = checkout("runtime error: index out of range [0] with length 0") + waiting.format(n=3, line=88)
    trace = parse_stacktrace(one)
    assert trace is not None and [e.type for e in trace.exceptions] == [
        "panic (index out of range)",
        "goroutine",
        "goroutine",
    ]
    found = ids(
        GroupingEngine().assign_all([event(n, "", text) for n, text in enumerate((one, other, third))])
    )
    assert found[0] == found[2] != found[1]


def test_a_panic_logged_by_net_http_after_a_prefix_is_read_with_its_line() -> None:
    """net/http's server logs a handler's panic as `http: panic serving <address>: <value>` above its stack
    (net/http/server.go, `conn.serve`), after the logger's date: the value is the panic's, the address and
    the date are no part of it."""
    assert raised(served(INDEX))[:2] == ("panic (index out of range)", INDEX)
    assert raised(served(ORDER, "[::1]:40112", "2025/01/02 03:04:05.123456"))[:2] == (PROGRAM_PANIC, ORDER)
    logged = logged_exception(served(INDEX), {})
    assert logged is not None and (logged.error_type, logged.message, logged.source) == (
        "panic (index out of range)",
        INDEX,
        LOG_BODY,
    )
    texts = [
        served(INDEX),
        served(
            "runtime error: index out of range [9] with length 2", "10.0.0.7:61000", "2024/05/02 08:00:01"
        ),
        served(NIL_MAP, "10.0.0.8:5000"),
    ]
    found = ids(GroupingEngine().assign_all([event(n, "", text) for n, text in enumerate(texts)]))
    assert found[0] == found[1] != found[2]


def test_the_runtimes_own_panic_line_wins_over_a_logged_net_http_line_before_it() -> None:
    served = "2024/05/01 12:00:00 http: panic serving 10.0.0.1:5123: boom\n"
    dump = (
        "panic: runtime error: index out of range [3] with length 3\n\n"
        "goroutine 7 [running]:\nmain.handle()\n\t/src/main.go:12 +0x1d\n"
    )
    with_line, alone = parse_stacktrace(served + dump), parse_stacktrace(dump)
    assert with_line is not None and alone is not None
    assert with_line.exceptions[0].type == alone.exceptions[0].type == "panic (index out of range)"


@pytest.mark.parametrize("suffix", ["(order 17)", "(order 4242)"])
def test_an_interface_conversions_kind_reads_numbers_after_its_types_alike(suffix: str) -> None:
    dump = (
        f"panic: interface conversion: interface {{}} is nil, not string {suffix}\n\n"
        "goroutine 7 [running]:\nmain.handle()\n\t/src/main.go:12 +0x1d\n"
    )
    parsed = parse_stacktrace(dump)
    assert parsed is not None
    kind = "interface conversion: interface {} is nil, not string (order 0)"
    assert parsed.exceptions[0].type == f"panic ({kind})"


def test_a_program_text_after_interface_conversion_is_no_kind_of_types() -> None:
    dump = (
        "panic: interface conversion: Authorization rejected\n\n"
        "goroutine 7 [running]:\nmain.handle()\n\t/src/main.go:12 +0x1d\n"
    )
    parsed = parse_stacktrace(dump)
    assert parsed is not None and parsed.exceptions[0].type == "panic (value)"
