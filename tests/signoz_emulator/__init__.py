"""A SigNoz emulator: SigNoz's HTTP API on 127.0.0.1 over a real ClickHouse engine, fed from OTLP/JSON.

A test double that lives with the tests, not in the installed package: the tests import it as
`signoz_emulator` (`tests/` is on their path). The queries run on ClickHouse itself (chDB, in this
process: `engine`), over tables created from SigNoz's own schema (`schema.sql`); what stays in
Python is SigNoz's own behaviour by version: routes and envelopes (v5 `query_range` from v0.87, and
the v4 one on which v0.60 to v0.86 run clickhouse_sql: `v4`), request checks, variable rendering,
and ClickHouse errors as HTTP statuses. To try rounds without a SigNoz, run it by hand
from the root of a source checkout:

    python -m tests.signoz_emulator --data rounds_bot/data/demo.otlp.jsonl --port 8080

then point rounds at `SIGNOZ_API_URL=http://127.0.0.1:8080`. Fixtures are shifted so their
newest record lands a minute ago (`--no-rebase` keeps their times). `--synthetic-events` adds
exception rows generated inside ClickHouse, cheap even at a million rows.

The engine is one per process: an emulator loads its dataset into it when it starts (emptying
the tables first), so one emulator serves at a time.

Tests adjust `Behaviour` while the server runs: the version, a required API key, a role that is
refused, clickhouse_sql refused, and one-shot faults (500, 429 with Retry-After, a hang, an HTML
page, a body cut short, a body that is not JSON, or any change to the JSON answer; a proxy's error
page or redirect in front of SigNoz; a query ClickHouse fails, answered as SigNoz's handler does), how
ClickHouse orders rows tied on a list query's ORDER BY (`ties`: differently on each query, from a seed), and
rows the collector writes late, between two requests (`arrivals`). With
`report_reads` (`--report-reads`) every answer also says what ClickHouse read for it, in the
emulator's own headers `X-Emulator-Rows-Read` and `X-Emulator-Bytes-Read` (a SigNoz sends
neither): the benchmark's ClickHouse-side figures.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from rounds_bot.sources.signoz.times import NS_PER_S

from .api import EmulatedSignoz
from .arrivals import LateRows, due
from .data import Dataset
from .engine import Engine
from .replies import ApiError, Reply, go_json
from .ties import TieOrder

# `query`: the next v1 exceptions-API statement fails in ClickHouse, answered as SigNoz's query-service
# handlers answer it (`EmulatedSignoz._run`: countErrors RespondError `exec` 422, listErrors HandleError 500)
FaultKind = Literal[
    "status", "hang", "html", "truncated", "malformed", "mutate", "proxy", "redirect", "query"
]
OPEN_PATHS = ("/api/v1/health", "/api/v1/version")
ROWS_READ_HEADER = "X-Emulator-Rows-Read"
BYTES_READ_HEADER = "X-Emulator-Bytes-Read"
# Not SigNoz's own answers: what a reverse proxy in front of it (nginx, an ingress) sends instead, for
# the `proxy` and `redirect` faults: nginx's built-in error page and its 301 page, with its Server header.
PROXY_SERVER = "nginx/1.25.3"
PROXY_PAGE = (
    "<html>\r\n<head><title>{status} {reason}</title></head>\r\n<body>\r\n<center><h1>{status} {reason}"
    "</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"
)
UI_PAGE = (
    b'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>SigNoz</title>'
    b'</head><body><div id="root"></div><script src="/js/main.js"></script></body></html>'
)


@dataclass
class Fault:
    """Something wrong with the next `times` answers to paths starting with `path`."""

    kind: FaultKind
    status: int = 500
    retry_after: str | None = None
    path: str = "/api/"
    times: int = 1
    seconds: float = 5.0
    mutate: Callable[[Any], Any] | None = None
    #: matching requests answered normally before the fault starts (a crash at the n-th request)
    after: int = 0
    #: where a `redirect` fault points (its Location header, as given: absolute or relative)
    location: str = ""
    #: the ClickHouse error code a `query` fault fails a v5 clickhouse_sql statement with
    clickhouse_code: int = 241
    #: only requests whose body holds this text (a table name: one stream's queries)
    body_contains: str = ""


@dataclass
class Behaviour:
    version: str = "v0.138.0"
    api_key: str | None = None
    role_allowed: bool = True
    clickhouse_sql_allowed: bool = True
    report_reads: bool = False
    #: a logs table from before the collector's schema migration 2001, which added `body_v2`
    logs_without_body_v2: bool = False
    #: SigNoz's `use_json_body` flag (experimental, off by default: pkg/flagger/registry.go): a raw log's
    #: `body` is the JSON `body_v2`, a named `body` its `message` (`builder.raw_statement`)
    use_json_body: bool = False
    faults: list[Fault] = field(default_factory=list)
    #: ClickHouse's order of rows tied on a list query's ORDER BY (`ties`); rows the collector writes late
    tie_order: TieOrder = field(default_factory=TieOrder)
    late_rows: list[LateRows] = field(default_factory=list)

    def take_fault(self, path: str, body: bytes = b"") -> Fault | None:
        for fault in self.faults:
            if fault.body_contains and fault.body_contains.encode() not in body:
                continue
            if path.startswith(fault.path) and fault.times != 0:
                if fault.after > 0:
                    fault.after -= 1
                    return None
                if fault.times > 0:
                    fault.times -= 1
                return fault
        return None


@dataclass(frozen=True)
class SeenRequest:
    method: str
    path: str
    query: str
    body: bytes
    headers: dict[str, str]
    status: int


class SignozEmulator:
    """An emulated SigNoz listening on 127.0.0.1; use as a context manager or start/stop."""

    def __init__(
        self,
        dataset: Dataset | None = None,
        behaviour: Behaviour | None = None,
        *,
        port: int = 0,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.dataset = dataset or Dataset()
        self.engine = Engine.shared()
        self.behaviour = behaviour or Behaviour()
        self.requests: list[SeenRequest] = []
        self._now = now
        self.stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self._server.daemon_threads = True
        self._server.emulator = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def load(self) -> None:
        """Write the dataset into the engine (emptying its tables first)."""
        self.dataset.load(self.engine)

    def start(self) -> SignozEmulator:
        if self._thread is not None:  # started already (`with SignozEmulator(...).start()`)
            return self
        self.load()
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (for running by hand); `load()` first."""
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()

    def stop(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> SignozEmulator:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def api(self) -> EmulatedSignoz:
        return EmulatedSignoz(
            self.engine,
            version=self.behaviour.version,
            clickhouse_sql_allowed=self.behaviour.clickhouse_sql_allowed,
            now_ns=lambda: int(self._now() * NS_PER_S),
            logs_without_body_v2=self.behaviour.logs_without_body_v2,
            use_json_body=self.behaviour.use_json_body,
            tie_salt=self.behaviour.tie_order.salt,
        )

    def now(self) -> float:
        """The emulated server's clock, in Unix seconds."""
        return self._now()

    def record(self, request: SeenRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def paths(self) -> list[str]:
        return [request.path for request in self.requests]

    # -- routing -------------------------------------------------------------------------------

    def answer(
        self,
        method: str,
        path: str,
        query: str,
        body: bytes,
        headers: dict[str, str],
        *,
        failing_query: bool = False,
        failing_code: int = 241,
    ) -> Reply:
        api = self.api()
        api.failing_query = failing_query
        api.failing_code = failing_code
        if not path.startswith("/api/"):
            return Reply(200, UI_PAGE, "text/html; charset=utf-8")
        if path == "/api/v1/health" and method == "GET":
            return api.health()
        if path == "/api/v1/version" and method == "GET":
            return api.version_reply()
        exceptions = api.exceptions_method()
        routes: dict[tuple[str, str], Callable[[], Reply]] = {
            (exceptions, "/api/v1/listErrors"): lambda: api.list_errors(method, body, parse_qs(query)),
            (exceptions, "/api/v1/countErrors"): lambda: api.count_errors(method, body, parse_qs(query)),
            ("GET", "/api/v1/errorFromGroupID"): lambda: api.error_from_group_id(parse_qs(query)),
            ("GET", "/api/v1/errorFromErrorID"): lambda: api.error_from_error_id(parse_qs(query)),
            ("GET", "/api/v1/nextPrevErrorIDs"): lambda: api.next_prev_error_ids(parse_qs(query)),
            ("POST", "/api/v5/query_range"): lambda: api.query_range(body),
            ("POST", "/api/v4/query_range"): lambda: api.query_range_v4(body),
        }
        handler = routes.get((method, path))
        if handler is None:
            if any(route_path == path for _, route_path in routes):
                return Reply(405, b"", "text/plain; charset=utf-8")
            return Reply(404, b"404 page not found\n", "text/plain; charset=utf-8")
        refusal = self._auth(api, headers)
        if refusal is not None:
            return refusal
        try:
            return handler()
        except ApiError as error:
            return error.reply

    def _auth(self, api: EmulatedSignoz, headers: dict[str, str]) -> Reply | None:
        expected = self.behaviour.api_key
        if expected is not None and headers.get("signoz-api-key") != expected:
            return api.render_error(401, "unauthenticated", "unauthenticated", "unauthenticated")
        if not self.behaviour.role_allowed:
            return api.render_error(
                403, "forbidden", "forbidden", "only viewers/editors/admins can access this resource"
            )
        return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "signoz-emulator"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read `emulator.requests` instead."""

    _server_name: str | None = None

    def version_string(self) -> str:
        """The `Server` header: the emulator's, or a proxy's for a proxy fault."""
        return self._server_name or super().version_string()

    def date_time_string(self, timestamp: float | None = None) -> str:
        """The `Date` header from the emulated server's own clock."""
        emulator: SignozEmulator = self.server.emulator  # type: ignore[attr-defined]
        return super().date_time_string(emulator.now() if timestamp is None else timestamp)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        emulator: SignozEmulator = self.server.emulator  # type: ignore[attr-defined]
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {key.lower(): value for key, value in self.headers.items()}
        for rows in due(emulator.behaviour.late_rows, parts.path, body):
            rows.arrive(emulator.engine)
        fault = emulator.behaviour.take_fault(parts.path, body)
        if fault is not None and fault.kind == "hang":
            emulator.record(SeenRequest(method, parts.path, parts.query, body, headers, 0))
            emulator.stopping.wait(fault.seconds)
            self.close_connection = True
            return
        try:
            with emulator.engine.reads() as reads:
                failing = fault is not None and fault.kind == "query"
                reply = emulator.answer(
                    method,
                    parts.path,
                    parts.query,
                    body,
                    headers,
                    failing_query=failing,
                    failing_code=fault.clickhouse_code if fault is not None else 241,
                )
            reply = _apply_fault(fault, reply, emulator.api())
        except Exception as error:  # a defect of the emulator: answered, never a dropped connection
            traceback.print_exc(file=sys.stderr)
            reply = emulator.api().render_error(
                500, "internal", "internal", f"emulator failure: {type(error).__name__}: {error}"
            )
        if emulator.behaviour.report_reads:
            reply.headers.update({ROWS_READ_HEADER: str(reads.rows), BYTES_READ_HEADER: str(reads.bytes)})
        emulator.record(SeenRequest(method, parts.path, parts.query, body, headers, reply.status))
        self._server_name = reply.headers.pop("Server", None)
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if fault is not None and fault.kind == "truncated":
            self.wfile.write(reply.body[: len(reply.body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(reply.body)


def _apply_fault(fault: Fault | None, reply: Reply, api: EmulatedSignoz) -> Reply:
    if fault is None or fault.kind in ("truncated", "query"):
        return reply
    if fault.kind == "proxy":  # nginx's own error page: its upstream (SigNoz) is down or unreachable
        return _proxy_page(fault.status, {"Server": PROXY_SERVER})
    if fault.kind == "redirect":  # a proxy moving the API elsewhere (http to https, another host or path)
        status = fault.status if 300 <= fault.status < 400 else 301
        return _proxy_page(status, {"Server": PROXY_SERVER, "Location": fault.location})
    if fault.kind == "html":
        return Reply(fault.status if fault.status != 500 else 200, UI_PAGE, "text/html; charset=utf-8")
    if fault.kind == "malformed":
        return Reply(reply.status, reply.body[: max(1, len(reply.body) // 2)], reply.content_type)
    if fault.kind == "mutate" and fault.mutate is not None:
        return Reply(reply.status, go_json(fault.mutate(json.loads(reply.body))), reply.content_type)
    # status faults answer in the v5 render family; 429 carries Retry-After and a retry delay
    delay_ns = None
    headers: dict[str, str] = {}
    if fault.retry_after is not None:
        headers["Retry-After"] = fault.retry_after
        if fault.retry_after.isdigit():
            delay_ns = int(fault.retry_after) * NS_PER_S
    kind = {429: "too-many-requests", 503: "unavailable", 504: "timeout"}.get(fault.status, "internal")
    code = kind.replace("-", "_")
    failure = api.render_error(
        fault.status, kind, code, f"emulated failure {fault.status}", retry_delay_ns=delay_ns
    )
    failure.headers.update(headers)
    return failure


def _proxy_page(status: int, headers: dict[str, str]) -> Reply:
    reason = HTTPStatus(status).phrase
    page = PROXY_PAGE.format(status=status, reason=reason).encode()
    return Reply(status, page, "text/html", headers=dict(headers))


from .by_hand import build_dataset, main  # noqa: E402  (it imports the classes above)

__all__ = [
    "Behaviour",
    "Fault",
    "LateRows",
    "SeenRequest",
    "SignozEmulator",
    "build_dataset",
    "main",
]
