"""OpenTelemetry's Python SDK as services run it, each failure recorded more than once: a client span's error
that its server span recorded again and a framework logged (`requests` under Flask), an exception recorded
by hand and again as it left `start_as_current_span`, an exception the SDK's `LoggingHandler` logged with
only its first argument as the message. Each failure is one occurrence, of the problem its outermost record
shows."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Tracer, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode
from test_signoz_enclosed_errors import _signoz_rounds

from rounds_bot.round.run import run_round
from rounds_bot.round.same_error import grows
from rounds_bot.settings import load_settings
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from rounds_bot.tracker.dryrun import DryRunTracker
from tools.demo.generate import otlp_json_line

pytestmark = pytest.mark.filterwarnings(
    "ignore:`LoggingHandler` in `opentelemetry-sdk` is deprecated:DeprecationWarning"
)


class QuotaExceeded(Exception):
    """An error raised with two arguments: `str()` prints both, a log handler's message the first."""


class StaleCart(Exception):
    """An error raised with no argument: `str()` is empty."""


Service = Callable[[Tracer, logging.Logger, int], None]


@contextlib.contextmanager
def _sdk() -> Iterator[tuple[Tracer, logging.Logger, Callable[[], list[str]]]]:
    """A service's tracer and logger as the SDK wires them, and its telemetry as OTLP/JSON lines."""
    resource = Resource.create({"service.name": "shop"})
    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    tracing, logging_provider = TracerProvider(resource=resource), LoggerProvider(resource=resource)
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    logging_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    logger = logging.getLogger("shop.app")
    logger.addHandler(LoggingHandler(logger_provider=logging_provider))
    logger.propagate = False

    def lines() -> list[str]:
        tracing.shutdown()
        logging_provider.shutdown()
        logged = logs.get_finished_logs()
        encoded = [encode_spans(spans.get_finished_spans()), *([encode_logs(logged)] if logged else [])]
        return [otlp_json_line(each) for each in encoded]

    try:
        yield tracing.get_tracer("shop"), logger, lines
    finally:
        logger.handlers.clear()


def _lines(requests: list[Service]) -> list[str]:
    """The OTLP/JSON lines of a service's telemetry after `requests`, each run once."""
    with _sdk() as (tracer, logger, lines):
        for n, request in enumerate(requests):
            with contextlib.suppress(Exception):
                request(tracer, logger, n)
        return lines()


def _file_counts(tmp_path: Path, lines: list[str]) -> list[tuple[int, str]]:
    """The signatures (count, title) of a round over a file of `lines`."""
    data = tmp_path / "telemetry.jsonl"
    data.write_text("\n".join(lines) + "\n")
    store = Store.memory()
    # the records were made now: the round is run a minute later, past a file's last 30 s
    now = datetime.now(UTC) + timedelta(minutes=1)
    run_round(load_settings(), OtlpFileSource(data), DryRunTracker(tmp_path / "drafts"), store, now=now)
    return sorted((s.total_count, s.title) for s in store.signatures())


def _counts(tmp_path: Path, requests: list[Service], env, monkeypatch) -> list[tuple[int, str]]:
    """The signatures (count, title) of a round over a file of the telemetry of `requests`; a round against
    SigNoz holding it gives the same counts (`sources/signoz/enclosed.py` writes the rules in SQL)."""
    lines = _lines(requests)
    from_file = _file_counts(tmp_path, lines)
    from_signoz, _ = _signoz_rounds(tmp_path, lines, env, monkeypatch, rebase=True)
    assert [count for count, _ in from_signoz] == [count for count, _ in from_file]
    return from_file


#: a client library, compiled as an installed package's file: its instrumentation's client span records the
#: error as it leaves, with the library's frames only (`requests`' under its `Session.send`), and the type
#: with its module (`json.decoder.JSONDecodeError`)
CLIENT = """
import json
from opentelemetry.trace import SpanKind

def call(tracer, method):
    with tracer.start_as_current_span(method, kind=SpanKind.CLIENT):
        return json.loads("<html>502 Bad Gateway</html>")
"""
#: a Flask-like service's views, compiled as its own file so that their frames are the app's: the server span
#: records the client's error as it leaves, and the framework logs it (`logger.exception("Exception on ...")`)
#: before it does
VIEWS = """
def served(tracer, logger, route, view):
    with tracer.start_as_current_span("POST " + route, kind=SpanKind.SERVER):
        try:
            view(tracer)
        except ValueError:
            logger.exception("Exception on %s [POST]", route)
            raise

def pay(tracer):
    return call(tracer, "POST")

def ship(tracer):
    return call(tracer, "GET")
"""


def _views() -> dict[str, Any]:
    """The views calling the client library, each compiled as the file it stands for."""
    client: dict[str, Any] = {}
    exec(compile(CLIENT, "/usr/lib/python3/site-packages/shopclient/http.py", "exec"), client)
    views: dict[str, Any] = {"call": client["call"], "SpanKind": SpanKind}
    exec(compile(VIEWS, "/app/shop/views.py", "exec"), views)
    return views


def _pay(tracer: Tracer, logger: logging.Logger, n: int) -> None:
    views = _views()
    views["served"](tracer, logger, "/pay", views["pay"])


def _ship(tracer: Tracer, logger: logging.Logger, n: int) -> None:
    views = _views()
    views["served"](tracer, logger, "/ship", views["ship"])


def test_failed_calls_of_two_handlers_are_two_problems_counted_once_each(tmp_path) -> None:
    """The client span's record holds the library's frames alone; the server span's and the log's, the
    handler's: the same error however the log spells its type (`JSONDecodeError` for the span's
    `json.decoder.JSONDecodeError`), counted as the server span's record. (SigNoz counts one of its groups,
    service, type and message, as one problem: docs/grouping.md, "The same rules on SigNoz".)"""
    counts = _file_counts(tmp_path, _lines([_pay] * 3 + [_ship] * 4))
    assert [count for count, _ in counts] == [3, 4]  # 21 records: 3 a failure
    assert all(title.startswith("JSONDecodeError: Expecting value") for _, title in counts)


def _recorded_by_hand(tracer: Tracer, logger: logging.Logger, n: int) -> None:
    """`span.record_exception(e)`, the status set, then `raise` inside `start_as_current_span`, which records
    the exception again as it leaves the span (its traceback grown by the frames it left)."""
    with tracer.start_as_current_span("charge") as span:
        try:
            raise RuntimeError(f"card declined for order {n}")
        except RuntimeError as error:
            span.record_exception(error)
            span.set_status(Status(StatusCode.ERROR, str(error)))
            raise


def test_an_exception_recorded_by_hand_and_again_as_it_left_the_span_is_one_occurrence(
    clean_env, tmp_path, monkeypatch
) -> None:
    assert _counts(tmp_path, [_recorded_by_hand] * 4, clean_env, monkeypatch) == [
        (4, "RuntimeError: card declined for order 0")
    ]


def _loop(tracer: Tracer, logger: logging.Logger, n: int) -> None:
    """One span records each item's failure: two failures, the same traceback."""
    with tracer.start_as_current_span("import") as span:
        for _item in (1, 2):
            try:
                raise ValueError("row has no sku")
            except ValueError as error:
                span.record_exception(error)


def test_a_span_recording_two_items_failing_alike_counts_both(clean_env, tmp_path, monkeypatch) -> None:
    assert _counts(tmp_path, [_loop] * 3, clean_env, monkeypatch) == [(6, "ValueError: row has no sku")]


def _logged_in_the_caller(error: Callable[[int], Exception]) -> Service:
    """The inner span records the exception as it leaves; the caller catches it and logs it through the SDK's
    `LoggingHandler`, which writes the exception's first argument as its message (or none)."""

    def request(tracer: Tracer, logger: logging.Logger, n: int) -> None:
        with tracer.start_as_current_span("POST /orders", kind=SpanKind.SERVER):
            try:
                with tracer.start_as_current_span("reserve"):
                    raise error(n)
            except Exception:
                logger.exception("order %s failed", n)

    return request


@pytest.mark.parametrize(
    ("error", "title"),
    [
        (lambda n: QuotaExceeded("quota exceeded", f"t{n}"), "QuotaExceeded: ('quota exceeded', <str>)"),
        (lambda n: StaleCart(), "StaleCart"),
    ],
    ids=["two arguments", "no argument"],
)
def test_a_logged_exception_whose_message_is_its_first_argument_is_the_spans_record(
    clean_env, tmp_path, monkeypatch, error: Callable[[int], Exception], title: str
) -> None:
    counts = _counts(tmp_path, [_logged_in_the_caller(error)] * 4, clean_env, monkeypatch)
    assert [count for count, _ in counts] == [4]  # 8 records: a span's and a log's a failure
    assert counts[0][1].startswith(title.split("(")[0])


@pytest.mark.parametrize(
    ("longer", "shorter", "grown"),
    [
        ("Traceback:\n  File a\n  File b\nE: x", "Traceback:\n  File b\nE: x", True),
        ("Traceback:\n  File b\nE: x", "Traceback:\n  File b\nE: x", False),  # the same: two occurrences
        ("Traceback:\n  File a\n  File c\nE: x", "Traceback:\n  File b\nE: x", False),
        ("Traceback:\n  File a\nE: x", "Traceback:\n", False),
    ],
)
def test_a_traceback_grows_only_by_frames_above_the_whole_of_the_other(
    longer: str, shorter: str, grown: bool
) -> None:
    assert grows(longer, shorter) is grown
