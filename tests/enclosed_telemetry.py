"""OTLP/JSON of requests whose one error several spans recorded, as instrumentation writes them: for the rules
that count such an error once, read from a file (`round/propagated.py`) or from SigNoz
(`sources/signoz/enclosed.py`).

    line("cart", go_request(n, cart, "load cart"))   one export line of a service's spans
    go_request(n, cart, query, start=T0)              a Go error wrapped and recorded at each layer
    python_request(n, cart, start=T0)                 a Python exception recorded by the two spans it escaped
    dotnet_request(n, code, start=T0)                 SqlClient's exception inner to EF Core's, two spans
    server_span(trace, span, at, name)                a server span's 5xx status, without an exception event
    logged_line(service, span, body, **attributes)    an error log written on a span
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
NO_ROWS = "sql: no rows in result set"


def span(
    trace: str, span: int, parent: int | None, at: datetime, kind: str, message: str, stacktrace: str = ""
) -> dict[str, object]:
    """An internal span in error with one exception event (`kind` is the exception's type)."""
    nanos = int(at.timestamp() * 1e9)
    attributes = [
        {"key": "exception.type", "value": {"stringValue": kind}},
        {"key": "exception.message", "value": {"stringValue": message}},
    ]
    if stacktrace:
        attributes.append({"key": "exception.stacktrace", "value": {"stringValue": stacktrace}})
    return {
        "traceId": trace,
        "spanId": f"{span:016x}",
        **({"parentSpanId": f"{parent:016x}"} if parent is not None else {}),
        "name": f"span {span}",
        "kind": 1,
        "startTimeUnixNano": str(nanos),
        "endTimeUnixNano": str(nanos + 1_000_000),
        "status": {"code": 2, "message": message},
        "events": [{"name": "exception", "timeUnixNano": str(nanos), "attributes": attributes}],
    }


def line(service: str, spans: list[dict[str, object]]) -> str:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]})


def logged_line(
    service: str, span: dict[str, object], body: str, severity: int = 17, event: str = "", **attributes: str
) -> str:
    """A log record the span's code wrote (an SDK's log bridge: the span's trace and span ids); `event`: the
    record's event name (an instrumentation's exception event, `exception`)."""
    record = {
        "timeUnixNano": span["endTimeUnixNano"],
        "severityNumber": severity,
        "severityText": {17: "ERROR", 13: "WARN"}.get(severity, ""),
        **({"body": {"stringValue": body}} if body else {}),
        **({"eventName": event} if event else {}),
        "attributes": [{"key": key, "value": {"stringValue": value}} for key, value in attributes.items()],
        "traceId": span["traceId"],
        "spanId": span["spanId"],
    }
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return json.dumps({"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": [record]}]}]})


def go_request(n: int, cart: int, query: str, start: datetime = T0) -> list[dict[str, object]]:
    """One failed request of a Go service: the query's span, the service's, the handler's (the root)."""
    trace, at = f"{n + 1:032x}", start + timedelta(seconds=n)
    wrapped = f"{query} {cart}: {NO_ROWS}"
    return [
        span(trace, 3 * n + 1, 3 * n + 2, at, "*errors.errorString", NO_ROWS),
        span(trace, 3 * n + 2, 3 * n + 3, at, "*fmt.wrapError", wrapped),
        span(trace, 3 * n + 3, None, at, "*fmt.wrapError", f"handle request: {wrapped}"),
    ]


def python_request(n: int, cart: int, start: datetime = T0) -> list[dict[str, object]]:
    """A KeyError raised in `load`'s span and recorded again by its parent's, its traceback grown."""
    trace, at = f"{n + 1:032x}", start + timedelta(seconds=n)
    raised = '  File "/srv/shop/carts.py", line 15, in load\n    raise KeyError(cart_id)\n'
    inner = 'Traceback (most recent call last):\n  File "/srv/shop/tracing.py", line 9, in span\n    yield\n'
    outer = inner + '  File "/srv/shop/views.py", line 21, in checkout\n    return load(cart_id)\n'
    error = f"KeyError: 'cart {cart}'\n"
    message = f"'cart {cart}'"
    return [
        span(trace, 3 * n + 1, 3 * n + 2, at, "KeyError", message, inner + raised + error),
        span(trace, 3 * n + 2, None, at, "KeyError", message, outer + raised + error),
    ]


#: SqlClient's message for a duplicate key (error 2601)
DUPLICATE_KEY = (
    "Cannot insert duplicate key row in object 'dbo.Orders' with unique index 'IX_Orders_Number'. "
    "The duplicate key value is (42)."
)


def dotnet_request(n: int, code: str, start: datetime = T0) -> list[dict[str, object]]:
    """A .NET service's failed insert: SqlClient's span records its `SqlException`, and the service's span
    EF Core's `DbUpdateException` over it, whose `ToString()` prints the `SqlException` as its inner
    exception, with `code` (` (0x80131904)`, its `HResult`, as `ExternalException` prints it; or "")."""
    trace, at = f"{n + 1:032x}", start + timedelta(seconds=n)
    inner = (
        f"Microsoft.Data.SqlClient.SqlException{code}: {DUPLICATE_KEY}\n"
        "   at Microsoft.Data.SqlClient.SqlConnection.OnError(SqlException exception, "
        "Boolean breakConnection, Action`1 wrapCloseInAction)\n"
        "   at Microsoft.Data.SqlClient.SqlCommand.ExecuteDbDataReaderAsync(CommandBehavior behavior, "
        "CancellationToken cancellationToken)\n"
    )
    saving = "An error occurred while saving the entity changes. See the inner exception for details."
    outer = (
        f"Microsoft.EntityFrameworkCore.DbUpdateException: {saving}\n ---> {inner}"
        "   --- End of inner exception stack trace ---\n"
        "   at Microsoft.EntityFrameworkCore.DbContext.SaveChangesAsync(Boolean acceptAllChangesOnSuccess, "
        "CancellationToken cancellationToken)\n"
        "   at Acme.Shop.Orders.OrderService.CreateAsync(OrderDto dto) "
        "in /src/Acme.Shop/Orders/OrderService.cs:line 77\n"
    )
    return [
        span(trace, 2 * n + 1, None, at, "Microsoft.EntityFrameworkCore.DbUpdateException", saving, outer),
        span(trace, 2 * n + 2, 2 * n + 1, at, "Microsoft.Data.SqlClient.SqlException", DUPLICATE_KEY, inner),
    ]


def server_span(trace: str, span: int, at: datetime, name: str) -> dict[str, object]:
    """An HTTP server span that answered 500: instrumentation sets its error status, with no description and
    no exception event (otelhttp, the Java agent, for a 5xx the handler returned)."""
    nanos = int(at.timestamp() * 1e9)
    return {
        "traceId": trace,
        "spanId": f"{span:016x}",
        "name": name,
        "kind": 2,
        "startTimeUnixNano": str(nanos),
        "endTimeUnixNano": str(nanos + 2_000_000),
        "attributes": [{"key": "http.response.status_code", "value": {"intValue": "500"}}],
        "status": {"code": 2},
    }
