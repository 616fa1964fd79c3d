"""`SignozSource`: one poll of a SigNoz instance, with aggregation pushed into SigNoz."""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx

from rounds_bot.errors import SignozError
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.signoz.client import SignozClient, Traffic
from rounds_bot.sources.signoz.collector import Collector
from rounds_bot.sources.signoz.error_logs import ErrorLogsReader
from rounds_bot.sources.signoz.error_spans import ErrorSpansReader
from rounds_bot.sources.signoz.exception_groups import (
    ExceptionGroupsReader,
    ExceptionSettings,
    SqlPermission,
)
from rounds_bot.sources.signoz.grouped_rows import RowLimits
from rounds_bot.sources.signoz.times import NS_PER_MS, NS_PER_S, datetime_to_ns, ms_floor, ns_to_datetime
from rounds_bot.sources.signoz.versions import (
    EXCEPTIONS_API_SINCE,
    Capabilities,
    capabilities_of,
    format_version,
)

# listErrors and countErrors never return the last 30 s (SigNoz subtracts them from `end`).
EXCEPTIONS_END_BUFFER_NS = 30 * NS_PER_S


class SignozSource:
    """Reads exception groups, error spans and error logs of one window from SigNoz."""

    def __init__(
        self,
        url: str,
        api_key: str | None,
        *,
        timeout_seconds: float = 30.0,
        deadline_seconds: float = 300.0,
        max_attempts: int = 5,
        raw_row_cap: int = 20_000,
        raw_page_size: int = 1_000,
        list_page_size: int = 10_000,
        sample_batch_size: int = 400,
        detail_request_cap: int = 200,
        sql_group_cap: int = 50_000,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = SignozClient(
            url,
            api_key,
            timeout_seconds=timeout_seconds,
            max_attempts=max_attempts,
            transport=transport,
            sleep=sleep,
            clock=clock,
            wall_clock=wall_clock,
        )
        self.name = f"signoz:{urlsplit(self._client.base_url).netloc}"
        self._deadline_seconds = deadline_seconds
        self._exceptions = ExceptionSettings(
            page_size=list_page_size,
            sample_batch_size=sample_batch_size,
            detail_request_cap=detail_request_cap,
        )
        self._limits = RowLimits(
            raw_page_size=raw_page_size, raw_row_cap=raw_row_cap, sql_group_cap=sql_group_cap
        )
        self._wall_clock = wall_clock
        self._capabilities: Capabilities | None = None

    @property
    def base_url(self) -> str:
        return self._client.base_url

    @property
    def client(self) -> SignozClient:
        return self._client

    @property
    def traffic(self) -> Traffic:
        """Requests and bytes of the last poll (or check)."""
        return self._client.traffic

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> SignozSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def capabilities(self) -> Capabilities:
        """The APIs this SigNoz offers, read once from `GET /api/v1/version`."""
        if self._capabilities is None:
            version = self._client.version().version
            capabilities = capabilities_of(version)
            if not capabilities.exceptions_api:
                raise SignozError(
                    f"SigNoz {version} at {self.base_url} is too old: rounds needs "
                    f"{format_version(EXCEPTIONS_API_SINCE)} or later (the exceptions API)",
                    hint="upgrade SigNoz; v0.87 or later also gives error spans and logs",
                )
            self._capabilities = capabilities
        return self._capabilities

    def begin_round(self) -> None:
        self._client.begin_round(self._deadline_seconds)

    def poll(self, window: Window, known_group_ids: frozenset[str]) -> PollResult:
        self.begin_round()
        capabilities = self.capabilities()
        collector = Collector(known_group_ids)
        for note in capabilities.notes:
            collector.note(note)
        # Group counts are aggregates without per-occurrence ids, so re-reading the overlap would count it
        # twice: read from where the previous round stopped. Both ends sit on whole milliseconds, as v5
        # windows do, so consecutive rounds share no boundary millisecond.
        start_ns = ms_floor(datetime_to_ns(window.resume_from or window.start)) * NS_PER_MS
        end_ns = self._readable_end(ms_floor(datetime_to_ns(window.end)) * NS_PER_MS, collector)
        if end_ns <= start_ns:
            return self._result(collector, window, max(start_ns, end_ns))
        sql = SqlPermission()
        # the exceptions API includes `end`: ask for [start, end - 1 ns] so the window stays half-open
        ExceptionGroupsReader(
            self._client,
            self._exceptions,
            use_v5=capabilities.query_range_v5,
            method=capabilities.exceptions_method,
        ).read(start_ns, end_ns - 1, collector, sql)
        if capabilities.query_range_v5:
            ErrorSpansReader(self._client, self._limits).read(start_ns, end_ns, collector, sql)
            ErrorLogsReader(self._client, self._limits).read(start_ns, end_ns, collector, sql)
        return self._result(collector, window, end_ns)

    def _readable_end(self, end_ns: int, collector: Collector) -> int:
        """The window's end, moved back when it may fall in SigNoz's last 30 s by SigNoz's own clock
        (its `Date`): there listErrors and countErrors would quietly leave 30 s out.

        `Date` has whole seconds, so SigNoz's clock is known to one second: the end is moved back by up
        to that second silently (a round's window ends 30 s before now, so that is every round), and
        the report says so only when the window really ended inside the 30 s (a bot clock ahead of
        SigNoz's, or a window ending later than rounds plans one)."""
        server_now = self._client.server_now()
        now = server_now if server_now is not None else self._wall_clock()
        now_ns = ms_floor(int(now * NS_PER_S)) * NS_PER_MS
        limit = now_ns - EXCEPTIONS_END_BUFFER_NS - NS_PER_S
        if end_ns <= limit:
            return end_ns
        if end_ns > now_ns + NS_PER_S - EXCEPTIONS_END_BUFFER_NS:
            collector.note(
                "the window ends less than 30 s before SigNoz's own clock (its Date header); "
                "SigNoz's exceptions API leaves those seconds out, so this round reads up to "
                f"{ns_to_datetime(limit).isoformat()} and the next round reads from there"
            )
        return limit

    def _result(self, collector: Collector, window: Window, end_ns: int) -> PollResult:
        result = collector.result(self.traffic.requests)
        if end_ns < datetime_to_ns(window.end):
            return result.model_copy(update={"read_until": ns_to_datetime(end_ns)})
        return result
