"""shipping-worker: a Go 1.23 Kafka consumer (OpenTelemetry Go 1.32, slog bridged by otelslog)."""

from __future__ import annotations

import random

from opentelemetry._logs import SeverityNumber
from opentelemetry.trace import SpanKind

from tools.demo.fleet import PRODUCTION, STAGING, instance
from tools.demo.plan import (
    Instance,
    LogPlan,
    Occurrence,
    Scope,
    SpanPlan,
    burst_instant,
    error_status,
    exception_event,
    instant,
    millis,
)
from tools.demo.scenarios.common import Scenario, Traffic, pick
from tools.demo.stacktraces import GoCreatedBy, GoFrame, go_offset, go_panic, go_pointer

SERVICE = "shipping-worker"
MODULE = "github.com/acme/shipping-worker"
QUEUE = Scope(f"{MODULE}/internal/queue")
RECONCILE = Scope(f"{MODULE}/internal/reconcile")
LABELS_LOGGER = Scope(f"{MODULE}/internal/labels")
MAIN_LOGGER = Scope(f"{MODULE}/cmd/shipping-worker")
GOROOT = "/usr/local/go/src"
CARRIER_URLS = (
    "https://api.parcelhub.example/v2/labels",
    "https://labels.swiftship.example/v1/label",
    "https://api.nordpost.example/shipping/v3/labels",
)

#: Source lines per version: 0.15.0 added split-shipment handling to the batcher.
LINES = {
    "0.14.3": {
        "assign": 142,
        "ProcessBatch": 97,
        "Reassign": 121,
        "handle": 88,
        "retryOne": 77,
        "RetryFailed": 52,
    },
    "0.15.0": {
        "assign": 149,
        "ProcessBatch": 99,
        "Reassign": 128,
        "handle": 88,
        "retryOne": 79,
        "RetryFailed": 52,
    },
}


def _frame(function: str, args: str, file: str, line: int, *, inlined: bool = False) -> GoFrame:
    return GoFrame(function, args, file, line, None if inlined else go_offset(function, line))


def _recovery_frames(context: str, panic_value: str) -> list[GoFrame]:
    """What every recovered panic's stack starts with: debug.Stack, the recovery, panic() with
    the panic value's two words (its type, fixed in the binary, and its data)."""
    return [
        _frame("runtime/debug.Stack", "", f"{GOROOT}/runtime/debug/stack.go", 26),
        _frame(f"{MODULE}/internal/telemetry.RecoverSpan", context, "/src/internal/telemetry/recover.go", 34),
        _frame("panic", panic_value, f"{GOROOT}/runtime/panic.go", 785),
    ]


def _context_arg(rng: random.Random) -> str:
    return f"{{0x1b2e4c0, {go_pointer(rng)}}}"


def _consumer_span(rng: random.Random, time_ns: int, shipment: str) -> SpanPlan:
    return SpanPlan(
        "shipments.labels process",
        SpanKind.CONSUMER,
        QUEUE,
        time_ns,
        time_ns + millis(rng, 4, 40),
        attributes={
            "messaging.system": "kafka",
            "messaging.operation.type": "process",
            "messaging.destination.name": "shipments.labels",
            "messaging.destination.partition.id": str(rng.randrange(12)),
            "messaging.kafka.message.key": shipment,
        },
    )


def _shipment_id(rng: random.Random) -> str:
    return f"SHP-2026-{rng.randrange(1_000_000, 9_999_999):07d}"


# --- shipping-batch-index-out-of-range --------------------------------------------------------


def _batch_index_out_of_range(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    lines = LINES[where.version]
    parcels = rng.randrange(1, 6)
    message = f"runtime error: index out of range [{parcels}] with length {parcels}"
    batcher, context = go_pointer(rng), _context_arg(rng)
    parcel_slice = f"{{{go_pointer(rng)}, 0x{parcels:x}, 0x{parcels + rng.randrange(0, 4):x}}}"
    assign = _frame(
        f"{MODULE}/internal/labels.(*Batcher).assign",
        f"{batcher}, {parcel_slice}",
        "/src/internal/labels/batcher.go",
        lines["assign"],
    )
    if rng.random() < 0.7:
        consumer = go_pointer(rng)
        frames = [
            assign,
            _frame(
                f"{MODULE}/internal/labels.(*Batcher).ProcessBatch",
                f"{batcher}, {context}, {parcel_slice}",
                "/src/internal/labels/batcher.go",
                lines["ProcessBatch"],
            ),
            _frame(
                f"{MODULE}/internal/queue.(*Consumer).handle",
                f"{consumer}, {context}, {go_pointer(rng)}",
                "/src/internal/queue/consumer.go",
                lines["handle"],
            ),
            _frame(
                f"{MODULE}/internal/queue.(*Consumer).Run.func1", "", "/src/internal/queue/consumer.go", 61
            ),
        ]
        created_by = GoCreatedBy(
            f"{MODULE}/internal/queue.(*Consumer).Run",
            1,
            "/src/internal/queue/consumer.go",
            59,
            go_offset("Consumer.Run", 59),
        )
    else:
        frames = [
            assign,
            _frame(
                f"{MODULE}/internal/labels.(*Batcher).Reassign",
                "...",
                "/src/internal/labels/batcher.go",
                lines["Reassign"],
            ),
            _frame(
                f"{MODULE}/internal/retry.(*Sweeper).retryOne",
                "...",
                "/src/internal/retry/sweeper.go",
                lines["retryOne"],
                inlined=True,
            ),
            _frame(
                f"{MODULE}/internal/retry.(*Sweeper).RetryFailed",
                f"{go_pointer(rng)}, {context}",
                "/src/internal/retry/sweeper.go",
                lines["RetryFailed"],
            ),
            _frame(
                f"{MODULE}/internal/retry.(*Sweeper).Start.func1", "", "/src/internal/retry/sweeper.go", 38
            ),
        ]
        created_by = GoCreatedBy(
            f"{MODULE}/internal/retry.(*Sweeper).Start",
            1,
            "/src/internal/retry/sweeper.go",
            35,
            go_offset("Sweeper.Start", 35),
        )
    panic_value = f"{{0x15f3a40?, {go_pointer(rng)}?}}"  # a runtime.boundsError on the heap
    stack = go_panic(
        message, rng.randrange(40, 400), [*_recovery_frames(context, panic_value), *frames], created_by
    )
    span = _consumer_span(rng, time_ns, _shipment_id(rng))
    span.events.append(
        exception_event(span.end_ns - millis(rng, 0.1, 0.5), "runtime.boundsError", message, stack)
    )
    span.status = error_status(f"panic: {message}")
    span.carries_error = True
    return Occurrence(time_ns, where, root=span)


# --- shipping-reconcile-nil-map ---------------------------------------------------------------


def _reconcile_nil_map(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(
        rng, SERVICE, time_ns, environment=PRODUCTION, host="shipping-worker-reconcile-29365080-7xk2m"
    )
    message = "assignment to entry in nil map"
    context = _context_arg(rng)
    reconciler = go_pointer(rng)
    frames = [
        _frame(
            f"{MODULE}/internal/config.(*CarrierTable).Register",
            "...",
            "/src/internal/config/carriers.go",
            58,
            inlined=True,
        ),
        _frame(
            f"{MODULE}/internal/reconcile.(*Reconciler).loadCarriers",
            f"{reconciler}, {{{go_pointer(rng)}, 0x3, 0x4}}",
            "/src/internal/reconcile/reconciler.go",
            44,
        ),
        _frame(
            f"{MODULE}/internal/reconcile.(*Reconciler).Run",
            f"{reconciler}, {context}",
            "/src/internal/reconcile/reconciler.go",
            29,
        ),
        _frame(
            "main.runReconcile",
            f"{context}, {{{go_pointer(rng)}, 0x1, 0x1}}",
            "/src/cmd/shipping-worker/reconcile.go",
            31,
        ),
        _frame("main.main", "", "/src/cmd/shipping-worker/main.go", 27),
    ]
    panic_value = "{0x14e2b60?, 0x1b0a7d0?}"  # a runtime.plainError held in static data
    stack = go_panic(message, 1, [*_recovery_frames(context, panic_value), *frames])
    span = SpanPlan("reconcile", SpanKind.INTERNAL, RECONCILE, time_ns, time_ns + millis(rng, 30, 90))
    span.events.append(
        exception_event(span.end_ns - millis(rng, 0.1, 0.5), "runtime.plainError", message, stack)
    )
    span.status = error_status(f"panic: {message}")
    span.carries_error = True
    return Occurrence(time_ns, where, root=span)


# --- shipping-label-timeout -------------------------------------------------------------------


def _label_timeout(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    shipment = _shipment_id(rng)
    url = pick(rng, CARRIER_URLS)
    attempts = pick(rng, (3, 3, 3, 2))
    body = (
        f'label request for shipment {shipment} failed after {attempts} attempts: Post "{url}": '
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    )
    log = LogPlan(
        time_ns, SeverityNumber.ERROR, body, LABELS_LOGGER, {"shipment.id": shipment, "attempts": attempts}
    )
    return Occurrence(time_ns, where, logs=[log])


def _carrier_outage(rng: random.Random) -> int:
    # Most timeouts come from one carrier incident around 11:30; the rest is the daily trickle.
    return burst_instant(rng, 1.5 * 3600, 600) if rng.random() < 0.7 else instant(rng)


# --- shipping-routing-table-missing-fatal -----------------------------------------------------


def _routing_table_fatal(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns, environment=STAGING)
    path = "/etc/shipping/routing/zones.yaml"
    log = LogPlan(
        time_ns,
        SeverityNumber.FATAL,
        f"cannot start: load routing table: open {path}: no such file or directory",
        MAIN_LOGGER,
        {"config.path": path},
        severity_text="FATAL",
    )
    return Occurrence(time_ns, where, logs=[log])


SCENARIOS = [
    Scenario("shipping-batch-index-out-of-range", instant, _batch_index_out_of_range),
    Scenario(
        "shipping-reconcile-nil-map", lambda rng: instant(rng, 4 * 3600, 4 * 3600 + 60), _reconcile_nil_map
    ),
    Scenario("shipping-label-timeout", _carrier_outage, _label_timeout),
    Scenario(
        "shipping-routing-table-missing-fatal", lambda rng: instant(rng, 300, 900), _routing_table_fatal
    ),
]


# --- ordinary traffic -------------------------------------------------------------------------


def _label_created(rng: random.Random, time_ns: int) -> Occurrence:
    where: Instance = instance(rng, SERVICE, time_ns)
    shipment = _shipment_id(rng)
    span = _consumer_span(rng, time_ns, shipment)
    span.logs.append(
        LogPlan(
            span.end_ns - millis(rng, 0.2, 1),
            SeverityNumber.INFO,
            "label created",
            LABELS_LOGGER,
            {"shipment.id": shipment, "carrier": pick(rng, ("parcelhub", "swiftship", "nordpost"))},
        )
    )
    return Occurrence(time_ns, where, root=span)


def _label_retry_warning(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    body = (
        f"label request for shipment {_shipment_id(rng)} attempt 1 failed, retrying in "
        f"{pick(rng, (250, 500, 1000))}ms: context deadline exceeded"
    )
    return Occurrence(time_ns, where, logs=[LogPlan(time_ns, SeverityNumber.WARN, body, LABELS_LOGGER)])


TRAFFIC = [
    Traffic("shipping labels created", 30, _label_created),
    Traffic("shipping retry warnings", 60, _label_retry_warning, _carrier_outage),
]
