"""`SignozSource`: one poll of a SigNoz instance, with aggregation pushed into SigNoz."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from rounds_bot.errors import SignozError
from rounds_bot.models import ErrorEvent
from rounds_bot.settings.error_codes import DEFAULT_ERROR_CODE_ATTRIBUTES
from rounds_bot.sources.base import GroupCount, PollResult, SkippedRecord, Window
from rounds_bot.sources.signoz.client import SignozClient, Traffic, normalise_base_url
from rounds_bot.sources.signoz.collector import Collector
from rounds_bot.sources.signoz.counting import (
    Counted,
    SignozState,
    StreamState,
    count_new_rows,
    read_start,
)
from rounds_bot.sources.signoz.error_logs import ErrorLogsReader, LogsSchema
from rounds_bot.sources.signoz.error_spans import ErrorSpansReader
from rounds_bot.sources.signoz.exception_groups import ExceptionGroupsReader, ExceptionSettings
from rounds_bot.sources.signoz.grouped_rows import RowLimits
from rounds_bot.sources.signoz.links import UiLinks
from rounds_bot.sources.signoz.sql_permission import SqlPermission
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
        overlap_seconds: float = 900.0,
        max_window_seconds: float = 86_400.0,
        chunk_seconds: float = 21_600.0,
        ui_url: str | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        error_code_attributes: tuple[str, ...] = DEFAULT_ERROR_CODE_ATTRIBUTES,
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
        self._overlap_ns = int(overlap_seconds * NS_PER_S)
        self._max_window_ns = max(int(max_window_seconds * NS_PER_S), NS_PER_MS)
        self._chunk_ns = max(int(chunk_seconds * NS_PER_S), NS_PER_MS)
        self._logs_schema = LogsSchema()
        self._error_code_attributes = error_code_attributes
        self._links = UiLinks(normalise_base_url(ui_url) if ui_url else self._client.base_url)

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
                    hint="upgrade SigNoz; v0.60 or later also gives error spans and logs",
                )
            self._capabilities = capabilities
            self._client.use_query_range(capabilities.query_range_path)
        return self._capabilities

    def begin_round(self) -> None:
        self._client.begin_round(self._deadline_seconds)

    def poll(self, window: Window, known_group_ids: frozenset[str]) -> PollResult:
        """Each stream read from its own cursor, alone: one that fails is reported and read again next
        round while the others are counted. Raises SignozError when SigNoz cannot be read at all."""
        self.begin_round()
        capabilities = self.capabilities()
        notes = list(capabilities.notes)
        end_ns = self._readable_end(ms_floor(datetime_to_ns(window.end)) * NS_PER_MS, notes)
        state = SignozState.of(window.source_state)
        sql = SqlPermission()
        outcomes = [
            self._read_stream(stream, state, window, end_ns, known_group_ids, sql)
            for stream in self.streams(capabilities, state, window)
        ]
        failed = [outcome for outcome in outcomes if outcome.error is not None]
        if failed and len(failed) == len(outcomes):
            error = failed[0].error
            assert error is not None
            raise error
        return self._result(outcomes, notes, window)

    def streams(self, capabilities: Capabilities, state: SignozState, window: Window) -> list[Stream]:
        """The streams this version is read in, each reader from its cursor in `state`."""
        by_sql = capabilities.query_range_path is not None
        exceptions = ExceptionGroupsReader(
            self._client,
            self._exceptions,
            by_sql=by_sql,
            method=capabilities.exceptions_method,
            links=self._links,
        )
        exceptions.list_from_ns = _state_of("exceptions", state, window).cursor_ns
        streams = [Stream("exceptions", exceptions.read, by_minute=by_sql)]
        if by_sql:
            spans = ErrorSpansReader(self._client, self._limits, self._links)
            logs = ErrorLogsReader(
                self._client, self._limits, self._links, self._logs_schema, self._error_code_attributes
            )
            streams.append(Stream("error spans", spans.read, by_minute=True))
            streams.append(Stream("error logs", logs.read, by_minute=True))
        return streams

    def _read_stream(
        self,
        stream: Stream,
        state: SignozState,
        window: Window,
        end_ns: int,
        known_group_ids: frozenset[str],
        sql: SqlPermission,
    ) -> StreamOutcome:
        """One stream from its cursor (less the overlap) to `end_ns`, at most `max_window` of it, in
        chunks; on failure nothing of it counts and its state stays."""
        before = _state_of(stream.name, state, window)
        start = read_start(before, self._overlap_ns) if stream.by_minute else before.cursor_ns
        stop = min(end_ns, max(before.cursor_ns, start) + self._max_window_ns)
        collector = Collector(known_group_ids)
        try:
            for chunk_start in range(start, stop, self._chunk_ns):
                stream.read(chunk_start, min(chunk_start + self._chunk_ns, stop), collector, sql)
        except SignozError as error:
            return StreamOutcome(stream.name, before, start, error=error, collector=collector)
        after = StreamState(cursor_ns=max(stop, before.cursor_ns), floor_ns=before.floor_ns)
        keep_from = read_start(after, self._overlap_ns) if stream.by_minute else after.cursor_ns
        first_read = stream.name not in state.streams
        counted = count_new_rows(
            collector, before.counted, keep_from, None if first_read else before.cursor_ns
        )
        after.counted = counted.counted
        return StreamOutcome(stream.name, after, start, counted=counted, collector=collector)

    def _result(self, outcomes: list[StreamOutcome], notes: list[str], window: Window) -> PollResult:
        events: list[ErrorEvent] = []
        known: list[GroupCount] = []
        skipped: list[SkippedRecord] = []
        failures: list[str] = []
        late = 0
        for outcome in outcomes:
            skipped.extend(outcome.collector.skipped)
            for note in outcome.collector.notes:
                if note not in notes:
                    notes.append(note)
            if outcome.error is not None:
                failures.append(outcome.failure_line())
                continue
            assert outcome.counted is not None
            events.extend(outcome.counted.events)
            known.extend(outcome.counted.known)
            late += outcome.counted.late
        if late:
            notes.append(
                f"{late} occurrence(s) SigNoz received after an earlier round had read their minute "
                "were counted now (late rows, long spans stored at their start)"
            )
        # in time order, as a file is read: the first occurrence of a problem founds its signature
        events.sort(key=lambda event: event.timestamp)
        cursor_ns = min(outcome.state.cursor_ns for outcome in outcomes)
        read_from_ns = min(outcome.read_from_ns for outcome in outcomes)
        state = SignozState(streams={outcome.stream: outcome.state for outcome in outcomes})
        return PollResult(
            events=events,
            known_group_counts=known,
            skipped=skipped,
            notes=notes,
            failures=failures,
            requests=self.traffic.requests,
            read_until=ns_to_datetime(cursor_ns) if cursor_ns < datetime_to_ns(window.end) else None,
            read_from=ns_to_datetime(read_from_ns) if read_from_ns < datetime_to_ns(window.start) else None,
            source_state=state.model_dump(),
        )

    def _readable_end(self, end_ns: int, notes: list[str]) -> int:
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
            notes.append(
                "the window ends less than 30 s before SigNoz's own clock (its Date header); "
                "SigNoz's exceptions API leaves those seconds out, so this round reads up to "
                f"{ns_to_datetime(limit).isoformat()} and the next round reads from there"
            )
        return limit


def _state_of(name: str, state: SignozState, window: Window) -> StreamState:
    """The stream's state; on its first read, from the round's cursor (a database from before
    per-stream cursors) or the first window's start: nothing before that is ever read."""
    known = state.streams.get(name)
    if known is not None:
        return known
    first = ms_floor(datetime_to_ns(window.resume_from or window.start)) * NS_PER_MS
    return StreamState(cursor_ns=first, floor_ns=first)


@dataclass(frozen=True)
class Stream:
    """One kind of error row SigNoz holds, and how a window of it is read into a collector."""

    name: str
    read: Callable[[int, int, Collector, SqlPermission], None]
    by_minute: bool  # counted per minute (re-read with an overlap), or per group from listErrors


@dataclass
class StreamOutcome:
    stream: str
    state: StreamState
    read_from_ns: int
    collector: Collector
    counted: Counted | None = None
    error: SignozError | None = None

    def failure_line(self) -> str:
        assert self.error is not None
        return (
            f"{self.stream}: not read this round: {self.error}; its cursor stays at "
            f"{ns_to_datetime(self.state.cursor_ns).isoformat()} and the next round reads it again"
        )
