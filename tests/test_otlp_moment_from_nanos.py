"""A record's time is made from the fields of its second, remembered (`otlp_build.moment_from_nanos`): for any
number of nanoseconds it is exactly the datetime the epoch plus its microseconds gives, tzinfo included, and
a time no datetime can hold is refused as before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.errors import SourceFormatError
from rounds_bot.sources import otlp_build
from rounds_bot.sources.otlp_build import moment_from_nanos

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: the first nanosecond a datetime cannot hold (year 10000)
LAST = 253_402_300_800 * 1_000_000_000


def summed(unix_nano: int) -> datetime:
    return EPOCH + timedelta(microseconds=unix_nano // 1_000)


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.integers(min_value=1, max_value=LAST - 1),
        st.integers(min_value=1_700_000_000, max_value=1_900_000_000).map(lambda second: second * 10**9),
        st.integers(min_value=LAST - 10**10, max_value=LAST - 1),
        st.integers(min_value=1, max_value=10**7),
    )
)
def test_a_moment_is_the_epoch_plus_its_microseconds(unix_nano: int) -> None:
    made = moment_from_nanos(unix_nano, "span")
    again = moment_from_nanos(unix_nano, "span")  # from the second remembered
    expected = summed(unix_nano)
    assert made == again == expected
    assert made.tzinfo is expected.tzinfo is UTC
    assert (made.year, made.month, made.day, made.hour, made.minute, made.second, made.microsecond) == (
        expected.year,
        expected.month,
        expected.day,
        expected.hour,
        expected.minute,
        expected.second,
        expected.microsecond,
    )


def test_the_seconds_remembered_are_bounded_and_forgetting_them_changes_nothing() -> None:
    base = 1_795_707_000 * 10**9
    for second in range(otlp_build._MAX_SECONDS + 10):
        moment_from_nanos(base + second * 10**9 + 123_456_789, "log record")
    assert len(otlp_build._SECOND_FIELDS) <= otlp_build._MAX_SECONDS
    assert moment_from_nanos(base + 5, "log record") == summed(base + 5)


@pytest.mark.parametrize("unix_nano", [0, -1, LAST, LAST + 10**9, 10**30])
def test_a_moment_no_datetime_holds_is_refused(unix_nano: int) -> None:
    with pytest.raises(SourceFormatError):
        moment_from_nanos(unix_nano, "span")
