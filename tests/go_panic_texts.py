"""Go panics as the runtime prints them, for the tests of how they are grouped (`go.py`, `go_panics.py`),
and the signatures the release before this reading made of some of them (`FIXTURE`, made with its code)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from known_states import KnownStates

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import Assignment, ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
#: the states the release before made of `loader("0x2a")`, `checkout(INDEX)` and `served(INDEX)`
FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "go_panic_signatures_before.json").read_text())
LOADER_MESSAGE = "config key missing"
INDEX = "runtime error: index out of range [5] with length 3"
NIL_POINTER = "runtime error: invalid memory address or nil pointer dereference"
NIL_MAP = "assignment to entry in nil map"
SLICE_CAP = "runtime error: slice bounds out of range [:5] with capacity 3"
SLICE_ORDER = "runtime error: slice bounds out of range [5:3]"
TO_INT = "interface conversion: interface {} is string, not int"
FLOAT_TO_INT = "interface conversion: interface {} is float64, not int"
ORDER = "order 42 not found"
MY_ERR = "main.MyErr{Code:3}"
#: one text of every kind `checkout` is built with, the program's own values last
KINDS = [INDEX, NIL_POINTER, NIL_MAP, SLICE_CAP, TO_INT, ORDER]


def loader(argument: str, goroutine: int = 1) -> str:
    return (
        f"panic: {LOADER_MESSAGE}\n\n"
        f"goroutine {goroutine} [running]:\n"
        f"main.mustLoad({argument})\n"
        "\t/app/cmd/shop/config.go:19 +0x2c\n"
        "main.main()\n"
        "\t/app/cmd/shop/main.go:12 +0x25\n"
    )


def checkout(message: str, suffix: str = "") -> str:
    """A panic in `Checkout`; a nil pointer's is printed with the signal that raised it."""
    signal = (
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x6a1b2c]\n"
        if "nil pointer" in message
        else ""
    )
    return (
        f"panic: {message}{suffix}\n{signal}\n"
        "goroutine 7 [running]:\n"
        "github.com/acme/shop/internal/cart.(*Cart).Checkout(0xc000123456, {0xc000124000, 0x3, 0x4})\n"
        "\t/app/internal/cart/cart.go:97 +0x2a5\n"
        "github.com/acme/shop/internal/api.(*Handler).Pay(0xc0001a6000, {0x7f1e40, 0xc0001c2000})\n"
        "\t/app/internal/api/pay.go:31 +0x11b\n"
        "created by net/http.(*Server).Serve in goroutine 1\n"
        "\t/usr/local/go/src/net/http/server.go:3086 +0x5cb\n"
    )


def served(message: str, client: str = "10.0.0.1:5123", at: str = "2024/05/01 12:00:00") -> str:
    """A handler's panic net/http recovered, as its server logs it (net/http/server.go, `conn.serve`)."""
    return (
        f"{at} http: panic serving {client}: {message}\n"
        "goroutine 18 [running]:\n"
        "net/http.(*conn).serve.func1()\n"
        "\t/usr/local/go/src/net/http/server.go:1947 +0xbe\n"
        "panic({0x6b8a40?, 0xc000016180?})\n"
        "\t/usr/local/go/src/runtime/panic.go:785 +0x132\n"
        "github.com/acme/shop/internal/api.(*Handler).Refund(0xc0001a6000, {0x7a1b20, 0xc0001b6000}, "
        "0xc0001c4000)\n"
        "\t/app/internal/api/refund.go:44 +0x1d\n"
        "net/http.HandlerFunc.ServeHTTP(0x0?, {0x7a1b20?, 0xc0001b6000?}, 0x0?)\n"
        "\t/usr/local/go/src/net/http/server.go:2220 +0x29\n"
    )


def event(n: int, message: str, stacktrace: str) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="panic",
        message=message,
        stacktrace=stacktrace,
    )


def raised(text: str) -> tuple[str, str, list[str | None]]:
    trace = parse_stacktrace(text)
    assert trace is not None
    first = trace.exceptions[0]
    return first.type, first.value, [frame.function for frame in first.frames]


def functions(text: str) -> list[str | None]:
    return raised(text)[2]


def known(*names: str, how: str = "looked up") -> GroupingEngine:
    """An engine over a database that holds the signatures the release before made (`FIXTURE`)."""
    states = [SignatureState.model_validate(FIXTURE[name]) for name in names]
    return GroupingEngine(lookup=KnownStates(states)) if how == "looked up" else GroupingEngine(known=states)


def ids(found: list[Assignment]) -> list[str]:
    return [a.signature_id for a in found]


def assigned(*messages: str, engine: GroupingEngine | None = None) -> list[Assignment]:
    engine = engine if engine is not None else GroupingEngine()
    return engine.assign_all([event(n, m, checkout(m)) for n, m in enumerate(messages)])
