"""Paging through one v5 query: grouped SQL rows or raw rows, each checked as it arrives."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rounds_bot.sources.signoz.client import SignozClient
from rounds_bot.sources.signoz.collector import Collector
from rounds_bot.sources.signoz.queries import query_range_request

RowT = TypeVar("RowT", bound=BaseModel)


def iter_rows(
    client: SignozClient,
    start_ns: int,
    end_ns: int,
    query_for_page: Callable[[int, int], dict[str, Any]],
    *,
    page_size: int,
    row_cap: int,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number, row data) over offset pages; stops at a short page or at `row_cap` rows.

    Yields at most `row_cap` rows; `capped(...)` below tells whether more were there.
    """
    offset = 0
    while offset < row_cap:
        limit = min(page_size, row_cap - offset)
        data = client.query_range(query_range_request(start_ns, end_ns, "raw", query_for_page(limit, offset)))
        rows = [row for result in data.raw_results() for row in (result.rows or [])]
        for number, row in enumerate(rows, start=offset):
            merged = dict(row.data)
            if row.timestamp is not None:
                merged.setdefault("__row_timestamp", row.timestamp)
            yield number, merged
        if len(rows) < limit:
            return
        offset += len(rows)


def validated(model: type[RowT], data: dict[str, Any], where: str, collector: Collector) -> RowT | None:
    """The row as `model`, or None with a SkippedRecord naming the bad field."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        location = ".".join(str(part) for part in first["loc"]) or "row"
        collector.skip(where, f"{location}: {first['msg']}")
        return None
