"""What the telemetry says of one occurrence beyond its message: the request a failed span made or served, the
record an error log is, and the trace they belong to, as a table the issue shows under "Request" or "Log
record". Attribute names follow the OpenTelemetry semantic conventions, the current name first and the one it
replaced after (HTTP: 1.23; code: 1.30), so telemetry of either generation reads the same.

    request_rows(event)    span error: span kind and name, method, URL, route, peer or host, status, trace
    log_rows(event)        error log: logger, severity, the line logged, where it was logged, thread, trace
    other_attributes(...)  the occurrence's own attributes not shown otherwise (its instance values)
    before_the_error(event) error log: the records its trace (or service) logged just before it

Every value is untrusted (redacted) text and reaches Markdown as code (`render.markdown`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from rounds_bot.models import AttributeValue, ErrorEvent
from rounds_bot.render import markdown as md

#: attribute names by meaning, the current convention's first
METHOD = ("http.request.method", "http.method")
URL = ("url.full", "http.url")
ROUTE = ("http.route",)
PATH = ("url.path", "http.target")
STATUS = ("http.response.status_code", "http.status_code", "rpc.grpc.status_code")
PEER = ("server.address", "net.peer.name", "net.host.name")
PEER_PORT = ("server.port", "net.peer.port", "net.host.port")
CLIENT = ("client.address", "net.sock.peer.addr")
RPC = ("rpc.service", "rpc.method")
DB = ("db.system.name", "db.system", "db.operation.name", "db.operation", "db.namespace", "db.name")
LOGGER = ("logger.name", "log.logger", "otel.scope.name")
THREAD = ("thread.name",)
LOG_LINE = "log.body"
#: attributes of the resource (where the code ran) or shown elsewhere: not the occurrence's own values
_NOT_OWN_PREFIXES = (
    "service.", "deployment.", "host.", "telemetry.", "process.", "k8s.", "container.", "cloud.", "os.",
    "otel.", "device.", "faas.", "webengine.", "vcs.", "http.", "url.", "server.", "client.", "network.",
    "net.", "code.", "thread.", "user_agent.", "rpc.", "db.", "exception.", "rounds.",
)  # fmt: skip
_NOT_OWN = frozenset(("error.type", "error.code", LOG_LINE, "logger.name", "log.logger"))
#: own attributes shown at most, and characters of each value
OWN_ATTRIBUTES, VALUE_CHARS = 8, 120
ID_CHARS = 64


def request_rows(event: ErrorEvent) -> list[tuple[str, str]]:
    """The rows of a span error's "Request" table (label, Markdown), empty when the span says nothing."""
    attributes = event.attributes
    rows: list[tuple[str, str]] = []
    # the span's kind is the exporter's word as the backend stored it: untrusted text like any other value,
    # escaped and cut as long as one
    kind = f"{md.escape(event.span_kind, VALUE_CHARS)} span" if event.span_kind else "span"
    method = _first(attributes, METHOD)
    status = _first(attributes, STATUS)
    route = _first(attributes, ROUTE)
    if method or status or route or _first(attributes, RPC) or _first(attributes, DB):
        rows.append(("Span", f"{kind} in {md.escape(event.service)}"))
    if method:
        rows.append(("Method", _code(method)))
    url = _first(attributes, URL)
    if url:
        rows.append(("URL", _code(url)))
    if route:
        rows.append(("Route", _code(route)))
    path = _first(attributes, PATH)
    if path and not url and path != route:
        rows.append(("Path", _code(path)))
    peer = _peer(attributes, url)
    if peer:
        rows.append(("Server" if event.span_kind == "server" else "Peer", _code(peer)))
    client = _first(attributes, CLIENT)
    if client:
        rows.append(("Client", _code(client)))
    for key in (*RPC, *DB):
        value = _text(attributes.get(key))
        if value:
            rows.append((key, _code(value)))
    if status:
        rows.append(("Status", _code(status)))
    if rows:
        rows += trace_rows(event)
    return rows


def log_rows(event: ErrorEvent, logged_at: str | None) -> list[tuple[str, str]]:
    """The rows of an error log's "Log record" table; `logged_at` is where the code attributes put it (as
    Markdown, linked when mapped)."""
    attributes = event.attributes
    rows: list[tuple[str, str]] = []
    logger = _first(attributes, LOGGER)
    if logger:
        rows.append(("Logger", _code(logger)))
    if event.severity:
        rows.append(("Severity", _code(event.severity)))
    line = _text(attributes.get(LOG_LINE))
    if line:
        rows.append(("Logged line", _code(line)))
    if logged_at:
        rows.append(("Logged at", logged_at))
    thread = _first(attributes, THREAD)
    if thread:
        rows.append(("Thread", _code(thread)))
    return rows + trace_rows(event)


def before_the_error(event: ErrorEvent) -> str:
    """The "Before the error" block shown under an error log's table: its neighbouring records, oldest first,
    each with its time, severity and body; empty when the source kept none."""
    if not event.context:
        return ""
    where = "this trace and service" if event.trace_id else "this service"
    lines = [
        "### Before the error",
        "",
        f"What {where} logged in the minute before (times in UTC), oldest first:",
        "",
    ]
    for record in event.context:
        moment = record.timestamp.strftime("%H:%M:%S.%f")[:-3]
        severity = f" {md.escape(record.severity, 16)}" if record.severity.strip() else ""
        lines.append(f"- {moment}{severity} {md.code(record.body) if record.body.strip() else '(empty)'}")
    return "\n".join(lines)


def trace_rows(event: ErrorEvent) -> list[tuple[str, str]]:
    """The trace, span and parent span of an occurrence, when it was traced."""
    if not event.trace_id:
        return []
    rows = [("Trace", _code(event.trace_id[:ID_CHARS]))]
    if event.span_id:
        span = _code(event.span_id[:ID_CHARS])
        parent = f", parent {_code(event.parent_span_id[:ID_CHARS])}" if event.parent_span_id else ""
        rows.append(("Span id", f"{span}{parent}"))
    return rows


def other_attributes(event: ErrorEvent) -> str:
    """The occurrence's own attributes (not the resource's, not shown elsewhere) as `name=value` code spans:
    the values this instance had, which the title leaves as placeholders."""
    own = [
        (key, value)
        for key, value in sorted(event.attributes.items())
        if key not in _NOT_OWN and not key.startswith(_NOT_OWN_PREFIXES)
    ]
    shown = ", ".join(str(_code(f"{key}={value}")) for key, value in own[:OWN_ATTRIBUTES])
    more = f" and {len(own) - OWN_ATTRIBUTES} more" if len(own) > OWN_ATTRIBUTES else ""
    return shown + more


def table(rows: list[tuple[str, str]]) -> str:
    """Rows as a two-column Markdown table (the labels are rounds' own words)."""
    if not rows:
        return ""
    lines = ["| | |", "|---|---|", *(f"| {label} | {value} |" for label, value in rows)]
    return "\n".join(lines)


def _peer(attributes: dict[str, AttributeValue], url: str | None) -> str | None:
    host = _first(attributes, PEER)
    if not host and url:
        try:
            host = urlsplit(url).hostname
        except ValueError:  # not a URL after all (a redacted one)
            host = None
    if not host:
        return None
    port = _first(attributes, PEER_PORT)
    return f"{host}:{port}" if port else host


def _first(attributes: dict[str, AttributeValue], keys: tuple[str, ...]) -> str | None:
    for key in keys:  # a loop, not a generator: a round asks this a dozen times for each of its issues
        if text := _text(attributes.get(key)):
            return text
    return None


def _text(value: AttributeValue | None) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    return text or None


def _code(text: str) -> str:
    """A value as a table cell's code span (`md.span`: most are an occurrence's own, ids and URLs)."""
    shown = text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"
    return md.span(shown, in_table=True)
