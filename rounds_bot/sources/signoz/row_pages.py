"""One v5 query's rows, page by page, and the pages SigNoz cannot answer whole.

SigNoz writes its answer as JSON only after ClickHouse has run the query, and refuses a NaN or an infinite
number (`failures.UnrenderableAnswer`); the collector's logs exporter stores such a double as it is, so one
log record holding one fails every page of raw rows it is on, round after round. Such a page is split by
offset (the rows keep the query's order) until the parts that fail are single rows, and those are read again
with named fields only, which leave the number maps out; every other row of the page is read whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from rounds_bot.sources.signoz.client import SignozClient
from rounds_bot.sources.signoz.failures import UnrenderableAnswer
from rounds_bot.sources.signoz.queries import query_range_request

#: a row's data, or None for a row SigNoz could answer in no shape (`PageSplitter`)
Row = dict[str, Any] | None
#: (limit, offset) -> that page's rows, in the query's order
PageReader = Callable[[int, int], list[Row]]

#: requests a page may spend narrowing down the rows it cannot answer whole (two a halving at most): a
#: part still failing when they are spent is read with named fields as it is. 24 isolate one such row in
#: a page of 4,096 rows, and bound what a page of nothing but such rows costs.
SPLIT_REQUESTS = 24


def page_reader(
    client: SignozClient, start_ns: int, end_ns: int, query_for_page: Callable[[int, int], dict[str, Any]]
) -> PageReader:
    """Pages of one raw query over one window."""

    def read(limit: int, offset: int) -> list[Row]:
        data = client.query_range(query_range_request(start_ns, end_ns, "raw", query_for_page(limit, offset)))
        rows: list[Row] = []
        for result in data.raw_results():
            for row in result.rows or []:
                merged = dict(row.data)
                if row.timestamp is not None:
                    merged.setdefault("__row_timestamp", row.timestamp)
                rows.append(merged)
        return rows

    return read


def iter_rows(read_page: PageReader, *, page_size: int, row_cap: int) -> Iterator[tuple[int, Row]]:
    """(row number, row data) over offset pages; stops at a short page or at `row_cap` rows."""
    offset = 0
    while offset < row_cap:
        limit = min(page_size, row_cap - offset)
        rows = read_page(limit, offset)
        yield from enumerate(rows, start=offset)
        if len(rows) < limit:
            return
        offset += len(rows)


@dataclass
class PageSplitter:
    """`page` reads with `whole`; a page SigNoz cannot answer is split down to the rows it cannot, read
    with `named` (the same query naming the fields it needs). A row `named` cannot answer either (SigNoz
    before v0.95 selects every column of a log whatever is named; or no `named` at all) is None, and
    `split_requests` bounds the extra requests of each page."""

    whole: PageReader
    named: PageReader | None = None
    split_requests: int = SPLIT_REQUESTS
    named_rows: int = 0  # rows read with named fields, for the report
    _budget: int = 0

    def page(self, limit: int, offset: int) -> list[Row]:
        self._budget = self.split_requests
        try:
            return self.whole(limit, offset)
        except UnrenderableAnswer as refused:
            return self._failing(limit, offset, refused)

    def _failing(self, limit: int, offset: int, refused: UnrenderableAnswer) -> list[Row]:
        """The rows of a part known to fail whole."""
        if limit == 1 or self._budget <= 0:
            return self._by_name(limit, offset, refused)
        half = limit // 2
        first, first_failed = self._try(half, offset)
        if len(first) < half:
            return first  # the query's rows end inside the first half
        if first_failed:
            second, _ = self._try(limit - half, offset + half)
        else:  # the whole failed and its first half did not: the second half fails
            second = self._failing(limit - half, offset + half, refused)
        return first + second

    def _try(self, limit: int, offset: int) -> tuple[list[Row], bool]:
        """A part not known to fail: read whole while the page may still spend requests, else by name."""
        if self._budget <= 0:
            return self._by_name(limit, offset, None), False
        self._budget -= 1
        try:
            return self.whole(limit, offset), False
        except UnrenderableAnswer as refused:
            return self._failing(limit, offset, refused), True

    def _by_name(self, limit: int, offset: int, refused: UnrenderableAnswer | None) -> list[Row]:
        """A part read with named fields; `refused`: the whole part's failure, None when it was not read."""
        if self.named is not None:
            try:
                rows = self.named(limit, offset)
            except UnrenderableAnswer as named_refused:
                self.named = None  # this SigNoz answers every column whatever is named
                refused = refused or named_refused
            else:
                self.named_rows += len(rows)
                return rows
        elif refused is None:
            return self.whole(limit, offset)  # nothing else to read it with
        assert refused is not None
        if limit == 1:
            return [None]  # the row is there (it failed the page), but no answer can hold it
        if self._budget <= 0:
            raise refused
        return self._failing(limit, offset, refused)
