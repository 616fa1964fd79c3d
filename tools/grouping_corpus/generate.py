"""Write the labelled grouping corpus: telemetry of known bugs, recorded through the OpenTelemetry SDK.

    python -m tools.grouping_corpus.generate

Each bug belongs to one of the nine classes of grouping mistakes the corpus covers (`CLASSES`)
and occurs several times, with the values, line numbers, callers and depths that vary between
occurrences in production. Python bugs raise real exceptions in a small service
(`project.py`) and are recorded with `Span.record_exception`, so their traces are the
interpreter's own; the other runtimes' traces are their exact printed formats (`printed.py`);
HTTP failures are client and server spans with the semantic conventions' attributes; message-only
errors are log records. Everything is exported through the SDK's OTLP encoders as OTLP/JSON lines.

Writes, from a fixed seed (the same bytes every run):
- `tests/fixtures/grouping_corpus/corpus.otlp.jsonl`: the telemetry;
- `tests/fixtures/grouping_corpus/truth.json`: each bug's class, and which bug each error event
  (by the event id rounds' OTLP file source gives it) belongs to.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from opentelemetry import trace
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import SpanKind, Status, StatusCode

from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from tools.demo.generate import SeededIdGenerator, otlp_json_line
from tools.grouping_corpus import printed
from tools.grouping_corpus.project import load_modules, raised

SEED = 20261125
OCCURRENCES = 5
BASE_NS = int(datetime(2026, 11, 20, 8, 0, tzinfo=UTC).timestamp()) * 1_000_000_000
CHECKOUT = Path(__file__).resolve().parents[2]
FIXTURES = CHECKOUT / "tests" / "fixtures" / "grouping_corpus"

#: the classes of grouping mistakes, by the number the grouping issue gives them
CLASSES = {
    1: "message-only errors with free text",
    2: "one bug reached through different callers",
    3: "library code and recursion",
    4: "log parameters without digits",
    5: "frames identified by path, not file name",
    6: "chained exceptions with different root causes",
    7: "app-owner inference on cut traces",
    8: "traces whose first frame comes after line 60",
    9: "HTTP spans named only by their method",
}


@dataclass(frozen=True)
class Exc:
    """A real Python exception, recorded with `record_exception`."""

    error: BaseException


@dataclass(frozen=True)
class PrintedExc:
    """Another runtime's exception: type, message and its printed trace."""

    type: str
    message: str
    stacktrace: str


@dataclass(frozen=True)
class Log:
    """An ERROR log record whose body is the message alone."""

    body: str
    scope: str = "shop.app"


@dataclass(frozen=True)
class HttpSpan:
    """A failed HTTP span (no exception event): its name, kind and attributes."""

    name: str
    kind: SpanKind
    attributes: dict[str, Any]


Record = Exc | PrintedExc | Log | HttpSpan


@dataclass(frozen=True)
class Bug:
    id: str
    cls: int
    service: str
    occur: Callable[[random.Random], Record]


def bugs() -> list[Bug]:
    mods = load_modules()
    m = {path.rsplit("/app/", 1)[-1].rsplit("site-packages/", 1)[-1]: module for path, module in mods.items()}

    def py(call: Callable[[random.Random], object]) -> Callable[[random.Random], Record]:
        return lambda rng: Exc(raised(lambda: call(rng)))

    def pr(make: Callable[[random.Random], printed.Printed]) -> Callable[[random.Random], Record]:
        return lambda rng: PrintedExc(*make(rng))

    coupons = ("SPRING", "BLACKFRIDAY", "FREESHIP", "LOYAL10")
    callers = (
        lambda rng: m["shop/api/checkout.py"].post(mods, rng.choice(coupons)),
        lambda rng: m["shop/api/cart.py"].update(mods, rng.choice(coupons)),
        lambda rng: m["shop/jobs/renew.py"].run(mods, rng.choice(coupons)),
    )
    queries = (
        "red shoes size 9",
        "cheap flights to rome next week",
        "what's new",
        "gift for dad who likes fishing and old cars",
        "ßpecial ünïcode",
        "x",
        "a very long query about garden furniture that somebody pasted from an email",
    )
    prefs = (
        "{'theme': 'dark', 'lang': 'en'}",
        "{'theme': 'light'}",
        "{'lang': 'de', 'currency': 'EUR', 'beta': True}",
        "{'notifications': {'email': False, 'sms': True}}",
        "{}",
    )
    floats = ("'twelve'", "'12,50'", "'N/A'", "''", "'1.2.3'", "'ten euros'")
    ints = ("'three'", "'2.5'", "'many'", "'1e3'", "' '")
    bodies = (
        '{"sku": "A-1", "qty": 3}',
        '{"sku": "B-22", "qty": 1, "gift": true}',
        '{"items": [], "note": "leave at the door"}',
        '{"sku": "C-3"}',
    )
    jobs = ("nightly-export", "weekly-report", "cleanup", "reindex-catalog", "sync-prices")
    users = ("alice", "bob", "carol", "dmitri", "eve")
    depths = (5, 6, 7, 8, 9, 10, 11)
    return [
        # 1. message-only errors with free text and structured values
        Bug("search-failed", 1, "shop", lambda r: Log(f'search failed for query "{r.choice(queries)}"')),
        Bug("prefs-unreadable", 1, "shop", lambda r: Log(f"could not apply preferences {r.choice(prefs)}")),
        Bug(
            "price-float",
            1,
            "shop",
            lambda r: Log(
                f"invalid price in import row: could not convert string to float: {r.choice(floats)}"
            ),
        ),
        Bug(
            "quantity-int",
            1,
            "shop",
            lambda r: Log(f"invalid quantity: invalid literal for int() with base 10: {r.choice(ints)}"),
        ),
        Bug("upstream-body", 1, "shop", lambda r: Log(f"upstream rejected request body {r.choice(bodies)}")),
        Bug("user-missing", 1, "shop", lambda r: Log(f"user '{r.choice(users)}' not found")),
        Bug("order-missing", 1, "shop", lambda r: Log(f"order '{r.choice(coupons)}' not found")),
        # 2. one crash site reached through different callers
        Bug("coupon-unknown", 2, "shop", py(lambda r: r.choice(callers)(r))),
        Bug(
            "tax-region",
            2,
            "shop",
            py(lambda r: m["shop/api/checkout.py"].quote(mods, r.choice(("US", "CH", "NO")))),
        ),
        Bug(
            "jvm-reserve",
            2,
            "shop-jvm",
            pr(lambda r: printed.java_reserve(r, r.choice(("checkout", "admin", "api")))),
        ),
        Bug(
            "go-cart-line",
            2,
            "shop-go",
            pr(lambda r: printed.go_index_panic(r, r.choice(("checkout", "quote", "worker")))),
        ),
        # 3. library code (the service's own package installed under site-packages) and recursion
        Bug(
            "slugify-empty",
            3,
            "shop-pkg",
            py(
                lambda r: m["gunicorn/workers/sync.py"].handle_request(
                    mods,
                    r.choice((m["shop/catalog.py"].product_url, m["shop/blog.py"].post_url)),
                    r.choice(("", "   ", "\t")),
                )
            ),
        ),
        Bug(
            "tree-cycle",
            3,
            "shop",
            py(lambda r: m["shop/catalog/tree.py"].walk(f"cat-{r.randint(1, 99)}", 0, r.choice(depths))),
        ),
        # 4. log parameters without digits
        Bug(
            "job-unreachable",
            4,
            "scheduler",
            lambda r: Log(f"job {r.choice(jobs)} failed: destination unreachable", "scheduler"),
        ),
        Bug(
            "job-late",
            4,
            "scheduler",
            lambda r: Log(f"job {r.choice(jobs)} finished after its deadline", "scheduler"),
        ),
        Bug(
            "refund-denied",
            4,
            "scheduler",
            lambda r: Log(f"user {r.choice(users)} may not approve refunds", "scheduler"),
        ),
        # 5. frames identified by path: api/v1/orders.py and api/v2/orders.py
        Bug("orders-v1", 5, "shop", py(lambda r: m["shop/router.py"].dispatch(mods, "v1", -r.randint(0, 5)))),
        Bug("orders-v2", 5, "shop", py(lambda r: m["shop/router.py"].dispatch(mods, "v2", -r.randint(0, 5)))),
        Bug("node-orders-v1", 5, "shop-node", pr(lambda r: printed.node_orders(r, "v1"))),
        Bug("node-orders-v2", 5, "shop-node", pr(lambda r: printed.node_orders(r, "v2"))),
        # 6. one wrapper, different root causes
        Bug(
            "save-refused",
            6,
            "shop",
            py(lambda r: m["shop/repo.py"].save(mods, "connect", r.choice((5432, 6432)))),
        ),
        Bug(
            "save-corrupt",
            6,
            "shop",
            py(lambda r: m["shop/repo.py"].save(mods, "decode", r.choice(("{", "[1,", '{"a":')))),
        ),
        Bug(
            "load-fallback", 6, "shop", py(lambda r: m["shop/repo.py"].load(mods, r.choice(("k1", "k2")), {}))
        ),
        Bug("jvm-save-timeout", 6, "shop-jvm", pr(lambda r: printed.java_wrapped(r, "timeout"))),
        Bug("jvm-save-number", 6, "shop-jvm", pr(lambda r: printed.java_wrapped(r, "number"))),
        Bug("dotnet-save-timeout", 6, "shop-dotnet", pr(lambda r: printed.dotnet_wrapped(r, "timeout"))),
        Bug("dotnet-save-format", 6, "shop-dotnet", pr(lambda r: printed.dotnet_wrapped(r, "format"))),
        # 7. JVM traces cut at a template engine's frames
        Bug("jvm-cart-view", 7, "shop-jvm", pr(lambda r: printed.java_cut_at_template(r, "cart"))),
        Bug("jvm-user-view", 7, "shop-jvm", pr(lambda r: printed.java_cut_at_template(r, "user"))),
        # 8. long assertion dumps before the first frame
        *(
            Bug(f"jvm-check-{check}", 8, "shop-jvm", pr(lambda r, c=check: printed.java_long_assertion(r, c)))
            for check in ("export", "invoice", "stock", "tax")
        ),
        *(
            Bug(
                f"node-check-{check}",
                8,
                "shop-node",
                pr(lambda r, c=check: printed.node_long_assertion(r, c)),
            )
            for check in ("stock", "ledger")
        ),
        # 9. HTTP spans named by their method only
        Bug(
            "http-inventory-503",
            9,
            "shop",
            lambda r: _client_span(r, "inventory.internal", "/items/{id}", 503),
        ),
        Bug("http-payments-503", 9, "shop", lambda r: _client_span(r, "payments.internal", "/charges", 503)),
        Bug("http-route-orders", 9, "shop", lambda r: _server_span("GET", "/orders/{id}", 500)),
        Bug("http-route-carts", 9, "shop", lambda r: _server_span("GET", "/carts/{id}", 500)),
        Bug("http-peer-fraud", 9, "shop", lambda r: _peer_span(r, "fraud-check")),
        Bug("http-peer-mailer", 9, "shop", lambda r: _peer_span(r, "mailer")),
    ]


def _client_span(rng: random.Random, host: str, template: str, status: int) -> HttpSpan:
    return HttpSpan(
        "GET",
        SpanKind.CLIENT,
        {
            "http.request.method": "GET",
            "server.address": host,
            "server.port": 443,
            "url.template": template,
            "url.full": f"https://{host}{template.replace('{id}', str(rng.randint(1, 9999)))}",
            "http.response.status_code": status,
            "error.type": str(status),
        },
    )


def _server_span(method: str, route: str, status: int) -> HttpSpan:
    return HttpSpan(
        method,
        SpanKind.SERVER,
        {
            "http.request.method": method,
            "http.route": route,
            "http.response.status_code": status,
            "error.type": str(status),
        },
    )


def _peer_span(rng: random.Random, peer: str) -> HttpSpan:
    return HttpSpan(
        "POST",
        SpanKind.CLIENT,
        {
            "http.request.method": "POST",
            "peer.service": peer,
            "http.response.status_code": 502,
            "error.type": "502",
            "network.peer.address": f"10.0.{rng.randint(0, 9)}.{rng.randint(2, 250)}",
        },
    )


# --- recording ----------------------------------------------------------------------------------


class Recorder:
    """One tracer and logger provider per service, exporting into memory."""

    def __init__(self, seed: int) -> None:
        self.spans = InMemorySpanExporter()
        self.logs = InMemoryLogRecordExporter()
        self._ids = SeededIdGenerator(seed)
        self._providers: dict[str, tuple[TracerProvider, LoggerProvider]] = {}
        #: (trace id, span id) of each error's span -> bug id
        self.truth: dict[tuple[str, str], str] = {}

    def record(self, bug: Bug, record: Record, time_ns: int) -> None:
        tracer_provider, logger_provider = self._providers_for(bug.service)
        tracer = tracer_provider.get_tracer("shop.app")
        kind = record.kind if isinstance(record, HttpSpan) else SpanKind.INTERNAL
        name = record.name if isinstance(record, HttpSpan) else f"{bug.service} operation"
        attributes = record.attributes if isinstance(record, HttpSpan) else None
        span = tracer.start_span(name, kind=kind, attributes=attributes, start_time=time_ns)
        if isinstance(record, Exc):
            span.record_exception(record.error, timestamp=time_ns + 1_000)
            span.set_status(Status(StatusCode.ERROR, str(record.error)))
        elif isinstance(record, PrintedExc):
            span.add_event(
                "exception",
                {
                    "exception.type": record.type,
                    "exception.message": record.message,
                    "exception.stacktrace": record.stacktrace,
                },
                timestamp=time_ns + 1_000,
            )
            span.set_status(Status(StatusCode.ERROR, record.message))
        elif isinstance(record, Log):
            logger = logger_provider.get_logger(record.scope)
            logger.emit(
                timestamp=time_ns + 1_000,
                observed_timestamp=time_ns + 2_000,
                context=trace.set_span_in_context(span),
                severity_number=SeverityNumber.ERROR,
                severity_text="ERROR",
                body=record.body,
            )
        else:
            span.set_status(Status(StatusCode.ERROR))
        ids = span.get_span_context()
        self.truth[(f"{ids.trace_id:032x}", f"{ids.span_id:016x}")] = bug.id
        span.end(end_time=time_ns + 5_000_000)

    def lines(self) -> list[str]:
        out = [otlp_json_line(encode_spans(self.spans.get_finished_spans()))]
        logs = self.logs.get_finished_logs()
        if logs:
            out.append(otlp_json_line(encode_logs(logs)))
        return out

    def _providers_for(self, service: str) -> tuple[TracerProvider, LoggerProvider]:
        if service not in self._providers:
            resource = Resource({"service.name": service, "service.version": "1.4.2"})
            tracer_provider = TracerProvider(
                sampler=ALWAYS_ON, resource=resource, shutdown_on_exit=False, id_generator=self._ids
            )
            tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
            logger_provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
            logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.logs))
            self._providers[service] = (tracer_provider, logger_provider)
        return self._providers[service]


def render(seed: int = SEED) -> tuple[list[str], dict[tuple[str, str], str], list[Bug]]:
    rng = random.Random(seed)
    corpus = bugs()
    planned = [(bug, bug.occur(rng)) for bug in corpus for _ in range(OCCURRENCES)]
    rng.shuffle(planned)
    recorder = Recorder(seed + 1)
    for index, (bug, record) in enumerate(planned):
        recorder.record(bug, record, BASE_NS + index * 1_000_000_000)
    return recorder.lines(), recorder.truth, corpus


def event_truth(path: Path, truth: dict[tuple[str, str], str]) -> dict[str, str]:
    """Read the file back as rounds does; every error event must be one planned occurrence."""
    window = Window(start=datetime(1970, 1, 1, tzinfo=UTC), end=datetime(9999, 1, 1, tzinfo=UTC))
    result = OtlpFileSource(path).poll(window, frozenset())
    if result.skipped:
        raise SystemExit(f"unreadable records in {path}: {result.skipped[:3]}")
    by_event = {event.event_id: truth[(event.trace_id or "", event.span_id or "")] for event in result.events}
    counts = Counter(by_event.values())
    wrong = {bug: n for bug, n in counts.items() if n != OCCURRENCES}
    if wrong or len(counts) != len(set(truth.values())):
        raise SystemExit(f"error events per bug differ from {OCCURRENCES}: {wrong}")
    return by_event


@click.command()
@click.option("--output", type=click.Path(path_type=Path, file_okay=False), default=FIXTURES)
def main(output: Path) -> None:
    """Regenerate the grouping corpus (deterministic: the same bytes on every run)."""
    lines, truth, corpus = render()
    output.mkdir(parents=True, exist_ok=True)
    data = output / "corpus.otlp.jsonl"
    data.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    by_event = event_truth(data, truth)
    document = {
        "about": "Which bug each error event of corpus.otlp.jsonl belongs to, and each bug's class "
        "of grouping mistake. Written by `python -m tools.grouping_corpus.generate`.",
        "classes": {str(number): name for number, name in CLASSES.items()},
        "bugs": {bug.id: {"class": bug.cls, "service": bug.service} for bug in corpus},
        "events": dict(sorted(by_event.items())),
    }
    (output / "truth.json").write_text(
        json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    click.echo(f"wrote {data} ({len(by_event)} error events, {len(corpus)} bugs) and truth.json")


if __name__ == "__main__":
    main()
