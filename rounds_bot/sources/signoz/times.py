"""Time units as SigNoz spells them: ns strings, ms numbers, RFC 3339 with nanoseconds.

Python's datetime keeps only microseconds, so every instant that must match SigNoz exactly
(errorFromGroupID looks a row up by its timestamp) is carried as an int of nanoseconds.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# Plausible Unix-nanosecond instants: 2001-09-09 .. 2286-11-20. A value below this range is in
# another unit (s, ms or us), which SigNoz never sends where it promises nanoseconds.
_MIN_NS = 1_000_000_000 * NS_PER_S
_MAX_NS = 9_999_999_999 * NS_PER_S

_RFC3339 = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{2}:\d{2}:\d{2})"
    r"(?:\.(?P<frac>\d{1,9}))?(?P<zone>Z|[+-]\d{2}:\d{2})$"
)


def datetime_to_ns(moment: datetime) -> int:
    """Unix nanoseconds of an aware datetime (naive ones are taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * NS_PER_S + delta.microseconds * 1_000


def ns_to_datetime(ns: int) -> datetime:
    """An aware UTC datetime; sub-microsecond digits are dropped (datetime cannot hold them)."""
    return _EPOCH + timedelta(microseconds=ns // 1_000)


def ms_floor(ns: int) -> int:
    return ns // NS_PER_MS


def ms_ceil(ns: int) -> int:
    return -(-ns // NS_PER_MS)


def parse_rfc3339_ns(text: str) -> int:
    """Unix nanoseconds of an RFC 3339 string, exact to the nanosecond.

    Raises ValueError naming the text when it is not RFC 3339.
    """
    match = _RFC3339.match(text)
    if match is None:
        raise ValueError(f"not an RFC 3339 timestamp: {text!r}")
    whole = datetime.fromisoformat(f"{match['date']}T{match['time']}{_zone(match['zone'])}")
    fraction = int((match["frac"] or "").ljust(9, "0"))
    return datetime_to_ns(whole) + fraction


def _zone(zone: str) -> str:
    return "+00:00" if zone == "Z" else zone


def format_rfc3339_ns(ns: int) -> str:
    """Go's time.Time JSON form in UTC: nanoseconds with trailing zeros trimmed, `Z`."""
    seconds, fraction = divmod(ns, NS_PER_S)
    base = (_EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")
    if fraction == 0:
        return f"{base}Z"
    return f"{base}.{str(fraction).rjust(9, '0').rstrip('0')}Z"


def check_unix_ns(value: object, what: str) -> int:
    """An int of Unix nanoseconds, or ValueError saying which unit the value seems to be in."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"{what} should be an integer of Unix nanoseconds, got {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{what} should be an integer of Unix nanoseconds, got {value!r}") from None
    if number < _MIN_NS:
        raise ValueError(f"{what} {number} is not in nanoseconds (it looks like {_unit_of(number)})")
    if number > _MAX_NS:
        raise ValueError(f"{what} {number} is too large to be Unix nanoseconds")
    return number


def _unit_of(number: int) -> str:
    if number >= _MIN_NS // 1_000:
        return "microseconds"
    if number >= _MIN_NS // NS_PER_MS:
        return "milliseconds"
    if number >= _MIN_NS // NS_PER_S:
        return "seconds"
    return "a value far in the past"
