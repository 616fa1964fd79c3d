"""A Go error carries no stack: the OpenTelemetry Go SDK's `span.RecordError(err, trace.WithStackTrace(true))`
records the stack where it is called, one method's error path for every error it returns. Such a stack says
where an error was reported, not where it arose, so its event is grouped by its type and message: read by its
frames, every error one call site recorded was one problem. A panic recovered by `span.End` is a stack of the
panic, and read as one."""

from __future__ import annotations

from datetime import UTC, datetime

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.grouping.stacktrace.go import RECORDED
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
SDK = "/go/pkg/mod/go.opentelemetry.io/otel/sdk@v1.28.0/trace/span.go"


def _recorded(goroutine: int, pointer: str) -> str:
    """The stack `RecordError` records in `(*Service).Get`'s error path (sdk/trace/span.go)."""
    return (
        f"goroutine {goroutine} [running]:\n"
        "runtime/debug.Stack()\n\t/usr/local/go/src/runtime/debug/stack.go:26 +0x5e\n"
        f"go.opentelemetry.io/otel/sdk/trace.recordStackTrace()\n\t{SDK}:531 +0x25\n"
        f"go.opentelemetry.io/otel/sdk/trace.(*recordingSpan).RecordError(0xc0001a4{pointer}, "
        f"{{0xa1b2c0, 0xc000{pointer}}}, {{0xc0000a8{pointer}, 0x1, 0x1}})\n\t{SDK}:506 +0x3c5\n"
        f"github.com/acme/shop/internal/orders.(*Service).Get(0xc000120{pointer}, 0x{pointer})\n"
        "\t/app/internal/orders/service.go:88 +0x1f2\n"
        f"github.com/acme/shop/internal/api.(*Handler).GetOrder(0xc0001{pointer}, 0xc0004{pointer})\n"
        "\t/app/internal/api/orders.go:57 +0x11b\n"
        "created by net/http.(*Server).Serve in goroutine 1\n"
        "\t/usr/local/go/src/net/http/server.go:3285 +0x4b4\n"
    )


def _panicked(goroutine: int) -> str:
    """The stack `span.End` records when it recovers a panic: the panic and the frame that panicked."""
    return (
        f"goroutine {goroutine} [running]:\n"
        "runtime/debug.Stack()\n\t/usr/local/go/src/runtime/debug/stack.go:26 +0x5e\n"
        f"go.opentelemetry.io/otel/sdk/trace.recordStackTrace()\n\t{SDK}:531 +0x25\n"
        f"go.opentelemetry.io/otel/sdk/trace.(*recordingSpan).End(0xc0001a4000, {{0x0, 0x0, 0x0}})\n"
        f"\t{SDK}:434 +0x6c5\n"
        "panic({0x6b1be0?, 0xc000012345?})\n\t/usr/local/go/src/runtime/panic.go:770 +0x132\n"
        "github.com/acme/shop/internal/orders.(*Service).Total(0xc000120000)\n"
        "\t/app/internal/orders/service.go:120 +0x1d\n"
    )


def _event(number: int, error_type: str, message: str, trace: str) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{number}",
        timestamp=T0,
        service="shop",
        error_type=error_type,
        message=message,
        stacktrace=trace,
    )


def test_different_errors_one_call_site_recorded_are_different_problems() -> None:
    engine = GroupingEngine()
    missing = engine.assign(_event(1, "*errors.errorString", "order 12 not found", _recorded(33, "1a0")))
    refused = engine.assign(
        _event(2, "*net.OpError", "dial tcp 10.0.0.5:5432: connect: connection refused", _recorded(34, "1b0"))
    )
    invalid = engine.assign(_event(3, "*errors.errorString", 'invalid order id "abc"', _recorded(35, "1c0")))
    assert len({missing.signature_id, refused.signature_id, invalid.signature_id}) == 3


def test_occurrences_of_one_recorded_error_are_one_problem() -> None:
    engine = GroupingEngine()
    first = engine.assign(_event(1, "*errors.errorString", "order 12 not found", _recorded(33, "1a0")))
    again = engine.assign(_event(2, "*errors.errorString", "order 977 not found", _recorded(1207, "3f8")))
    assert first.signature_id == again.signature_id


def test_a_recorded_stack_is_noted_and_a_panic_recovered_by_end_is_not() -> None:
    recorded = parse_stacktrace(_recorded(33, "1a0"))
    panicked = parse_stacktrace(_panicked(33))
    assert recorded is not None and RECORDED in recorded.notes
    assert panicked is not None and RECORDED not in panicked.notes


def test_a_panic_recovered_by_end_is_grouped_by_where_it_panicked() -> None:
    engine = GroupingEngine()
    out_of_range = "runtime error: index out of range [{}] with length {}"
    first = engine.assign(_event(1, "runtime.Error", out_of_range.format(5, 3), _panicked(7)))
    again = engine.assign(_event(2, "runtime.Error", out_of_range.format(9, 2), _panicked(8)))
    assert first.signature_id == again.signature_id
    assert "(*Service).Total" in first.explanation
