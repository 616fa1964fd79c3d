"""SigNoz counts one error recorded by every span it escapes once, as a file of the same telemetry does: the
rules of `sources/signoz/enclosed.py` run in the emulator's ClickHouse, over SigNoz's own tables, and each
round's signatures and counts are those of a round over the file (`round/propagated.py`); where SigNoz keeps
the exception a log wraps, and the file the log, the counts are the same."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from enclosed_telemetry import (
    NO_ROWS,
    dotnet_request,
    go_request,
    line,
    logged_line,
    python_request,
    server_span,
    span,
)
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from signoz_emulator import Behaviour, SignozEmulator, build_dataset

from rounds_bot.cli.app import main
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from rounds_bot.tracker.dryrun import DryRunTracker
from tools.demo.generate import otlp_json_line

#: the requests start half an hour ago: inside a first round's window, past SigNoz's last 30 s
START = datetime.now(UTC) - timedelta(minutes=30)
Counts = list[tuple[int, str]]


def _file_round(tmp_path: Path, lines: list[str], now: datetime | None = None) -> Counts:
    data = tmp_path / "telemetry.jsonl"
    data.write_text("\n".join(lines) + "\n")
    store = Store.memory()
    now = now or datetime.now(UTC)
    run_round(load_settings(), OtlpFileSource(data), DryRunTracker(tmp_path / "drafts"), store, now=now)
    return sorted((s.total_count, s.title) for s in store.signatures())


def _signoz_rounds(
    tmp_path: Path, lines: list[str], env, monkeypatch, rounds: int = 1, *, rebase: bool = False
) -> tuple[Counts, str]:
    """The signatures after `rounds` rounds against SigNoz holding `lines` (`rebase`: moved to end a minute
    ago), and the last round's report."""
    data = tmp_path / "signoz.jsonl"
    data.write_text("\n".join(lines) + "\n")
    dataset = build_dataset(
        [data], rebase=rebase, synthetic_events=0, synthetic_groups=0, window_seconds=0, now_ns=time.time_ns()
    )
    home = tmp_path / "signoz"
    home.mkdir()
    monkeypatch.chdir(home)
    with SignozEmulator(dataset, Behaviour(api_key="key")) as emulator:
        env.setenv("SIGNOZ_API_URL", emulator.url)
        env.setenv("SIGNOZ_API_KEY", "key")
        env.setenv("ERROR_LOOKBACK_MINUTES", "1440")
        for _ in range(rounds):
            result = CliRunner().invoke(main, ["run"], catch_exceptions=False)
            assert result.exit_code == 0, result.stderr
    with sqlite3.connect(home / "rounds.db") as db:
        counts = db.execute(
            "select total_count, title from signatures order by total_count, title"
        ).fetchall()
    return [(count, title) for count, title in counts], result.stdout


def _both(tmp_path: Path, lines: list[str], env, monkeypatch) -> Counts:
    """The signatures of a round over a file of `lines` and of one against SigNoz holding them: the same."""
    from_file = _file_round(tmp_path, lines)
    from_signoz, _ = _signoz_rounds(tmp_path, lines, env, monkeypatch)
    assert from_signoz == from_file
    return from_signoz


def test_a_go_services_layered_errors_are_one_signature_per_failing_query(clean_env, tmp_path, monkeypatch):
    lines = [
        line("cart", go_request(n, 17, "load cart" if n % 2 else "load order", START)) for n in range(10)
    ]
    assert _both(tmp_path, lines, clean_env, monkeypatch) == [
        (5, f"handle request: load cart 17: {NO_ROWS}"),
        (5, f"handle request: load order 17: {NO_ROWS}"),
    ]  # 30 rows in SigNoz's error index, in 6 of its groups


def test_a_python_exception_recorded_by_its_span_and_the_parent_is_counted_once(
    clean_env, tmp_path, monkeypatch
):
    lines = [line("shop", python_request(n, n, START)) for n in range(6)]
    assert _both(tmp_path, lines, clean_env, monkeypatch) == [(6, "KeyError: 'cart 0'")]


def test_a_server_spans_5xx_status_beside_the_error_it_answered_is_no_problem_of_its_own(
    clean_env, tmp_path, monkeypatch
):
    lines = []
    for n in range(8):
        spans = go_request(n, 100 + n, "load cart" if n < 5 else "load user", START)
        spans[-1]["parentSpanId"] = f"{900 + n:016x}"
        at = START + timedelta(seconds=n)
        lines.append(
            line("cart", [*spans, server_span(str(spans[-1]["traceId"]), 900 + n, at, "POST /checkout")])
        )
    lines.append(line("cart", [server_span(f"{77:032x}", 77, START, "POST /checkout")]))  # a 500 alone
    assert _both(tmp_path, lines, clean_env, monkeypatch) == [
        (1, "POST /checkout"),
        (3, f"handle request: load user 105: {NO_ROWS}"),
        (5, f"handle request: load cart 100: {NO_ROWS}"),
    ]


def _java_request(n: int, cart: int, exceptions: str) -> list[str]:
    """One failed `POST /checkout` of a Spring service under the Java agent: its server span, the controller's
    internal span under it, both in error. `exceptions` is `OTEL_SEMCONV_EXCEPTION_SIGNAL_OPT_IN`: "logs"
    records the exception as a log on each span (the server's ERROR, the controller's WARN: the agent's
    `Instrumenter` by span kind) and no span event; "logs/dup" both."""
    trace, at = f"{n + 1:032x}", START + timedelta(seconds=n)
    message = f"cart {cart} is locked"
    stack = (
        f"java.lang.IllegalStateException: {message}\n\tat com.shop.carts.Carts.lock(Carts.java:88)\n"
        "\tat com.shop.web.CheckoutController.checkout(CheckoutController.java:31)\n"
    )
    server = server_span(trace, 2 * n + 1, at, "POST /checkout")
    controller = span(trace, 2 * n + 2, 2 * n + 1, at, "java.lang.IllegalStateException", message, stack)
    controller.update(name="CheckoutController.checkout", status={"code": 2})
    if exceptions == "logs/dup":
        server["events"] = controller["events"]
    else:
        del controller["events"]
    thrown = {"exception.type": "java.lang.IllegalStateException", "exception.message": message}
    return [
        line("shop", [server, controller]),
        *(
            logged_line("shop", each, "", severity, "exception", **thrown, **{"exception.stacktrace": stack})
            for each, severity in ((server, 17), (controller, 13))
        ),
    ]


@pytest.mark.parametrize("exceptions", ["logs", "logs/dup"])
def test_the_java_agents_exceptions_recorded_as_logs_are_one_occurrence_each(
    clean_env, tmp_path, monkeypatch, exceptions
):
    """The semantic conventions deprecate exception span events for log records: with the agent's opt-in,
    a failed request is two error statuses without an exception event and two exception logs (one an
    error). Neither the controller's status nor the endpoint's is a problem of its own."""
    lines = [each for n in range(6) for each in _java_request(n, 17 if n < 4 else 23, exceptions)]
    counts = _both(tmp_path, lines, clean_env, monkeypatch)
    assert [count for count, _ in counts] == [6]
    assert counts[0][1].startswith("IllegalStateException: cart")


def test_an_internal_spans_status_beside_no_exception_stays_a_problem_of_its_own(
    clean_env, tmp_path, monkeypatch
):
    """`span.SetStatus(codes.Error, "cache timeout")` with no exception recorded in the trace, beside a log
    of no exception: two problems, as before."""
    lines = []
    for n in range(3):
        trace, at = f"{n + 1:032x}", START + timedelta(seconds=n)
        cache = span(trace, n + 1, None, at, "", "")
        del cache["events"]
        cache.update(name="cache get", status={"code": 2, "message": "cache timeout"})
        lines += [line("shop", [cache]), logged_line("shop", cache, "retrying checkout without the cache")]
    counts = _both(tmp_path, lines, clean_env, monkeypatch)
    assert [count for count, _ in counts] == [3, 3]


def test_a_status_that_wraps_the_error_its_child_recorded_is_one_occurrence(clean_env, tmp_path, monkeypatch):
    """Go: the query's span records `sql: no rows in result set`; the service's span above it only sets its
    status, `span.SetStatus(codes.Error, err.Error())`, to the wrapped error. A file counts the status (it
    wraps the record), SigNoz the record: once each."""
    lines = []
    for n in range(4):
        query, wrapper, *_ = go_request(n, 17, "load cart", START)
        del wrapper["events"]
        lines.append(line("cart", [query, wrapper]))
    from_file = _file_round(tmp_path, lines)
    from_signoz, _ = _signoz_rounds(tmp_path, lines, clean_env, monkeypatch)
    assert [count for count, _ in from_file] == [count for count, _ in from_signoz] == [4]


def test_a_client_spans_failed_call_under_the_apps_error_is_the_apps_error(clean_env, tmp_path, monkeypatch):
    lines = []
    for n in range(4):
        trace, at = f"{n + 1:032x}", START + timedelta(seconds=n)
        error = span(trace, 10 * n + 1, None, at, "PaymentDeclined", "card declined by the bank")
        call = server_span(trace, 10 * n + 2, at, "POST")
        call.update(kind=3, parentSpanId=f"{10 * n + 1:016x}")
        lines.append(line("checkout", [error, call]))
    assert _both(tmp_path, lines, clean_env, monkeypatch) == [
        (4, "PaymentDeclined: card declined by the bank")
    ]


def test_an_apps_exception_over_the_one_a_jdbc_span_recorded_encloses_it(clean_env, tmp_path, monkeypatch):
    cause = "deadlock detected"
    lines = []
    for n in range(3):
        trace, at = f"{n + 1:032x}", START + timedelta(seconds=n)
        stack = (
            f"com.shop.CartException: could not save cart {n}\n\tat com.shop.Carts.save(Carts.java:40)\n"
            f"Caused by: org.postgresql.util.PSQLException: {cause}\n"
            "\tat org.postgresql.Driver.run(Driver.java:9)"
        )
        jdbc = span(trace, 10 * n + 1, 10 * n + 2, at, "org.postgresql.util.PSQLException", cause)
        app = span(trace, 10 * n + 2, None, at, "com.shop.CartException", f"could not save cart {n}", stack)
        lines.append(line("carts", [jdbc, app]))
    counts = _both(tmp_path, lines, clean_env, monkeypatch)
    assert [count for count, _ in counts] == [3] and "could not save cart" in counts[0][1]


@pytest.mark.parametrize("code", [" (0x80131904)", ""])
def test_a_dotnet_exception_over_the_one_a_sqlclient_span_recorded_encloses_it_with_or_without_its_code(
    clean_env, tmp_path, monkeypatch, code
):
    """EF Core's `DbUpdateException` names SqlClient's `SqlException` as its inner exception, after ` ---> `
    and, as `ExternalException` prints it, with its HResult between the type and the message: one occurrence
    a request either way."""
    lines = [line("shop", dotnet_request(n, code, START)) for n in range(3)]
    counts = _both(tmp_path, lines, clean_env, monkeypatch)
    assert [count for count, _ in counts] == [3] and counts[0][1].startswith("DbUpdateException")


def test_a_retry_on_a_sibling_span_and_another_services_error_stay_occurrences_of_their_own(
    clean_env, tmp_path, monkeypatch
):
    lines = []
    for n in range(3):
        trace, at = f"{n + 1:032x}", START + timedelta(seconds=n)
        # two attempts, each its own span under the request's (which records nothing): two failures
        attempts = [span(trace, 10 * n + k, 10 * n, at, "TimeoutError", "timed out") for k in (1, 2)]
        lines.append(line("worker", attempts))
        # the caller's error wraps the worker's, in another service: a cascade, never folded
        lines.append(
            line("gateway", [span(trace, 10 * n + 5, None, at, "*fmt.wrapError", "call: timed out")])
        )
    assert _both(tmp_path, lines, clean_env, monkeypatch) == [
        (3, "call: timed out"),
        (6, "TimeoutError: timed out"),
    ]


def test_a_middleware_logging_every_failed_request_makes_no_problem_of_its_own(
    clean_env, tmp_path, monkeypatch
):
    """`slog.Error("request failed", "err", err)` on the handler's span: each log is its request's error."""
    requests = [go_request(n, 100 + n, "load cart" if n < 6 else "load user", START) for n in range(10)]
    lines = [line("cart", spans) for spans in requests]
    for spans in requests:
        status = spans[-1]["status"]
        assert isinstance(status, dict)
        lines.append(logged_line("cart", spans[-1], "request failed", err=str(status["message"])))
    counts = _both(tmp_path, lines, clean_env, monkeypatch)
    assert [count for count, _ in counts] == [4, 6]
    assert not any("request failed" in title for _, title in counts)


def _java_trace(cls: str, method: str) -> str:
    return (
        f"java.lang.IllegalStateException: {{message}}\n\tat com.shop.{cls}.{method}({cls}.java:41)\n"
        "\tat com.shop.web.CheckoutController.post(CheckoutController.java:27)\n"
    )


def test_a_logged_exception_is_the_spans_record_only_when_it_is_the_same_error(
    clean_env, tmp_path, monkeypatch
):
    """Each request's payment span records `IllegalStateException: payment declined`; its controller catches
    it and logs an exception on its own span: the same one (its type's simple name, as a log appender may
    write it), or, in half the requests, another of the same type that nothing recorded."""
    lines, declined = [], _java_trace("payments.Gateway", "charge")
    for n in range(6):
        trace, at = f"{n + 1:032x}", START + timedelta(seconds=n)
        payment = span(
            trace, 2 * n + 1, 2 * n + 2, at, "java.lang.IllegalStateException", "payment declined",
            declined.format(message="payment declined"),
        )  # fmt: skip
        controller = {**payment, "spanId": f"{2 * n + 2:016x}", "endTimeUnixNano": payment["endTimeUnixNano"]}
        lines.append(line("shop", [payment]))
        if n < 3:
            logged = {"exception.type": "IllegalStateException", "exception.message": "payment declined"}
            stack = declined.format(message="payment declined")
        else:
            logged = {
                "exception.type": "java.lang.IllegalStateException",
                "exception.message": "cache unavailable",
            }
            stack = _java_trace("cache.Prices", "load").format(message="cache unavailable")
        lines.append(
            logged_line("shop", controller, "checkout failed", **logged, **{"exception.stacktrace": stack})
        )
    counts = _both(tmp_path, lines, clean_env, monkeypatch)
    assert counts == [
        (3, "IllegalStateException: cache unavailable"),
        (6, "IllegalStateException: payment declined"),
    ]


def test_a_log_that_wraps_the_error_its_spans_recorded_is_no_second_problem(clean_env, tmp_path, monkeypatch):
    """`log.Printf("checkout failed: %v", err)` on the handler's span, over the error its spans recorded: a
    file counts the log (it encloses the spans' error), SigNoz the spans' error; either counts each failure
    once, in one signature."""
    lines = []
    for n in range(5):
        spans = go_request(n, 17, "load cart", START)
        status = spans[-1]["status"]
        assert isinstance(status, dict)
        lines += [
            line("cart", spans),
            logged_line("cart", spans[-1], f"checkout failed: {status['message']}"),
        ]
    from_file = _file_round(tmp_path, lines)
    from_signoz, _ = _signoz_rounds(tmp_path, lines, clean_env, monkeypatch)
    assert [(count, title.startswith("checkout failed: handle request")) for count, title in from_file] == [
        (5, True)
    ]
    assert from_signoz == [(5, f"handle request: load cart 17: {NO_ROWS}")]


def test_a_logged_exception_whose_cause_a_span_recorded_is_no_second_problem(
    clean_env, tmp_path, monkeypatch
):
    """The view raises `CheckoutError` from the KeyError its spans recorded, catches it and logs it: its
    traceback names the KeyError as its cause. A file counts the log, SigNoz the spans' KeyError: once."""
    lines = []
    for n in range(4):
        spans = python_request(n, 3, START)
        stack = str(spans[-1]["events"][0]["attributes"][2]["value"]["stringValue"])  # type: ignore[index]
        logged = stack + (
            "\nThe above exception was the direct cause of the following exception:\n\n"
            'Traceback (most recent call last):\n  File "/srv/shop/views.py", line 30, in checkout\n'
            '    raise CheckoutError("cart 3 cannot be checked out") from error\n'
            "shop.errors.CheckoutError: cart 3 cannot be checked out\n"
        )
        attributes = {
            "exception.type": "CheckoutError",
            "exception.message": "cart 3 cannot be checked out",
            "exception.stacktrace": logged,
        }
        lines += [line("shop", spans), logged_line("shop", spans[-1], "checkout failed", **attributes)]
    from_file = _file_round(tmp_path, lines)
    from_signoz, _ = _signoz_rounds(tmp_path, lines, clean_env, monkeypatch)
    assert [(count, title.startswith("CheckoutError")) for count, title in from_file] == [(4, True)]
    assert from_signoz == [(4, "KeyError: 'cart 3'")]


def test_the_next_round_counts_nothing_again(clean_env, tmp_path, monkeypatch):
    lines = [line("cart", go_request(n, 17, "load cart", START)) for n in range(4)]
    counts, report = _signoz_rounds(tmp_path, lines, clean_env, monkeypatch, rounds=2)
    assert counts == [(4, f"handle request: load cart 17: {NO_ROWS}")]
    assert "Nothing new." in report


def test_the_python_sdks_exception_recorded_by_each_span_it_escapes_is_counted_once(
    clean_env, tmp_path, monkeypatch
):
    """OpenTelemetry's Python SDK, as a service runs it: a KeyError escaping three nested
    `start_as_current_span` blocks (each records it, `record_exception=True` by default), in 5 requests."""
    spans = InMemorySpanExporter()
    tracing = TracerProvider(resource=Resource.create({"service.name": "shop"}))
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    tracer, carts = tracing.get_tracer("shop"), dict[str, int]()
    for n in range(5):
        with (
            contextlib.suppress(KeyError),
            tracer.start_as_current_span("POST /checkout", kind=SpanKind.SERVER),
            tracer.start_as_current_span("price"),
            tracer.start_as_current_span("load"),
        ):
            carts[f"c-{n}"] += 1
    tracing.shutdown()
    lines = [otlp_json_line(encode_spans(spans.get_finished_spans()))]
    counts, _ = _signoz_rounds(tmp_path, lines, clean_env, monkeypatch, rebase=True)
    assert [(count, title.startswith("KeyError")) for count, title in counts] == [(5, True)]  # 15 rows


@pytest.mark.parametrize("rows", [2, 3])
def test_enclosures_hold_however_many_spans_recorded_the_error(clean_env, tmp_path, monkeypatch, rows):
    lines = [line("cart", go_request(n, 17, "load cart", START)[-rows:]) for n in range(3)]
    counts, _ = _signoz_rounds(tmp_path, lines, clean_env, monkeypatch)
    assert counts == [(3, f"handle request: load cart 17: {NO_ROWS}")]


# the SDK's own handler, which most services still install (deprecated for the instrumentation package's)
@pytest.mark.filterwarnings("ignore:`LoggingHandler` in `opentelemetry-sdk` is deprecated:DeprecationWarning")
def test_the_python_sdks_logged_exception_and_its_spans_record_are_one_occurrence(
    clean_env, tmp_path, monkeypatch
):
    """The handler catches the KeyError the inner span recorded and logs it (`logger.exception`) through the
    SDK's `LoggingHandler`, on its own span; the log's `exception.message` is `c-0`, the span's `'c-0'`."""
    resource = Resource.create({"service.name": "shop"})
    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    tracing, logging_provider = TracerProvider(resource=resource), LoggerProvider(resource=resource)
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    logging_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    tracer, carts = tracing.get_tracer("shop"), dict[str, int]()
    logger = logging.getLogger("shop.checkout")
    logger.addHandler(LoggingHandler(logger_provider=logging_provider))
    logger.propagate = False
    try:
        for n in range(4):
            with tracer.start_as_current_span("POST /checkout"):
                try:
                    with tracer.start_as_current_span("load"):
                        carts[f"c-{n}"] += 1
                except KeyError:
                    logger.exception("checkout failed for c-%s", n)
    finally:
        logger.handlers.clear()
    tracing.shutdown()
    logging_provider.shutdown()
    encoded = [encode_spans(spans.get_finished_spans()), encode_logs(logs.get_finished_logs())]
    lines = [otlp_json_line(each) for each in encoded]
    # the records were made now: the file's round is run a minute later, past its last 30 s
    from_file = _file_round(tmp_path, lines, now=datetime.now(UTC) + timedelta(minutes=1))
    from_signoz, _ = _signoz_rounds(tmp_path, lines, clean_env, monkeypatch, rebase=True)
    # 8 records: 4 exception rows, 4 error logs (the titles differ: SigNoz's is its group's sample's message)
    assert [count for count, _ in from_signoz] == [count for count, _ in from_file] == [4]
