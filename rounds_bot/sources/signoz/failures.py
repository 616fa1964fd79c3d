"""What a failed SigNoz request means, and what to do about it: the errors the client raises.

Every failure leaves the client as a `SignozError` whose message names the URL and what went
wrong, and whose hint says what to check or change. `TransientFailure` marks the ones worth
another attempt (timeouts, broken connections, 429, 5xx that are not ClickHouse's own errors,
bodies cut short); `SignozHTTPError` carries the status and SigNoz's error body of a refusal.
"""

from __future__ import annotations

import html
import re
import time
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin, urlsplit

import httpx

from rounds_bot.errors import SignozError
from rounds_bot.sources.signoz.wire import ErrorBody, parse_error_body

RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

URL_HINT = (
    "set SIGNOZ_API_URL to the SigNoz base URL with no path: http://<host>:8080 for SigNoz "
    "v0.76 and later (one container serves UI and API), http://<host>:3301 for older installs "
    "(the frontend that proxies /api), or https://<instance>.signoz.cloud"
)
KEY_HINT = (
    "set SIGNOZ_API_KEY to a key from Settings → Service Accounts → Keys (older SigNoz: "
    "Settings → API Keys); it is sent as the SIGNOZ-API-KEY header, which community builds "
    "before v0.85 ignore"
)
ROLE_HINT = (
    "give the key's service account the Viewer role or higher; clickhouse_sql queries also "
    "need the clickhouse_sql grant"
)
REPORT_HINT = "report the SigNoz version and this message"


def connect_hint(base_url: str) -> str:
    """What to check when nothing answers at `base_url`."""
    return (
        f"check that SigNoz is running and that this machine can reach {base_url} (the host name, "
        f"the port, a firewall, VPN or proxy in between: try `curl {base_url}/api/v1/health`); " + URL_HINT
    )


class SignozHTTPError(SignozError):
    """SigNoz answered with an HTTP error status; `status` and `body` say which."""

    def __init__(self, message: str, *, status: int, body: ErrorBody, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.status = status
        self.body = body


class UnrenderableAnswer(SignozHTTPError):
    """SigNoz ran the query but could not write its answer as JSON: a row holds a NaN or infinite number
    (`is_unrenderable_answer`). The same rows fail the same way, so it is not retried."""


class TransientFailure(SignozError):
    """A failure worth another attempt; `retry_after` is the server's own wish, in seconds."""

    def __init__(self, message: str, *, hint: str | None = None, retry_after: float | None = None):
        super().__init__(message, hint=hint)
        self.retry_after = retry_after


def transient_status(
    response: httpx.Response, method: str, path: str, *, page: str | None = None
) -> TransientFailure:
    """A 429 or 5xx worth retrying, with the wait SigNoz asked for (Retry-After, or its body's delay).
    `page`: the answer was an HTML page, summarised by `html_page` instead of pasted."""
    body = ErrorBody() if page is not None else parse_error_body(response.text)
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if retry_after is None:
        retry_after = body.retry_delay_seconds
    what = "rate-limited" if response.status_code == 429 else "failed"
    if is_transient_clickhouse_error(response.status_code, response.text):
        return TransientFailure(
            f"SigNoz's ClickHouse was too busy for {method} {path} (HTTP {response.status_code}"
            f"{describe(body)})",
            hint="ClickHouse ran out of memory, time or query slots; rounds retries with backoff, and "
            "the next round reads this stream again (a smaller SIGNOZ_CHUNK_MINUTES makes queries lighter)",
            retry_after=retry_after,
        )
    if page is not None:
        return TransientFailure(
            f"SigNoz {what} {method} {path} (HTTP {response.status_code}: an HTML page{page})",
            hint="a proxy in front of SigNoz answered instead of SigNoz: check that SigNoz is up behind it "
            "and that the proxy forwards /api/ to SigNoz; rounds retries with backoff",
            retry_after=retry_after,
        )
    return TransientFailure(
        f"SigNoz {what} {method} {path} (HTTP {response.status_code}{describe(body)})",
        hint="SigNoz or its ClickHouse is overloaded or down; rounds retries with backoff",
        retry_after=retry_after,
    )


_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.I | re.S)


def html_page(response: httpx.Response) -> str:
    """What an HTML answer says about itself, in one line: `, server nginx/1.25.3, title "502 Bad
    Gateway"` (empty when it names neither), never the page itself."""
    said = ""
    server = " ".join(response.headers.get("server", "").split())[:60]
    if server:
        said += f", server {server}"
    found = _TITLE.search(response.text[:20_000])
    title = " ".join(html.unescape(found.group(1)).split())[:80] if found else ""
    if title:
        said += f', title "{title}"'
    return said


def redirect(response: httpx.Response, base_url: str, method: str, path: str) -> SignozError:
    """A 3xx: rounds follows no redirect (it would resend the key), so SIGNOZ_API_URL should name where
    it points."""
    status = response.status_code
    location = response.headers.get("location", "").strip()
    if not location:
        return SignozError(
            f"{base_url} redirects {method} {path} (HTTP {status}) without saying where (no Location)",
            hint=URL_HINT,
        )
    target = urljoin(f"{base_url}{path}", location)
    parts = urlsplit(target)
    prefix = parts.path[: parts.path.find("/api/")] if "/api/" in parts.path else parts.path.rstrip("/")
    suggested = f"{parts.scheme}://{parts.netloc}{prefix}"
    return SignozError(
        f"{base_url} redirects {method} {path} to {location} (HTTP {status}); rounds follows no redirect",
        hint=f"set SIGNOZ_API_URL to where it points: {suggested}",
    )


def refusal(
    base_url: str, status: int, body: ErrorBody, method: str, path: str, *, api_key_set: bool = True
) -> SignozHTTPError:
    """A status SigNoz will answer again the same way, with what to do about it."""
    said = describe(body)
    if status in (401, 403) and not api_key_set:
        message = (
            f"SigNoz at {base_url} needs an API key for {path}, and no SIGNOZ_API_KEY is set ({status}{said})"
        )
        hint = KEY_HINT
    elif status == 401:
        message = f"SigNoz at {base_url} refused the API key on {path} (401{said})"
        hint = KEY_HINT
    elif status == 403:
        message = f"SigNoz at {base_url} forbids {path} for this API key (403{said})"
        hint = ROLE_HINT
    elif status == 400:
        message = f"SigNoz rejected {method} {path} as invalid (400{said})"
        hint = (
            f"SigNoz's documentation for this error: {body.url}"
            if body.url
            else "this SigNoz version may not accept rounds' query; report the message and the SigNoz version"
        )
    elif status == 404 and body.code:
        # SigNoz's own not-found (from v0.131 also ClickHouse's unknown table or database)
        message = f"SigNoz at {base_url} answered {method} {path} with not found (404{said})"
        hint = "the query names what this SigNoz's ClickHouse lacks; report the SigNoz version"
    elif status == 404:
        message = f"SigNoz at {base_url} has no {path} (404{said})"
        hint = URL_HINT
    elif status == 422:
        # RespondError `exec`: how /api/v1/countErrors answers a query ClickHouse failed
        message = f"SigNoz could not run the query for {method} {path} (HTTP 422{said})"
        hint = (
            "a 422 is not retried: SigNoz's query-service and ClickHouse logs name the failed query; "
            + REPORT_HINT
        )
    elif is_unrenderable_answer(status, body.message):
        return UnrenderableAnswer(
            f"SigNoz could not write its answer to {method} {path}: a row holds a NaN or infinite "
            f"number (HTTP {status}{said})",
            status=status,
            body=body,
            hint="the collector stores such a number as it is; rounds reads those rows with named "
            "fields only, or leaves them out where SigNoz cannot select fields",
        )
    elif is_clickhouse_error(status, body.message):
        message = f"ClickHouse failed the query SigNoz ran for {method} {path} (HTTP {status}{said})"
        hint = (
            "the query itself is wrong for this SigNoz's ClickHouse schema, so it is not retried; "
            + REPORT_HINT
        )
    else:
        message = f"SigNoz could not answer {method} {path} (HTTP {status}{said})"
        hint = "check SigNoz's query-service logs for this request"
    return SignozHTTPError(message, status=status, body=body, hint=hint)


_CLICKHOUSE_ERROR = re.compile(r"\bcode: \d+, message: |DB::Exception")
_CLICKHOUSE_CODE = re.compile(r"\bcode: (\d+), message: |DB::Exception: .*?\(([A-Z_]+)\)")

# ClickHouse errors that say the server was busy, not that the query is wrong: MEMORY_LIMIT_EXCEEDED
# (241), TOO_MANY_SIMULTANEOUS_QUERIES (202), TIMEOUT_EXCEEDED (159), SOCKET_TIMEOUT (209),
# NETWORK_ERROR (210). SigNoz passes them through as a 500 whose message is ClickHouse's own text: before
# v0.131 for every ClickHouse error, and since then for every code its telemetry store does not map
# (`pkg/telemetrystore/clickhousetelemetrystore/provider.go`: castError and clickHouseExceptionWrappers
# map syntax, unknown table or identifier and argument errors only). countErrors answers them with 422.
TRANSIENT_CLICKHOUSE_CODES = frozenset({159, 202, 209, 210, 241})
_TRANSIENT_CLICKHOUSE_NAMES = frozenset(
    {
        "TIMEOUT_EXCEEDED",
        "TOO_MANY_SIMULTANEOUS_QUERIES",
        "SOCKET_TIMEOUT",
        "NETWORK_ERROR",
        "MEMORY_LIMIT_EXCEEDED",
    }
)


def is_transient_clickhouse_error(status: int, text: str) -> bool:
    """A 500 or 422 whose body is a ClickHouse error of a busy server: worth another attempt."""
    if status not in (422, 500):
        return False
    for found in _CLICKHOUSE_CODE.finditer(text):
        code, name = found.groups()
        if (code and int(code) in TRANSIENT_CLICKHOUSE_CODES) or name in _TRANSIENT_CLICKHOUSE_NAMES:
            return True
    return False


# SigNoz renders an answer with jsoniter's standard-library configuration (pkg/http/render/render.go),
# whose float encoder refuses NaN and infinities (json-iterator/go stream_float.go WriteFloat64:
# `unsupported value: %f`, Go's %f of them being NaN, +Inf, -Inf); render.Error answers it 500
# internal/unknown, after any field names jsoniter puts before the text.
_UNRENDERABLE = re.compile(r"unsupported value: (?:NaN|[+-]Inf)\b")


def is_unrenderable_answer(status: int, text: str) -> bool:
    """A 500 saying SigNoz could not write a NaN or infinite number of its answer as JSON."""
    return status == 500 and _UNRENDERABLE.search(text) is not None


def is_clickhouse_error(status: int, text: str) -> bool:
    """A 500 whose body is ClickHouse's own error (`code: 62, message: ...`) about the query itself:
    sending it again fails the same way (SigNoz v0.87-v0.130 answer 500 for every ClickHouse error).
    A busy server's error (`is_transient_clickhouse_error`) is not one."""
    return (
        status == 500
        and _CLICKHOUSE_ERROR.search(text) is not None
        and not is_transient_clickhouse_error(status, text)
    )


def describe(body: ErrorBody) -> str:
    """` code: message` from SigNoz's error body, or nothing."""
    parts = [part for part in (body.code, body.message) if part]
    return f" {': '.join(parts)}" if parts else ""


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())
