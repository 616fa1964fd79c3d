"""A page SigNoz cannot write whole (one of its rows holds a NaN or infinite number) is split by offset down
to the rows it cannot, which are read with named fields; the rows come back complete and in the query's
order."""

from __future__ import annotations

import pytest

from rounds_bot.sources.signoz.failures import UnrenderableAnswer
from rounds_bot.sources.signoz.row_pages import SPLIT_REQUESTS, PageSplitter, Row, iter_rows
from rounds_bot.sources.signoz.wire import ErrorBody


class Rows:
    """A query's rows; a row in `bad` fails any answer holding it whole, as SigNoz's JSON rendering does,
    and fails a named answer too unless `names_help` (SigNoz before v0.95 selects every log column)."""

    def __init__(self, count: int, bad: set[int], *, names_help: bool = True):
        self.count, self.bad, self.names_help = count, bad, names_help
        self.requests = 0

    def _page(self, limit: int, offset: int, *, named: bool) -> list[Row]:
        self.requests += 1
        numbers = range(offset, min(offset + limit, self.count))
        if any(number in self.bad for number in numbers) and not (named and self.names_help):
            raise UnrenderableAnswer("unsupported value: NaN", status=500, body=ErrorBody())
        return [{"n": number, "named": named} for number in numbers]

    def whole(self, limit: int, offset: int) -> list[Row]:
        return self._page(limit, offset, named=False)

    def named(self, limit: int, offset: int) -> list[Row]:
        return self._page(limit, offset, named=True)


def _read(rows: Rows, page_size: int = 100) -> list[Row]:
    splitter = PageSplitter(rows.whole, rows.named)
    return [row for _, row in iter_rows(splitter.page, page_size=page_size, row_cap=10_000)]


@pytest.mark.parametrize("bad", [{0}, {37}, {99}, {100}, {3, 4, 250}, set(range(0, 300, 7))])
def test_every_row_comes_back_in_order_and_only_the_unrenderable_ones_by_name(bad):
    rows = Rows(300, bad)
    read = _read(rows)
    assert [row["n"] for row in read if row] == list(range(300))
    named = {row["n"] for row in read if row and row["named"]}
    assert bad <= named
    if len(bad) <= 3:  # sparse: narrowed down to the rows themselves
        assert named == bad


def test_a_row_no_answer_can_hold_is_none_in_its_place():
    rows = Rows(10, {4}, names_help=False)
    read = _read(rows)
    assert [row["n"] if row else None for row in read] == [0, 1, 2, 3, None, 5, 6, 7, 8, 9]


def test_a_page_whose_requests_run_out_fails_as_before_when_names_do_not_help():
    rows = Rows(1000, set(range(1000)), names_help=False)
    with pytest.raises(UnrenderableAnswer):
        _read(rows, page_size=1000)
    assert rows.requests <= 1 + 2 * SPLIT_REQUESTS + 2


def test_a_page_that_renders_costs_one_request_a_page():
    rows = Rows(250, set())
    assert len(_read(rows)) == 250
    assert rows.requests == 3
