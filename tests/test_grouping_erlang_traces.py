"""Erlang's own stack traces: a `{Reason, Stacktrace}` term as `~p` prints it (a gen_server's reason for
termination, OpenTelemetry's Erlang SDK before OTP 24) and `erl_error:format_exception/3`'s lines (the SDK on
OTP 24 and later). Read to their frames, named as Elixir's trace names them; OTP's and Elixir's own modules
are not the app's; a line number is no part of a signature, a function is; and a signature an earlier release
made from the message (it read no trace there) keeps receiving them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import KnownStates

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _term(function: str = "total", line: int = 12) -> str:
    """A gen_server's reason for termination: the reason, then the stack, `~p` breaking it a frame a line."""
    return (
        f'{{badarith,[{{shop_cart,{function},1,[{{file,"src/shop_cart.erl"}},{{line,{line}}}]}},\n'
        "           {shop_checkout,'-run/2-fun-0-',2,[{file,\"src/shop_checkout.erl\"},{line,20}]},\n"
        '           {lists,map,2,[{file,"lists.erl"},{line,1559}]},\n'
        "           {gen_server,try_handle_call,4,\n"
        '                       [{file,"gen_server.erl"},{line,1131}]}]}'
    )


def _printed(function: str = "total", line: int = 12) -> str:
    """The same error as `erl_error:format_exception(error, badarith, Stack)` prints it."""
    return (
        "exception error: an error occurred when evaluating an arithmetic expression\n"
        f"  in function  shop_cart:{function}/1 (src/shop_cart.erl:{line})\n"
        "  in call from shop_checkout:'-run/2-fun-0-'/2 (src/shop_checkout.erl:20)\n"
        "  in call from lists:map/2 (lists.erl:1559)\n"
        "  in call from gen_server:try_handle_call/4 (gen_server.erl:1131)"
    )


def _names(text: str) -> list[tuple[str | None, str | None, int | None]]:
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "elixir"
    return [(f.module, f.function, f.lineno) for f in trace.exceptions[0].frames]


READ = [
    ("shop_cart", "total/1", 12),
    ("shop_checkout", "run/2 (fn)", 20),
    ("lists", "map/2", 1559),
    ("gen_server", "try_handle_call/4", 1131),
]


@pytest.mark.parametrize("text", [_term(), _printed()])
def test_erlangs_trace_is_read_to_its_frames(text: str) -> None:
    assert _names(text) == READ


def test_the_terms_reason_is_its_type() -> None:
    trace = parse_stacktrace(_term())
    assert trace is not None and (trace.exceptions[0].type, trace.exceptions[0].value) == ("badarith", "")
    matched = parse_stacktrace(
        "** Reason for termination ==\n"
        '** {{badmatch,{error,enoent}},[{shop_files,read,1,[{file,"src/shop_files.erl"},{line,8}]}]}'
    )
    assert matched is not None
    assert (matched.exceptions[0].type, matched.exceptions[0].value) == ("badmatch", "{error,enoent}")


@pytest.mark.parametrize(
    ("text", "read"),
    [
        # before OTP 24, `erl_error`'s predecessor wrote `(file, line N)`; a BIF is printed without its module
        (
            "exception error: bad argument\n  in function  element/2\n"
            "     called as element(5,{a,b})\n  in call from shop_cart:total/1 (src/shop_cart.erl, line 12)",
            [("erlang", "element/2", None), ("shop_cart", "total/1", 12)],
        ),
        # a `function_clause`'s first frame holds the call's arguments; an Elixir module its `Elixir.` prefix
        (
            "{function_clause,[{'Elixir.Shop.Cart',total,[nil,1],[{file,\"lib/shop/cart.ex\"},{line,3}]},"
            "{'Elixir.Enum',map,2,[{file,\"lib/enum.ex\"},{line,1700}]}]}",
            [("Shop.Cart", "total/2", 3), ("Enum", "map/2", 1700)],
        ),
    ],
)
def test_erlangs_other_frames_are_read_as_elixirs(text: str, read: list[tuple[str, str, int | None]]) -> None:
    assert _names(text) == read


@pytest.mark.parametrize("text", [_term(), _printed()])
def test_otps_and_elixirs_modules_are_not_the_apps(text: str) -> None:
    trace = parse_stacktrace(text)
    assert trace is not None
    rules = InAppRules()
    roles = [rules.frame_role(frame, "elixir").role for frame in trace.exceptions[0].frames]
    assert roles == ["app", "app", "library", "library"]


def _event(n: int, stacktrace: str | None) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="error:badarith",
        message="an error occurred when evaluating an arithmetic expression",
        stacktrace=stacktrace,
    )


@pytest.mark.parametrize("form", [_term, _printed])
def test_one_function_is_one_signature_whatever_its_line_and_two_are_two(form: object) -> None:
    assert callable(form)
    placed = GroupingEngine().assign_all(
        [_event(1, form()), _event(2, form(line=19)), _event(3, form(function="tax"))]
    )
    assert placed[0].signature_id == placed[1].signature_id != placed[2].signature_id
    assert "crash site shop_cart:tax/1" in placed[2].explanation


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_erlang_traces(how: str) -> None:
    before = GroupingEngine()
    made = before.assign(_event(0, None))  # (what an unread trace gave: the message alone)
    saved = [before.state(made.signature_id)]
    engine = GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))
    found = engine.assign_all([_event(1, _term()), _event(2, _printed(function="tax"))])
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}
