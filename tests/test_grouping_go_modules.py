"""A Go module the app depends on is a library's code, whether the binary was built with `-trimpath` (its
frames' paths name `module@version`: `go.opentelemetry.io/otel/sdk@v1.24.0/trace/span.go`) or without (the
module cache's `/pkg/mod/`). OpenTelemetry's Go SDK records a stack trace (`span.RecordError(err,
trace.WithStackTrace(true))`) from inside itself, so its own frames come first: read as the app's, every
error a service recorded so had one crash site, the SDK's `recordStackTrace`, and was one signature."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from known_states import KnownStates

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.inapp import GO_MODULE, InAppRules
from rounds_bot.grouping.stacktrace import Frame
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
TRIMPATH = "go.opentelemetry.io/otel/sdk@v1.24.0/trace/span.go"
MODULE_CACHE = "/root/go/pkg/mod/go.opentelemetry.io/otel/sdk@v1.24.0/trace/span.go"
NIL = "runtime error: invalid memory address or nil pointer dereference"
#: the signatures the previous release made from `_panic_under_a_library_frame()` and from
#: `_recorded("(*Carts).Load", 90)`, as it stored them (made with its code): the second one every error the
#: SDK recorded so joined
BEFORE = json.loads((Path(__file__).parent / "fixtures" / "go_module_signatures_before.json").read_text())


def _recorded(function: str, line: int, sdk: str = TRIMPATH) -> str:
    """`runtime.Stack` as the SDK's `recordStackTrace` takes it, under the app's call to `RecordError`."""
    return (
        "goroutine 23 [running]:\n"
        "go.opentelemetry.io/otel/sdk/trace.recordStackTrace()\n"
        f"\t{sdk}:496 +0x5c\n"
        "go.opentelemetry.io/otel/sdk/trace.(*recordingSpan).RecordError(0xc0001c2000, {0x7f2f80, 0xc0001})\n"
        f"\t{sdk}:447 +0x1c8\n"
        f"example.com/shop/cart.{function}(0xc000010000)\n"
        f"\texample.com/shop/cart/cart.go:{line} +0x1a4\n"
        "github.com/gin-gonic/gin.(*Context).Next(...)\n"
        "\tgithub.com/gin-gonic/gin@v1.9.1/context.go:174\n"
    )


def _panic_under_a_library_frame(value: str = NIL) -> str:
    return (
        f"panic: {value} [recovered]\n"
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x5a1b2c]\n\n"
        "goroutine 7 [running]:\n"
        "github.com/gin-gonic/gin/render.JSON.Render(...)\n"
        "\tgithub.com/gin-gonic/gin@v1.9.1/render/json.go:58 +0x4c\n"
        "example.com/shop/cart.(*Cart).Items(0xc000010000)\n"
        "\texample.com/shop/cart/cart.go:77 +0x1a4\n"
        "github.com/gin-gonic/gin.(*Context).Next(...)\n"
        "\tgithub.com/gin-gonic/gin@v1.9.1/context.go:174\n"
        "net/http.serverHandler.ServeHTTP({0xc000}, {0x9a5f20, 0xc0001f8000}, 0xc000224000)\n"
        "\tnet/http/server.go:2938 +0x8e\n"
    )


def _event(n: int, stacktrace: str, message: str, error_type: str = "*errors.errorString") -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="cart",
        error_type=error_type,
        message=message,
        stacktrace=stacktrace,
    )


@pytest.mark.parametrize(
    ("path", "module", "reason"),
    [
        ("github.com/gin-gonic/gin@v1.9.1/context.go", "github.com/gin-gonic/gin", GO_MODULE),
        ("github.com/jackc/pgx/v5@v5.5.0-rc.1/conn.go", "github.com/jackc/pgx/v5", GO_MODULE),
        ("gopkg.in/yaml.v3@v3.0.1/decode.go", "gopkg.in/yaml.v3", GO_MODULE),
        ("example.com/shop/cart/cart.go", "example.com/shop/cart", "application code"),
        ("example.com/shop/v2/cart/cart.go", "example.com/shop/v2/cart", "application code"),
        ("/home/dev/shop/cart/cart.go", "example.com/shop/cart", "application code"),
    ],
)
def test_a_frame_of_a_module_named_with_its_version_is_a_librarys(
    path: str, module: str, reason: str
) -> None:
    role = InAppRules().frame_role(Frame(function="F", module=module, filename=path, lineno=1), "go")
    assert role.reason == reason


def test_errors_the_go_sdk_recorded_with_their_stack_are_told_apart_by_the_app_frame_that_recorded_them() -> (
    None
):
    placed = GroupingEngine().assign_all(
        [
            _event(1, _recorded("(*Carts).Load", 90), "sql: no rows in result set"),
            _event(
                2, _recorded("(*Payments).Charge", 120), "charge order 17: card declined", "*fmt.wrapError"
            ),
            _event(3, _recorded("(*Carts).Load", 90), "sql: no rows in result set"),
        ]
    )
    assert placed[0].signature_id == placed[2].signature_id != placed[1].signature_id


def test_a_trimpath_build_and_a_module_cache_build_give_the_same_signature() -> None:
    stacks = [_recorded("(*Carts).Load", 90, sdk) for sdk in (TRIMPATH, MODULE_CACHE)]
    placed = [GroupingEngine().assign(_event(1, stack, "sql: no rows in result set")) for stack in stacks]
    assert placed[0].signature_id == placed[1].signature_id


def _known_before(name: str) -> tuple[KnownStates, str]:
    state = SignatureState.model_validate(BEFORE[name])
    return KnownStates([state]), state.signature_id


def test_a_signature_the_previous_release_made_from_a_panic_keeps_receiving_it() -> None:
    """Its crash site was the library frame on top (`render.JSON.Render`): it is found by its hashes. That
    release hashed no panic's value, so its signature is the one of every panic of these frames: a program's
    own and a runtime error of any kind (now typed apart, `go_panics`) keep finding it."""
    known, made = _known_before("panic")
    engine = GroupingEngine(lookup=known)
    own = "cart 17 has no items"
    found = engine.assign(_event(1, _panic_under_a_library_frame(own), own, "panic"))
    assert found.signature_id == made and found.tier == "fingerprint"
    runtime_error = engine.assign(_event(2, _panic_under_a_library_frame(), NIL, "panic"))
    assert (runtime_error.signature_id, runtime_error.tier) == (made, "fingerprint")


def test_the_signature_every_recorded_error_joined_keeps_the_first_and_lets_the_others_go() -> None:
    known, made = _known_before("recorded")
    engine = GroupingEngine(lookup=known)
    again = engine.assign(_event(1, _recorded("(*Carts).Load", 90), "sql: no rows in result set"))
    other = engine.assign(
        _event(2, _recorded("(*Payments).Charge", 120), "charge order 17: card declined", "*fmt.wrapError")
    )
    assert again.signature_id == made != other.signature_id
    assert other.tier == "new"
