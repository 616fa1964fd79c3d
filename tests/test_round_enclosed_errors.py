"""One error recorded by every span it escapes is one occurrence, counted once, in the signature of the error
as it left the outermost span: Go's error wrapped at each layer (`fmt.Errorf("...: %w", err)` and
`span.RecordError` per layer), Python's exception recorded by each `start_as_current_span` it escapes, an
exception event and a log record of it on one span. Errors of other services or other traces, and an error
repeated by a sibling span (a retry), are occurrences of their own."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from enclosed_telemetry import NO_ROWS, T0
from enclosed_telemetry import go_request as _go_request
from enclosed_telemetry import line as _line
from enclosed_telemetry import logged_line as _logged_line
from enclosed_telemetry import python_request as _python_request
from enclosed_telemetry import server_span as _server_span
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from rounds_bot.models import ErrorEvent
from rounds_bot.round import propagated
from rounds_bot.round.propagated import enclosing_records
from rounds_bot.round.report import RoundReport
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.spill import EventSpill
from rounds_bot.store import Store
from rounds_bot.tracker.dryrun import DryRunTracker
from tools.demo.generate import otlp_json_line


def _event(n: int, message: str, **fields: object) -> ErrorEvent:
    values: dict[str, object] = {
        "event_id": f"e{n}",
        "timestamp": T0 + timedelta(milliseconds=n),
        "service": "cart",
        "error_type": "*fmt.wrapError",
        "message": message,
        "trace_id": "a" * 32,
        "span_id": f"{n:016x}",
    }
    values.update(fields)
    return ErrorEvent.model_validate(values)


def _go_layers(trace: str = "a" * 32, cart: int = 17, first: int = 1) -> list[ErrorEvent]:
    """A repository's span, its service's and its handler's, each recording the error as it was returned."""
    messages = [NO_ROWS, f"load cart {cart}: {NO_ROWS}", f"handle checkout: load cart {cart}: {NO_ROWS}"]
    return [
        _event(
            first + depth,
            message,
            trace_id=trace,
            error_type="*errors.errorString" if depth == 0 else "*fmt.wrapError",
            span_id=f"{first + depth:016x}",
            parent_span_id=f"{first + depth + 1:016x}",
        )
        for depth, message in enumerate(messages)
    ]


def _outer_of(events: Sequence[ErrorEvent]) -> dict[int, int]:
    """{index enclosed: its outermost encloser's index}."""
    return enclosing_records(events).pairs()


def test_an_error_wrapped_at_each_layer_is_counted_as_the_outermost() -> None:
    assert _outer_of(_go_layers()) == {0: 2, 1: 2}


def test_the_events_enclosed_are_the_same_when_the_poll_is_on_disk() -> None:
    logged = _event(9, "request failed", kind="log", error_type="", attributes={"err": "timeout"})
    events = [*_go_layers(), *_go_layers("b" * 32, 18, first=4), logged, _event(10, "timeout")]
    on_disk = EventSpill(events, in_memory=2, chunk=3)
    assert _outer_of(on_disk) == _outer_of(events)
    assert set(_outer_of(events)) == {0, 1, 3, 4, 6}


def test_an_exception_recorded_again_by_its_parent_span_is_one_occurrence() -> None:
    """Python's `start_as_current_span` records the exception on each span it escapes; the traceback grows."""
    inner = _event(1, "'cart 17'", error_type="KeyError", stacktrace="short", parent_span_id=f"{2:016x}")
    outer = _event(2, "'cart 17'", error_type="KeyError", stacktrace="longer", parent_span_id=f"{3:016x}")
    root = _event(3, "'cart 17'", error_type="KeyError", stacktrace="longest")
    assert _outer_of([root, outer, inner]) == {1: 0, 2: 0}  # (the order read does not matter)


def test_an_exception_and_its_log_record_on_one_span_are_one_occurrence_counted_as_the_spans() -> None:
    logged = _event(1, "cart is empty", error_type="ValueError", span_id="f" * 16, kind="log")
    recorded = _event(2, "cart is empty", error_type="ValueError", span_id="f" * 16, stacktrace="Traceback")
    assert _outer_of([recorded, logged]) == {1: 0}
    assert _outer_of([logged, recorded]) == {0: 1}


def test_two_records_of_a_spans_own_are_two_occurrences() -> None:
    """A span that records each item's failure of a loop, or a retry within it."""
    items = [_event(n, "price missing", error_type="ValueError", span_id="f" * 16) for n in (1, 2)]
    assert _outer_of(items) == {}
    logs = [_event(n, "price missing", error_type="ValueError", span_id="f" * 16, kind="log") for n in (1, 2)]
    assert _outer_of(logs) == {}


def test_a_frameworks_wrapper_on_the_server_span_encloses_the_exception_it_wraps() -> None:
    """Spring's DispatcherServlet wraps a controller's exception: the Java agent records the bare exception
    on the controller's span and `ServletException: Request processing failed: <the cause>` on the server
    span, whose message ends with the cause's."""
    npe = 'Cannot invoke "com.shop.Cart.items()" because "cart" is null'
    bare = _event(1, npe, error_type="java.lang.NullPointerException", stacktrace="at com.shop.CartService")
    wrapper = _event(
        2,
        f"Request processing failed: java.lang.NullPointerException: {npe}",
        error_type="jakarta.servlet.ServletException",
        stacktrace="at org.springframework.web.servlet.FrameworkServlet",
    )
    assert _outer_of([bare, wrapper]) == {0: 1}


@pytest.mark.parametrize(
    "other",
    [
        {"service": "gateway"},  # a caller's error over its callee's: a cascade, each service's own
        {"trace_id": "b" * 32},
        {"trace_id": None},
    ],
)
def test_errors_of_other_services_or_traces_are_never_folded(other: dict[str, object]) -> None:
    inner = _event(1, NO_ROWS, error_type="*errors.errorString")
    outer = _event(2, f"load cart 17: {NO_ROWS}", **other)
    assert _outer_of([inner, outer]) == {}


def test_an_apps_exception_over_the_one_a_librarys_span_recorded_encloses_it() -> None:
    """The Java agent's JDBC span records the `SQLException`; the service wraps it in its own exception,
    which the controller's span records, its trace naming the first as its cause."""
    sql = _event(1, "no rows for cart 17", error_type="java.sql.SQLException", stacktrace="at org.postgresql")
    own = _event(
        2,
        "load failed",
        error_type="com.shop.CartException",
        stacktrace=(
            "com.shop.CartException: load failed\n\tat com.shop.CartService.load(CartService.java:9)\n"
            "Caused by: java.sql.SQLException: no rows for cart 17\n"
            "\tat org.postgresql.Driver.run(Driver.java:1)"
        ),
    )
    assert _outer_of([sql, own]) == {0: 1}


def test_a_trace_of_more_errors_than_are_searched_is_left_to_the_other_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sql = _event(1, "no rows", error_type="java.sql.SQLException")
    own = _event(
        2, "load failed", error_type="CartException", stacktrace="Caused by: java.sql.SQLException: no rows"
    )
    assert set(_outer_of([sql, own])) == {0}
    monkeypatch.setattr(propagated, "MAX_CAUSE_RECORDS", 1)
    assert _outer_of([sql, own]) == {}


def test_a_python_chain_names_its_cause_by_its_qualified_type() -> None:
    violation = 'duplicate key value violates unique constraint "orders_pkey"\nDETAIL:  Key (id)=(7) exists.'
    inner = _event(1, violation, error_type="UniqueViolation", stacktrace="Traceback ...")
    outer = _event(
        2,
        "order 7 exists",
        error_type="OrderExists",
        stacktrace=(
            'Traceback (most recent call last):\n  File "/srv/shop/orders.py", line 4, in save\n'
            f"psycopg.errors.UniqueViolation: {violation}\n\n"
            "The above exception was the direct cause of the following exception:\n\n"
            'Traceback (most recent call last):\n  File "/srv/shop/views.py", line 9, in create\n'
            "shop.errors.OrderExists: order 7 exists\n"
        ),
    )
    assert _outer_of([inner, outer]) == {0: 1}


def test_a_type_that_only_ends_like_anothers_names_no_cause() -> None:
    inner = _event(1, "'c-1'", error_type="KeyError")
    outer = _event(2, "boom", error_type="Boom", stacktrace="Traceback\nshop.MyKeyError: 'c-1'\nBoom: boom")
    assert _outer_of([inner, outer]) == {}


def test_a_retrys_exception_naming_its_own_error_is_no_cause() -> None:
    """Two attempts on sibling spans, each trace ending with the same `type: message` line."""
    parent = f"{9:016x}"
    tries = [
        _event(
            n, "'c-1'", error_type="KeyError", stacktrace="Traceback\nKeyError: 'c-1'", parent_span_id=parent
        )
        for n in (1, 2)
    ]
    assert _outer_of(tries) == {}


def test_a_log_holding_a_span_records_error_in_an_attribute_is_that_records() -> None:
    """`slog.Error("request failed", "err", err)` in a middleware, beside the spans' records of `err`."""
    layers = _go_layers()
    logged = _event(
        9, "request failed", kind="log", error_type="", attributes={"err": layers[-1].message, "path": "/x"}
    )
    assert _outer_of([*layers, logged]) == {0: 2, 1: 2, 3: 2}


def test_a_log_whose_attribute_holds_no_records_message_is_its_own() -> None:
    logged = _event(9, "request failed", kind="log", error_type="", attributes={"err": "timeout"})
    assert set(_outer_of([*_go_layers(), logged])) == {0, 1}  # the two inner layers only


def test_a_server_status_whose_description_wraps_the_error_is_the_error_itself() -> None:
    """`span.SetStatus(codes.Error, err.Error())` on the server span: its description is the whole error."""
    layers = _go_layers()
    server = _event(
        9, f"checkout: {layers[-1].message}", kind="span_error", span_kind="server", error_type=None
    )
    assert _outer_of([*layers, server]) == {0: 3, 1: 3, 2: 3}


def test_a_client_spans_error_status_is_the_error_the_app_recorded_beside_it() -> None:
    """The HTTP client's span of a call that answered 500 (`GET`), and the exception the app raised of it."""
    call = _event(1, "GET", kind="span_error", span_kind="client", error_type="500", span_id="c" * 16)
    raised = _event(2, "500 Server Error for url: http://payments/charge", error_type="HTTPError")
    server = _event(3, "POST /checkout", kind="span_error", span_kind="server", error_type="500")
    assert _outer_of([call, raised, server]) == {0: 1, 2: 1}
    assert _outer_of([call, server]) == {1: 0}  # the 500 it answered is the failed call's
    assert _outer_of([call]) == {} and _outer_of([server]) == {}


@pytest.mark.parametrize("group", [{"source_group_id": "g1"}, {"count": 40}])
def test_a_backends_group_carrying_a_samples_trace_is_never_folded(group: dict[str, object]) -> None:
    """A group's trace is one sample's (SigNoz's error index): it says nothing of the others' traces."""
    inner = _event(1, NO_ROWS, error_type="*errors.errorString", **group)
    outer = _event(2, f"load cart 17: {NO_ROWS}", **group)
    assert _outer_of([inner, outer]) == {}


def test_a_retry_on_a_sibling_span_is_an_occurrence_of_its_own() -> None:
    parent = f"{9:016x}"
    first = _event(1, "connection refused", error_type="OSError", parent_span_id=parent)
    second = _event(2, "connection refused", error_type="OSError", parent_span_id=parent)
    assert _outer_of([first, second]) == {}


def test_a_message_that_only_ends_like_another_is_not_a_wrap() -> None:
    """The wrap is the other's whole message after `": "`: `refused` does not end `connection refused`."""
    assert _outer_of([_event(1, "refused"), _event(2, "connection refused")]) == {}
    assert _outer_of([_event(1, " "), _event(2, "failed:  ")]) == {}


def test_the_same_record_read_twice_encloses_nothing() -> None:
    event = _event(1, "cart is empty")
    assert _outer_of([event, event]) == {}


def test_spans_given_as_their_own_parents_do_not_loop() -> None:
    one = _event(1, "boom", error_type="E", span_id="1" * 16, parent_span_id="2" * 16)
    two = _event(2, "boom", error_type="E", span_id="2" * 16, parent_span_id="1" * 16)
    assert _outer_of([one, two]) == {1: 0}  # counted once, as the first


_MESSAGES = ["boom", "x: boom", "y: x: boom", "'c-1'", "KeyError: 'c-1'"]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(_MESSAGES),
            st.sampled_from(["KeyError", "E", ""]),
            st.integers(1, 4),
            st.one_of(st.none(), st.integers(1, 4)),
            st.sampled_from(["exception", "log", "span_error"]),
            st.sampled_from([None, "server"]),
            st.sampled_from([None, "Traceback\nKeyError: 'c-1'", "Caused by: E: boom"]),
        ),
        max_size=8,
    )
)
def test_every_record_is_counted_once_whatever_the_trace_holds(records: list[tuple[object, ...]]) -> None:
    """Each record enclosed is counted as a record that is counted itself: none is lost, whatever the
    spans, messages and kinds (cycles of spans given as each other's parents too)."""
    events = [
        _event(
            n,
            str(message),
            error_type=error_type,
            span_id=f"{span:016x}",
            parent_span_id=None if parent is None else f"{parent:016x}",
            kind=kind,
            span_kind=span_kind,
            stacktrace=stacktrace,
            attributes={"err": "boom"} if kind == "log" else {},
        )
        for n, (message, error_type, span, parent, kind, span_kind, stacktrace) in enumerate(records)
    ]
    enclosed = _outer_of(events)
    assert all(outer not in enclosed and outer != index for index, outer in enclosed.items())


# --- a round over OTLP spans ----------------------------------------------------------------------


def _status(span: dict[str, object]) -> str:
    status = span["status"]
    assert isinstance(status, dict)
    return str(status["message"])


class _ReadsEverything:
    """A source that gives every record of its window, counted or not, as SigNoz's does (the grouping step
    finds those counted): a record counted in an earlier round is read again in the overlap."""

    name = "otlp-file"

    def __init__(self, path: Path) -> None:
        self._file = OtlpFileSource(path)

    def poll(self, window: Window, known_group_ids: frozenset[str]) -> PollResult:
        return self._file.poll(window, known_group_ids)


def _round(tmp_path: Path, lines: list[str], store: Store, *, skips_counted: bool = True) -> RoundReport:
    data = tmp_path / "telemetry.jsonl"
    data.write_text("\n".join(lines) + "\n")
    return run_round(
        load_settings(),
        OtlpFileSource(data) if skips_counted else _ReadsEverything(data),
        DryRunTracker(tmp_path / "drafts"),
        store,
        now=T0 + timedelta(hours=1),
        reads_whole_history=True,
    )


def test_a_go_services_layered_errors_make_one_signature_per_failing_query(clean_env, tmp_path: Path) -> None:
    """Two queries failing with the same `sql: no rows`: two problems, told apart by what wraps them; each
    request counted once, whatever number of layers recorded it."""
    lines = [_line("cart", _go_request(n, 100 + n, "load cart")) for n in range(6)]
    lines += [_line("cart", _go_request(n, 200 + n, "load user")) for n in range(6, 10)]
    store = Store.memory()
    report = _round(tmp_path, lines, store)
    assert any(note.startswith("20 records were an error recorded again") for note in report.notes)
    counts = sorted((s.total_count, s.title) for s in store.signatures())
    assert [count for count, _ in counts] == [4, 6]
    assert all("handle request: load" in title for _, title in counts)
    # the next round over the same file counts nothing again: the enclosed records were remembered too
    _round(tmp_path, lines, store)
    assert sorted(s.total_count for s in store.signatures()) == [4, 6]


def test_a_middleware_logging_every_failed_request_makes_no_problem_of_its_own(
    clean_env, tmp_path: Path
) -> None:
    """`slog.Error("request failed", "err", err)` on the handler's span: each log is its request's error."""
    requests = [_go_request(n, 100 + n, "load cart" if n < 6 else "load user") for n in range(10)]
    lines = [_line("cart", spans) for spans in requests]
    lines += [_logged_line("cart", spans[-1], "request failed", err=_status(spans[-1])) for spans in requests]
    store = Store.memory()
    _round(tmp_path, lines, store)
    assert sorted(s.total_count for s in store.signatures()) == [4, 6]
    assert not any("request failed" in s.title for s in store.signatures())


def test_a_server_spans_error_status_beside_the_error_it_answered_makes_no_problem_of_its_own(
    clean_env, tmp_path: Path
) -> None:
    """Every failed request of an endpoint ends its server span in error: counted as the request's error,
    it is not one signature per endpoint beside each of the endpoint's bugs."""
    lines = []
    for n in range(8):
        spans = _go_request(n, 100 + n, "load cart" if n < 5 else "load user")
        root = spans[-1]
        root["parentSpanId"] = f"{900 + n:016x}"
        server = _server_span(str(root["traceId"]), 900 + n, T0 + timedelta(seconds=n), "POST /checkout")
        lines.append(_line("cart", [*spans, server]))
    lines.append(_line("cart", [_server_span(f"{77:032x}", 77, T0, "POST /checkout")]))  # a 500 alone
    store = Store.memory()
    _round(tmp_path, lines, store)
    assert sorted((s.total_count, s.title) for s in store.signatures()) == [
        (1, "POST /checkout"),
        (3, f"handle request: load user 105: {NO_ROWS}"),
        (5, f"handle request: load cart 100: {NO_ROWS}"),
    ]


def test_a_python_exception_recorded_by_two_spans_is_counted_once(clean_env, tmp_path: Path) -> None:
    store = Store.memory()
    _round(tmp_path, [_line("shop", _python_request(n, n)) for n in range(5)], store)
    assert [s.total_count for s in store.signatures()] == [5]


def test_an_encloser_read_again_counts_an_enclosed_record_new_to_the_round(clean_env, tmp_path: Path) -> None:
    """The inner record arrives a round after its encloser, which the source gives again (SigNoz's rows in
    the overlap): counted as its encloser, in that one's signature."""
    store = Store.memory()
    requests = [_go_request(n, 100 + n, "load cart") for n in range(3)]
    _round(tmp_path, [_line("cart", spans[1:]) for spans in requests], store, skips_counted=False)
    assert [s.total_count for s in store.signatures()] == [3]
    _round(tmp_path, [_line("cart", spans) for spans in requests], store, skips_counted=False)
    assert [s.total_count for s in store.signatures()] == [3]
    # and remembered: a third round over the same records counts none of them again
    _round(tmp_path, [_line("cart", spans) for spans in requests], store, skips_counted=False)
    assert [s.total_count for s in store.signatures()] == [3]


# --- the real Python SDK ---------------------------------------------------------------------------


class _PythonShop:
    """A small service instrumented with OpenTelemetry's Python SDK, its records kept in memory, then written
    as the collector's file exporter writes OTLP/JSON: `load` fails with a KeyError inside its own span."""

    def __init__(self) -> None:
        self.resource = Resource.create({"service.name": "shop"})
        self.spans = InMemorySpanExporter()
        self.tracing = TracerProvider(resource=self.resource)
        self.tracing.add_span_processor(SimpleSpanProcessor(self.spans))
        self.tracer = self.tracing.get_tracer("shop")
        self.carts: dict[str, int] = {}

    def load(self, cart_id: str) -> int:
        with self.tracer.start_as_current_span("load"):
            return self.carts[cart_id]

    def round_over(self, tmp_path: Path, logs: InMemoryLogRecordExporter | None = None) -> Store:
        """A round over what the service recorded (its spans, and `logs`), in a fresh store."""
        self.tracing.shutdown()
        encoded = [encode_spans(self.spans.get_finished_spans())]
        if logs is not None:
            encoded.append(encode_logs(logs.get_finished_logs()))
        data = tmp_path / "telemetry.jsonl"
        data.write_text("".join(otlp_json_line(line) + "\n" for line in encoded))
        store = Store.memory()
        now = datetime.now(UTC) + timedelta(minutes=5)
        run_round(load_settings(), OtlpFileSource(data), DryRunTracker(tmp_path / "drafts"), store, now=now)
        return store


def test_the_python_sdks_exception_recorded_by_each_span_it_escapes_is_counted_once(
    clean_env, tmp_path: Path
) -> None:
    """A KeyError escaping three nested `start_as_current_span` blocks (each records it,
    `record_exception=True` by default) in 6 requests, a ValueError escaping two in 3 others."""
    shop = _PythonShop()

    def checkout(cart_id: str) -> int:
        with (
            shop.tracer.start_as_current_span("POST /checkout", kind=SpanKind.SERVER),
            shop.tracer.start_as_current_span("price"),
        ):
            return shop.load(cart_id)

    def refund(order: int) -> None:
        with (
            shop.tracer.start_as_current_span("POST /refund", kind=SpanKind.SERVER),
            shop.tracer.start_as_current_span("refund"),
        ):
            raise ValueError(f"order {order} was never charged")

    for n in range(6):
        with contextlib.suppress(KeyError):
            checkout(f"c-{n}")
    for n in range(3):
        with contextlib.suppress(ValueError):
            refund(n)
    counts = sorted((s.error_type, s.total_count) for s in shop.round_over(tmp_path).signatures())
    assert counts == [("KeyError", 6), ("ValueError", 3)]  # 24 records: 18 and 6


# the SDK's own handler, which most services still install (deprecated for the instrumentation package's)
@pytest.mark.filterwarnings("ignore:`LoggingHandler` in `opentelemetry-sdk` is deprecated:DeprecationWarning")
def test_the_python_sdks_logged_exception_and_its_spans_record_are_one_occurrence(
    clean_env, tmp_path: Path
) -> None:
    """The handler catches the KeyError the inner span recorded and logs it (`logger.exception`) through
    the SDK's `LoggingHandler`, on its own span. The SDK writes the log's `exception.message` as `c-0`
    (the key) and the span's as `'c-0'` (`str` of the KeyError): the log's trace names the span's error."""
    shop, logs = _PythonShop(), InMemoryLogRecordExporter()
    logging_provider = LoggerProvider(resource=shop.resource)
    logging_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    logger = logging.getLogger("shop.checkout")
    logger.addHandler(LoggingHandler(logger_provider=logging_provider))
    logger.propagate = False

    def checkout(cart_id: str) -> None:
        with shop.tracer.start_as_current_span("POST /checkout"):
            try:
                shop.load(cart_id)
            except KeyError:
                logger.exception("checkout failed for %s", cart_id)

    try:
        for n in range(4):
            checkout(f"c-{n}")
    finally:
        logger.handlers.clear()
    logging_provider.shutdown()
    store = shop.round_over(tmp_path, logs)
    assert [(s.error_type, s.total_count) for s in store.signatures()] == [("KeyError", 4)]  # 8 records


# --- the real JavaScript SDK -----------------------------------------------------------------------

NODE_MODULES = Path(__file__).resolve().parent.parent / ".ci" / "node" / "node_modules"


def _node_with_the_sdk() -> str:
    """node, with OpenTelemetry's JavaScript SDK installed where .ci/run installs it; without them the test
    skips, except under CI (CI set), where it fails: CI never skips it silently."""
    node = shutil.which("node")
    if node and (NODE_MODULES / "@opentelemetry" / "sdk-trace-base").is_dir():
        return node
    message = "node and OpenTelemetry's JavaScript SDK are needed: see .ci/run's npm install"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def test_the_node_sdks_error_recorded_by_each_span_it_escapes_is_counted_once(
    clean_env, tmp_path: Path
) -> None:
    """A TypeError thrown in a step three spans deep, and an ECONNREFUSED two deep, in 10 requests each:
    each span records the same Error, with the same stack (`tests/fixtures/otel_node_shop.js`)."""
    data = tmp_path / "telemetry.jsonl"
    script = Path(__file__).parent / "fixtures" / "otel_node_shop.js"
    environment = {**os.environ, "NODE_PATH": str(NODE_MODULES)}
    subprocess.run([_node_with_the_sdk(), str(script), str(data)], check=True, env=environment, timeout=120)
    store = Store.memory()
    now = datetime.now(UTC) + timedelta(minutes=5)
    run_round(load_settings(), OtlpFileSource(data), DryRunTracker(tmp_path / "drafts"), store, now=now)
    counts = sorted((s.error_type, s.total_count) for s in store.signatures())
    assert counts == [("ECONNREFUSED", 10), ("TypeError", 10)]  # 50 records: 30 and 20
