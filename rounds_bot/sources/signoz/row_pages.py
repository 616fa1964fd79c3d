"""One v5 query's rows, page by page, and the pages SigNoz cannot answer whole.

SigNoz writes its answer as JSON only after ClickHouse has run the query, and refuses a NaN or an infinite
number (`failures.UnrenderableAnswer`); the collector's logs exporter stores such a double as it is, so one
log record holding one fails every page of raw rows it is on, round after round. Such a page is split by
offset (the rows keep the query's order) until the parts that fail are single rows, and those are read again
with named fields only, which leave the number maps out; every other row of the page is read whole. The split
spends a bounded number of requests a page (`split_requests`).
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


def split_requests(limit: int, named_requests: int = 1) -> int:
    """The requests a page of `limit` rows may spend narrowing down the rows it cannot answer whole, its
    failed read aside: enough to isolate any two such rows. A halving costs two requests at most (its first
    half, and its second half when the first failed too); two rows' halvings share the first, and each row
    is then read by name (`named_requests`)."""
    depth = max(limit - 1, 0).bit_length()  # halvings down to one row: ceil(log2(limit))
    return max(4 * depth - 2, 0) + 2 * named_requests


def page_reader(
    client: SignozClient, start_ns: int, end_ns: int, query_for_page: Callable[[int, int], dict[str, Any]]
) -> PageReader:
    """Pages of one raw query over one window."""

    def read(limit: int, offset: int) -> list[Row]:
        data = client.query_range(query_range_request(start_ns, end_ns, "raw", query_for_page(limit, offset)))
        return list[Row](data.raw_rows())

    return read


def joined_reader(first: PageReader, more: PageReader, into: str) -> PageReader:
    """`first`'s rows, each with the row `more` answers for the same record (the same `id`) under `into`:
    one record's fields SigNoz can only answer in two queries. A record `more` cannot answer (the joined
    fields themselves hold a NaN) gets none."""

    def read(limit: int, offset: int) -> list[Row]:
        rows = first(limit, offset)
        try:
            joined = {row.get("id"): row for row in more(limit, offset) if row}
        except UnrenderableAnswer:
            joined = {}
        return [{**row, into: joined.get(row.get("id"), {})} if row else row for row in rows]

    return read


def iter_rows(read_page: PageReader, *, page_size: int, row_cap: int) -> Iterator[tuple[int, Row]]:
    """(row number, row data) over offset pages; stops at a short page or at `row_cap` rows.

    Each page is a query of its own, so the query's order must tell every two records apart: ClickHouse
    orders rows tied on it anew on each query, and a tied row could come on two pages or on none (the raw
    queries end their order in a row's ids, `builder_queries.ERROR_SPAN_ORDER`). The offset moves on by the
    rows a page holds, so a run of rows sharing a timestamp longer than a page is read page by page, and
    ends. Records written while the query is read (newest first) push the rows below them down, so a row can
    come back at two offsets: a row with an `id` (SigNoz's, one a stored row) is yielded once. A row read
    whole and the same row read by name would otherwise be two records to the reader's deduplication."""
    offset = 0
    seen: set[object] = set()
    while offset < row_cap:
        limit = min(page_size, row_cap - offset)
        rows = read_page(limit, offset)
        for number, row in enumerate(rows, start=offset):
            identity = row.get("id") if row else None
            if identity:
                if identity in seen:
                    continue
                seen.add(identity)
            yield number, row
        if len(rows) < limit:
            return
        offset += len(rows)


@dataclass
class _Part:
    """Rows `limit` from `offset` of a page being split; `refused`: the failure of reading it whole, when it
    was read; `fails_after_ok`: it fails if the part before it (its twin half) reads whole."""

    limit: int
    offset: int
    refused: UnrenderableAnswer | None = None
    fails_after_ok: UnrenderableAnswer | None = None


@dataclass
class PageSplitter:
    """`page` reads with `whole`; a page SigNoz cannot answer is split down to the rows it cannot, read
    with `named` (the same query naming the fields it needs, `named_requests` requests a read). A row `named`
    cannot answer either (SigNoz before v0.95 selects every column of a log whatever is named; or no
    `named` at all) is None.

    A page spends at most `split_requests(limit, named_requests)` requests on the split, its failed read
    aside, and then one read of the rest of the page: by name, or whole where names do not help (the page
    then fails if that fails too). So any two such rows of a page are always isolated."""

    whole: PageReader
    named: PageReader | None = None
    named_requests: int = 1
    named_rows: int = 0  # rows read with named fields, for the report

    def page(self, limit: int, offset: int) -> list[Row]:
        try:
            return self.whole(limit, offset)
        except UnrenderableAnswer as refused:
            return self._split(limit, offset, refused)

    def _split(self, limit: int, offset: int, refused: UnrenderableAnswer) -> list[Row]:
        """The rows of a page that failed whole, read part by part in the query's order."""
        budget = split_requests(limit, self.named_requests)
        rows: list[Row] = []
        parts = [_Part(limit, offset, refused)]
        while parts:
            part = parts.pop(0)
            if self._cost(part) > budget:  # spent: the rest of the page in one read
                end = offset + limit
                return rows + self._rest(end - part.offset, part.offset, part.refused or refused)
            if part.refused is None:
                budget -= 1
                try:
                    got = self.whole(part.limit, part.offset)
                except UnrenderableAnswer as failed:
                    parts.insert(0, _Part(part.limit, part.offset, failed))
                    if parts[1:] and parts[1].fails_after_ok:
                        parts[1].fails_after_ok = None  # its twin failed: it may read whole
                    continue
                rows += got
                if len(got) < part.limit:
                    return rows  # the query's rows end inside this part
                if parts and parts[0].fails_after_ok:
                    parts[0].refused = parts[0].fails_after_ok  # the whole failed, its twin did not
                continue
            if part.limit == 1:
                budget -= self._cost(part)
                rows += self._one(part.offset)
                continue
            half = part.limit // 2
            parts[0:0] = [
                _Part(half, part.offset),
                _Part(part.limit - half, part.offset + half, fails_after_ok=part.refused),
            ]
        return rows

    def _cost(self, part: _Part) -> int:
        """The requests the next step on `part` costs: a whole read, a named one, or none (a halving)."""
        if part.refused is None:
            return 1
        if part.limit == 1:
            return self.named_requests if self.named is not None else 0
        return 0

    def _one(self, offset: int) -> list[Row]:
        """A row that fails whole: by name, else None (the row is there, but no answer can hold it)."""
        if self.named is not None:
            try:
                rows = self.named(1, offset)
            except UnrenderableAnswer:
                self.named = None  # this SigNoz answers every column whatever is named
            else:
                self.named_rows += len(rows)
                return rows
        return [None]

    def _rest(self, limit: int, offset: int, refused: UnrenderableAnswer) -> list[Row]:
        """The rest of a page whose split has spent its requests."""
        if self.named is None:
            return self.whole(limit, offset)  # fails as the page did if a row there still cannot be written
        try:
            rows = self.named(limit, offset)
        except UnrenderableAnswer:
            self.named = None
            raise refused from None
        self.named_rows += len(rows)
        return rows
