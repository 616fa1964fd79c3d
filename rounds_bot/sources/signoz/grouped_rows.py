"""Paging through one v5 query: grouped SQL rows or raw rows, each checked as it arrives; and the
reader shared by error spans and error logs, which groups them in ClickHouse or, without SQL, here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from rounds_bot.models import ErrorEvent
from rounds_bot.sources.signoz.client import SignozClient
from rounds_bot.sources.signoz.collector import Collector, FoundGroup, GroupSpan, RowTally
from rounds_bot.sources.signoz.failures import SignozHTTPError
from rounds_bot.sources.signoz.links import UiLinks
from rounds_bot.sources.signoz.queries import MAX_V5_LIMIT, clickhouse_sql
from rounds_bot.sources.signoz.record_identity import RecordIdentity, SeenRecords
from rounds_bot.sources.signoz.row_pages import PageSplitter, iter_rows, joined_reader, page_reader
from rounds_bot.sources.signoz.sql_permission import REFUSED_SQL_NOTE, SqlPermission
from rounds_bot.sources.signoz.times import check_unix_ns

RowT = TypeVar("RowT", bound=BaseModel)
GroupT = TypeVar("GroupT", bound=BaseModel)
RawT = TypeVar("RawT", bound=BaseModel)
GroupKey = tuple[str, ...]
UNANSWERABLE = (
    "not counted: it holds a NaN or infinite number, which SigNoz cannot write in an answer, and this "
    "SigNoz version answers every field of the row whatever rounds names (from v0.95 a log record's "
    "named fields only)"
)


def validated(model: type[RowT], data: dict[str, Any], where: str, collector: Collector) -> RowT | None:
    """The row as `model`, or None with a SkippedRecord naming the bad field."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        location = ".".join(str(part) for part in first["loc"]) or "row"
        collector.skip(where, f"{location}: {first['msg']}")
        return None


@dataclass(frozen=True)
class RowLimits:
    raw_page_size: int = 1_000
    raw_row_cap: int = 20_000
    sql_group_cap: int = 50_000


class GroupedRowsReader(ABC, Generic[GroupT, RawT]):
    """Error rows of one kind as groups: grouped inside ClickHouse where the key may run
    clickhouse_sql (one row per group), else read raw, newest first, up to a cap, and grouped here.

    A subclass names what it reads (`what`), its two row models, its queries, how a raw row is
    keyed and how a group becomes an event.
    """

    what: str
    group_model: type[GroupT]
    raw_model: type[RawT]

    def __init__(self, client: SignozClient, limits: RowLimits, links: UiLinks | None = None):
        self._client = client
        self._limits = limits
        self._links = links or UiLinks(client.base_url)

    def read(self, start_ns: int, end_ns: int, collector: Collector, sql: SqlPermission) -> None:
        if sql.allowed:
            try:
                self._read_groups(start_ns, end_ns, collector)
                return
            except SignozHTTPError as error:
                if error.status != 403:
                    raise
                sql.allowed = False
        self._read_raw(start_ns, end_ns, collector)

    def _where(self, number: int) -> str:
        return f"{self._client.base_url}{self._client.query_range_path} {self.what} row {number}"

    def _read_groups(self, start_ns: int, end_ns: int, collector: Collector) -> None:
        cap = self._limits.sql_group_cap
        rows = iter_rows(
            page_reader(
                self._client,
                start_ns,
                end_ns,
                lambda limit, offset: clickhouse_sql(self._groups_sql(start_ns, end_ns, limit, offset)),
            ),
            page_size=MAX_V5_LIMIT,
            row_cap=cap + 1,
        )
        for number, data in rows:
            assert data is not None  # only `PageSplitter` reads a row as None
            if number >= cap:
                collector.note(
                    f"more than {cap} groups of {self.what} in the window; "
                    "the rarest were not read (shorten the polling interval)"
                )
                return
            row = validated(self.group_model, data, self._where(number), collector)
            if row is None:
                continue
            try:
                group = self._group_span(row)
                check_unix_ns(group.first_seen_ns, "first_seen_ns")
                check_unix_ns(group.last_seen_ns, "last_seen_ns")
            except ValueError as error:
                collector.skip(self._where(number), str(error))
                continue
            # the event is built from the row later; its minutes now live in `group`, not twice
            self._add(row.model_copy(update={"buckets": ""}), group, collector)

    def _read_raw(self, start_ns: int, end_ns: int, collector: Collector) -> None:
        cap = self._limits.raw_row_cap
        collector.note(
            REFUSED_SQL_NOTE.format(
                what=self.what,
                consequence=f"raw rows, newest first, at most {cap} a round, grouped in rounds",
            )
        )
        tallies: dict[GroupKey, RowTally] = {}
        seen = SeenRecords()
        pages = PageSplitter(page_reader(self._client, start_ns, end_ns, self._raw_query))
        named = self._named_raw_queries()
        if named:
            (_, first), *joined = named
            pages.named = page_reader(self._client, start_ns, end_ns, first)
            for into, query in joined:
                more = page_reader(self._client, start_ns, end_ns, query)
                pages.named = joined_reader(pages.named, more, into)
            pages.named_requests = len(named)
        rows = iter_rows(pages.page, page_size=self._limits.raw_page_size, row_cap=cap + 1)
        for number, data in rows:
            if number >= cap:
                collector.note(f"more than {cap} {self.what} in the window: only the newest {cap} were read")
                break
            if data is None:
                collector.skip(self._where(number), UNANSWERABLE)
                continue
            record = validated(self.raw_model, self._raw_fields(data), self._where(number), collector)
            if record is None:
                continue
            try:
                timestamp_ns = self._timestamp_ns(record)
            except ValueError as error:
                collector.skip(self._where(number), str(error))
                continue
            key = self._key(record)
            if key is None:
                continue
            if not seen.first(self._identity(record, timestamp_ns)):
                continue  # a collector's retried copy of a row read already (`queries.SPAN_IDENTITY`)
            tallies.setdefault(key, self._new_tally()).add(
                timestamp_ns, {"record": record}, self._environment(record)
            )
        if pages.named_rows:
            collector.note(
                f"{pages.named_rows} {self.what} were read with the fields rounds names only: SigNoz cannot "
                "write a NaN or infinite number in an answer, and they (or rows beside them) hold one"
            )
        for key, tally in tallies.items():
            row = self._row_from_tally(key, tally)
            self._add(row, self._group_span(row), collector)

    def _add(self, row: GroupT, group: GroupSpan, collector: Collector) -> None:
        collector.found(FoundGroup(group, lambda: self._event(row, group)))

    def _sample(self, tally: RowTally) -> RawT:
        """The newest raw row of a group counted here."""
        record = tally.sample["record"]
        assert isinstance(record, self.raw_model)
        return record

    # -- what differs between kinds of rows ----------------------------------------------------

    @abstractmethod
    def _groups_sql(self, start_ns: int, end_ns: int, limit: int, offset: int) -> str:
        """One page of the ClickHouse query that groups the window's rows into `group_model` rows."""

    @abstractmethod
    def _raw_query(self, limit: int, offset: int) -> dict[str, Any]:
        """One page of raw rows, newest first."""

    def _named_raw_queries(self) -> list[tuple[str, Callable[[int, int], dict[str, Any]]]]:
        """`_raw_query` naming only the fields rounds reads, for rows SigNoz cannot answer whole: the
        first query's rows, each with the row of every later one under its key (the same record's fields
        of another type); none when `_raw_query` names its fields already."""
        return []

    def _raw_fields(self, data: dict[str, Any]) -> dict[str, Any]:
        """A raw row's data as `raw_model` reads it."""
        return data

    @abstractmethod
    def _timestamp_ns(self, record: RawT) -> int:
        """When the row happened; ValueError skips the row."""

    @abstractmethod
    def _key(self, record: RawT) -> GroupKey | None:
        """The group of a raw row, or None to leave the row out."""

    @abstractmethod
    def _identity(self, record: RawT, timestamp_ns: int) -> RecordIdentity:
        """What a collector's retried copy of the row shares and two real records never do, as the grouped
        query's identity (`queries.SPAN_IDENTITY`, `queries.LOG_IDENTITY`) names it; split in what a read by
        name holds too and what only a whole read does (`record_identity`)."""

    def _environment(self, record: RawT) -> str:
        """The environment a raw row ran in ("" when it does not say)."""
        return ""

    def _new_tally(self) -> RowTally:
        return RowTally()

    @abstractmethod
    def _row_from_tally(self, key: GroupKey, tally: RowTally) -> GroupT:
        """A group counted here, as the row ClickHouse would have answered for it."""

    @abstractmethod
    def _group_span(self, row: GroupT) -> GroupSpan:
        """The group's id, service, count, first and last occurrence and minutes (ValueError skips
        the row)."""

    @abstractmethod
    def _event(self, row: GroupT, group: GroupSpan) -> ErrorEvent:
        """The event that stands for a new group."""
