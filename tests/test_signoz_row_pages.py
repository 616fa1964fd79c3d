"""A page SigNoz cannot write whole (one of its rows holds a NaN or infinite number) is split by offset down
to the rows it cannot, which are read with named fields; the rows come back complete and in the query's
order."""

from __future__ import annotations

import pytest

from rounds_bot.sources.signoz.failures import UnrenderableAnswer
from rounds_bot.sources.signoz.row_pages import PageSplitter, Row, iter_rows, split_requests
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
    # the failed page, its split, and one more read of the rest, which fails as the page did
    assert rows.requests <= 1 + split_requests(1000) + 1


def test_a_page_that_renders_costs_one_request_a_page():
    rows = Rows(250, set())
    assert len(_read(rows)) == 250
    assert rows.requests == 3


@pytest.mark.parametrize("bad", [{0, 999}, {1, 998}, {499, 500}, {0, 1}, {998, 999}])
def test_any_two_rows_no_answer_can_hold_are_isolated_within_the_bound(bad):
    rows = Rows(1000, bad, names_help=False)
    read = _read(rows, page_size=1000)
    assert [index for index, row in enumerate(read) if row is None] == sorted(bad)
    assert rows.requests <= 1 + split_requests(1000)


@pytest.mark.parametrize("named_requests", [1, 2])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 100, 1000])
def test_a_page_of_nothing_but_such_rows_costs_its_split_and_one_read_of_the_rest(size, named_requests):
    rows = Rows(size, set(range(size)))
    splitter = PageSplitter(rows.whole, rows.named, named_requests=named_requests)
    counted = []

    def named(limit: int, offset: int) -> list[Row]:
        counted.append(limit)
        rows.requests += named_requests - 1  # a named read of `named_requests` queries
        return rows.named(limit, offset)

    splitter.named = named
    read = [row for _, row in iter_rows(splitter.page, page_size=size, row_cap=size)]
    assert [row["n"] for row in read if row] == list(range(size))
    assert rows.requests <= 1 + split_requests(size, named_requests) + named_requests


class LiveRows:
    """Rows newest first, one of them (`bad`) holding a NaN; when SigNoz first refuses the `at`th answer,
    `late` records written meanwhile arrive at the top and push every row down."""

    def __init__(self, count: int, bad: int, late: int, at: int) -> None:
        self.rows = [f"r{n}" for n in range(count)]
        self.bad, self.late, self.refused, self.at = f"r{bad}", late, 0, at

    def _page(self, limit: int, offset: int, named: bool) -> list[Row]:
        page = self.rows[offset : offset + limit]
        if self.bad in page and not named:
            self.refused += 1
            if self.refused == self.at:
                self.rows[:0] = [f"new{n}" for n in range(self.late)]
            raise UnrenderableAnswer("unsupported value: NaN", status=500, body=ErrorBody())
        return [{"id": row, "named": named} for row in page]

    def whole(self, limit: int, offset: int) -> list[Row]:
        return self._page(limit, offset, False)

    def named(self, limit: int, offset: int) -> list[Row]:
        return self._page(limit, offset, True)


@pytest.mark.parametrize("at", [1, 2, 4, 6])
@pytest.mark.parametrize("late", [1, 3])
def test_a_row_pushed_down_while_its_page_is_split_is_read_once(at, late):
    rows = LiveRows(100, bad=7, late=late, at=at)
    splitter = PageSplitter(rows.whole, rows.named)
    read = [row for _, row in iter_rows(splitter.page, page_size=100, row_cap=1000) if row]
    ids = [row["id"] for row in read]
    # read whole and again by name, a record would be two to the reader's deduplication (the named form
    # lacks its other attributes): SigNoz's row id is one a stored row
    assert len(ids) == len(set(ids))
    assert {f"r{n}" for n in range(100)} <= set(ids)
