"""An httpx client for the SigNoz HTTP API: retries, a per-round deadline, clear errors.

Every failure leaves this module as a `SignozError` whose message names the URL and what went
wrong, and whose hint says what to do (`failures`). Transient failures (timeouts, broken
connections, 429, 5xx, bodies cut short) are retried with exponential backoff and jitter,
honouring `Retry-After`, but never past the round's deadline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ValidationError
from tenacity import RetryCallState, Retrying, retry_if_exception_type, wait_exponential_jitter

from rounds_bot import __version__
from rounds_bot.errors import SignozError
from rounds_bot.sources.signoz.failures import (
    REDIRECT_STATUSES,
    RETRIED_STATUSES,
    URL_HINT,
    SignozHTTPError,
    TransientFailure,
    connect_hint,
    html_page,
    is_clickhouse_error,
    is_transient_clickhouse_error,
    is_unrenderable_answer,
    redirect,
    refusal,
    transient_status,
)
from rounds_bot.sources.signoz.query_range_v4 import QueryRangeV4Envelope, v4_can_run, v4_request
from rounds_bot.sources.signoz.versions import QUERY_RANGE_V4, QUERY_RANGE_V5
from rounds_bot.sources.signoz.wire import (
    ErrorBody,
    ErrorGroupRow,
    ErrorWithSpan,
    QueryRangeData,
    QueryRangeEnvelope,
    VersionInfo,
    looks_like_html,
    parse_error_body,
)

API_KEY_HEADER = "SIGNOZ-API-KEY"

ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass
class Traffic:
    """What one round cost: HTTP attempts (retries included) and bytes of bodies both ways."""

    requests: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0


class SignozClient:
    """The endpoints rounds reads. One instance per SigNoz; `begin_round` starts the deadline."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        timeout_seconds: float = 30.0,
        max_attempts: int = 5,
        backoff_seconds: float = 0.5,
        max_backoff_seconds: float = 10.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.base_url = normalise_base_url(base_url)
        self._wall_clock = wall_clock
        self._server_date: tuple[float, float] | None = None
        self._timeout = timeout_seconds
        self._max_attempts = max_attempts
        self._backoff = wait_exponential_jitter(
            multiplier=backoff_seconds, max=max_backoff_seconds, jitter=backoff_seconds
        )
        self._sleep = sleep
        self._clock = clock
        self._deadline: float | None = None
        self._deadline_seconds = 0.0
        self.traffic = Traffic()
        headers = {"Accept": "application/json", "User-Agent": f"rounds/{__version__}"}
        self._api_key_set = bool(api_key)
        if api_key:
            headers[API_KEY_HEADER] = api_key
        self.query_range_path: str | None = QUERY_RANGE_V5
        self._http = httpx.Client(
            base_url=self.base_url, headers=headers, transport=transport, follow_redirects=False
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> SignozClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def begin_round(self, deadline_seconds: float) -> None:
        """Reset the traffic counters; no request may start after `deadline_seconds` from now."""
        self._deadline_seconds = deadline_seconds
        self._deadline = self._clock() + deadline_seconds
        self.traffic = Traffic()

    # -- endpoints ---------------------------------------------------------------------------

    def version(self) -> VersionInfo:
        return self._model(VersionInfo, self._call("GET", "/api/v1/version"), "/api/v1/version")

    def count_errors(self, start_ns: int, end_ns: int, *, method: str = "POST") -> int:
        """Exception groups in [start, end] (SigNoz includes `end`). `method` is the version's:
        GET with query parameters before v0.18, POST with a JSON body since."""
        body: dict[str, Any] = {"start": str(start_ns), "end": str(end_ns), "tags": []}
        count = self._exceptions_call(method, "/api/v1/countErrors", body)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise SignozError(
                f"SigNoz answered /api/v1/countErrors with {count!r} instead of a group count",
                hint="check that SIGNOZ_API_URL points at SigNoz",
            )
        return count

    def list_errors(
        self, start_ns: int, end_ns: int, *, limit: int, offset: int = 0, method: str = "POST"
    ) -> list[ErrorGroupRow]:
        """One page of exception groups, oldest first seen first (a stable order for paging)."""
        body = {
            "start": str(start_ns),
            "end": str(end_ns),
            "limit": limit,
            "offset": offset,
            "order": "ascending",
            "orderParam": "firstSeen",
            "tags": [],
        }
        rows = self._exceptions_call(method, "/api/v1/listErrors", body)
        if rows is None:  # SigNoz's nil slice: no group in the window
            return []
        if not isinstance(rows, list):
            raise SignozError(
                f"SigNoz answered /api/v1/listErrors with {type(rows).__name__} instead of a list",
                hint="check that SIGNOZ_API_URL points at SigNoz",
            )
        return [self._model(ErrorGroupRow, row, "/api/v1/listErrors") for row in rows]

    def _exceptions_call(self, method: str, path: str, body: dict[str, Any]) -> Any:
        if method == "GET":
            params = {key: str(value) for key, value in body.items() if key != "tags"}
            return self._call("GET", path, params=params)
        return self._call("POST", path, json_body=body)

    def server_now(self) -> float | None:
        """SigNoz's own clock (Unix seconds) from the `Date` of its last answer, moved on by the
        time elapsed here since; None before any answer carried one."""
        if self._server_date is None:
            return None
        date, seen_at = self._server_date
        return date + (self._wall_clock() - seen_at)

    def error_from_group_id(self, group_id: str, timestamp_ns: int) -> ErrorWithSpan | None:
        """The occurrence of a group at exactly `timestamp_ns`; None when SigNoz has none."""
        path = "/api/v1/errorFromGroupID"
        params = {"groupID": group_id, "timestamp": str(timestamp_ns)}
        try:
            payload = self._call("GET", path, params=params)
        except SignozHTTPError as error:
            if error.status == 404:
                return None
            raise
        return self._model(ErrorWithSpan, payload, path)

    def use_query_range(self, path: str | None) -> None:
        """Where this SigNoz runs query_range, from its version (`versions.query_range_path_of`)."""
        self.query_range_path = path

    def query_range(self, request: dict[str, Any]) -> QueryRangeData:
        """A v5 request (`queries.query_range_request`), run where this SigNoz runs it: on
        /api/v5/query_range, or its clickhouse_sql on /api/v4/query_range before v0.87. A router's
        404 for v5 moves this client to v4 for the rest of its life (a SigNoz that reported no
        version, or a proxy that serves only the older routes)."""
        if self.query_range_path == QUERY_RANGE_V4:
            return self._query_range_v4(request)
        try:
            return self._query_range_v5(request)
        except SignozHTTPError as error:
            if error.status not in (404, 405) or error.body.code or not v4_can_run(request):
                raise
            self.query_range_path = QUERY_RANGE_V4
            return self._query_range_v4(request)

    def _query_range_v5(self, request: dict[str, Any]) -> QueryRangeData:
        path = QUERY_RANGE_V5
        try:
            payload = self._call("POST", path, json_body=request)
        except SignozHTTPError as error:
            raise _without_route(error, self.base_url, path) from error
        envelope = self._model(QueryRangeEnvelope, payload, path)
        if envelope.status != "success":
            raise SignozError(
                f"SigNoz answered {path} with status {envelope.status!r}",
                hint="report the SigNoz version and this message",
            )
        return envelope.data

    def _query_range_v4(self, request: dict[str, Any]) -> QueryRangeData:
        path = QUERY_RANGE_V4
        try:
            payload = self._call("POST", path, json_body=v4_request(request))
        except SignozHTTPError as error:
            raise _without_route(error, self.base_url, path) from error
        envelope = self._model(QueryRangeV4Envelope, payload, path)
        if envelope.status != "success":
            raise SignozError(
                f"SigNoz answered {path} with status {envelope.status!r}",
                hint="report the SigNoz version and this message",
            )
        return envelope.data.as_raw()

    # -- transport, retries and error translation ----------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: dict[str, str] | None = None,
    ) -> Any:
        content = None if json_body is None else json.dumps(json_body).encode()
        retrying = Retrying(
            retry=retry_if_exception_type(TransientFailure),
            wait=self._wait,
            stop=self._should_stop,
            sleep=self._sleep,
            reraise=True,
        )
        try:
            return retrying(self._attempt, method, path, content, params)
        except TransientFailure as failure:
            attempts = retrying.statistics.get("attempt_number", 1)
            raise SignozError(
                f"{failure.args[0]}; gave up after {attempts} attempt(s)", hint=failure.hint
            ) from failure

    def _wait(self, retry_state: RetryCallState) -> float:
        failure = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(failure, TransientFailure) and failure.retry_after is not None:
            return max(0.0, failure.retry_after)
        return self._backoff(retry_state)

    def _should_stop(self, retry_state: RetryCallState) -> bool:
        if retry_state.attempt_number >= self._max_attempts:
            return True
        return self._remaining() - retry_state.upcoming_sleep <= 0

    def _remaining(self) -> float:
        if self._deadline is None:
            return float("inf")
        return self._deadline - self._clock()

    def _attempt(self, method: str, path: str, content: bytes | None, params: dict[str, str] | None) -> Any:
        remaining = self._remaining()
        if remaining <= 0:
            raise SignozError(
                f"the round's SigNoz deadline of {self._deadline_seconds:.0f} s ran out before "
                f"{method} {path} ({self.traffic.requests} requests made)",
                hint="raise SIGNOZ_DEADLINE_SECONDS, lower SIGNOZ_MAX_WINDOW_HOURS, or check why SigNoz "
                "is slow",
            )
        timeout = min(self._timeout, remaining)
        headers = {"Content-Type": "application/json"} if content is not None else None
        self.traffic.requests += 1
        self.traffic.bytes_sent += len(content or b"")
        try:
            response = self._http.request(
                method, path, content=content, params=params, headers=headers, timeout=timeout
            )
        except httpx.TimeoutException as error:
            limited = " (what was left of the round's SigNoz deadline)" if timeout < self._timeout else ""
            raise TransientFailure(
                f"SigNoz at {self.base_url} did not answer {method} {path} within {timeout:.1f} s"
                f"{limited} ({type(error).__name__})",
                hint="check that SigNoz is healthy (GET /api/v1/health); for slow queries raise "
                "SIGNOZ_TIMEOUT_SECONDS (and SIGNOZ_DEADLINE_SECONDS) or lower SIGNOZ_CHUNK_MINUTES",
            ) from error
        except httpx.ConnectError as error:
            raise TransientFailure(
                f"cannot reach SigNoz at {self.base_url}: {error}", hint=connect_hint(self.base_url)
            ) from error
        except httpx.TransportError as error:
            raise TransientFailure(
                f"the connection to SigNoz at {self.base_url} broke during {method} {path}, "
                f"so the body was cut short: {error}",
                hint="check any proxy between rounds and SigNoz",
            ) from error
        self.traffic.bytes_received += len(response.content)
        self._note_server_date(response.headers.get("date"))
        return self._read(response, method, path)

    def _note_server_date(self, value: str | None) -> None:
        try:
            moment = parsedate_to_datetime(value) if value else None
        except (TypeError, ValueError):
            moment = None
        if moment is not None:
            self._server_date = (moment.timestamp(), self._wall_clock())

    def _read(self, response: httpx.Response, method: str, path: str) -> Any:
        status = response.status_code
        text = response.text
        content_type = response.headers.get("content-type", "")
        if status in REDIRECT_STATUSES:
            raise redirect(response, self.base_url, method, path)
        page = html_page(response) if looks_like_html(content_type, text) else None
        deterministic = is_clickhouse_error(status, text) or is_unrenderable_answer(status, text)
        if (status in RETRIED_STATUSES and not deterministic) or is_transient_clickhouse_error(status, text):
            raise transient_status(response, method, path, page=page)
        if page is not None:
            message = (
                f"{self.base_url}{path} answered an HTML page (HTTP {status}{page}), not SigNoz's JSON "
                "API: the URL points at a web page, a proxy or the wrong port"
            )
            if status in (404, 405):  # a proxy that routes no such path: query_range then tries v4
                raise SignozHTTPError(message, status=status, body=ErrorBody(), hint=URL_HINT)
            raise SignozError(message, hint=URL_HINT)
        if status >= 300:
            body = parse_error_body(text)
            raise refusal(self.base_url, status, body, method, path, api_key_set=self._api_key_set)
        try:
            return json.loads(text)
        except ValueError as error:
            raise TransientFailure(
                f"SigNoz answered {method} {path} with a body that is not valid JSON "
                f"({len(response.content)} bytes, {error}; it starts {text[:60]!r})",
                hint="the body may have been cut short by a proxy or a crashed query service",
            ) from error

    def _model(self, model: type[ModelT], payload: Any, path: str) -> ModelT:
        try:
            return model.model_validate(payload)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the body"
            raise SignozError(
                f"SigNoz answered {path} with an unexpected shape: {where}: {first['msg']}",
                hint="check that SIGNOZ_API_URL points at SigNoz, and report its version if it does",
            ) from error


def _without_route(error: SignozHTTPError, base_url: str, path: str) -> SignozHTTPError:
    """A router's 404/405 (no SigNoz error body) as a SigNoz without `path`; from v0.131 a 404 with
    SigNoz's body is a ClickHouse error (unknown table or database) of a route that does exist."""
    if error.status not in (404, 405) or error.body.code:
        return error
    return SignozHTTPError(
        f"SigNoz at {base_url} has no {path} ({error.status})",
        status=error.status,
        body=error.body,
        hint="upgrade SigNoz to v0.60 or later to read error spans and logs (v0.87 or later serves "
        "/api/v5/query_range; v0.60 to v0.86 run the same SQL on /api/v4/query_range)",
    )


def normalise_base_url(url: str) -> str:
    """`http://host:8080` from what a user typed; SignozError when it cannot be a URL."""
    text = url.strip().rstrip("/")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SignozError(f"SIGNOZ_API_URL {url!r} is not an http(s) URL", hint=URL_HINT)
    return text
