from datetime import UTC, datetime

import pytest

from rounds_bot.sources.signoz.times import (
    check_unix_ns,
    datetime_to_ns,
    format_rfc3339_ns,
    ms_ceil,
    ms_floor,
    ns_to_datetime,
    parse_rfc3339_ns,
)


def test_rfc3339_with_nanoseconds_parses_exactly():
    assert parse_rfc3339_ns("2025-05-20T10:58:25.123456789Z") == 1747738705123456789


def test_rfc3339_short_fractions_and_offsets_parse():
    assert parse_rfc3339_ns("2025-05-20T10:41:07.5Z") == 1747737667500000000
    assert parse_rfc3339_ns("2025-05-20T12:41:07+02:00") == 1747737667000000000


def test_rfc3339_formats_like_go_with_trailing_zeros_trimmed():
    assert format_rfc3339_ns(1747737667500000000) == "2025-05-20T10:41:07.5Z"
    assert format_rfc3339_ns(1747737667000000000) == "2025-05-20T10:41:07Z"
    assert format_rfc3339_ns(1747738705123456789) == "2025-05-20T10:58:25.123456789Z"


def test_not_rfc3339_is_a_value_error_naming_the_text():
    with pytest.raises(ValueError, match="'yesterday'"):
        parse_rfc3339_ns("yesterday")


def test_datetime_round_trip_keeps_microseconds():
    moment = datetime(2026, 5, 20, 10, 0, 0, 123456, tzinfo=UTC)
    assert ns_to_datetime(datetime_to_ns(moment)) == moment


def test_milliseconds_cover_the_nanosecond_window():
    assert ms_floor(1_999_999) == 1
    assert ms_ceil(1_000_001) == 2
    assert ms_ceil(2_000_000) == 2


@pytest.mark.parametrize(
    ("value", "unit"),
    [(1747738705, "seconds"), (1747738705123, "milliseconds"), (1747738705123456, "microseconds")],
)
def test_timestamps_in_another_unit_are_named(value, unit):
    with pytest.raises(ValueError, match=unit):
        check_unix_ns(value, "log timestamp")


def test_nanosecond_strings_and_ints_are_accepted():
    assert check_unix_ns("1747738705123456789", "x") == 1747738705123456789
    assert check_unix_ns(1747738705123456789, "x") == 1747738705123456789
