"""A record's own time that is not in nanoseconds, refused by name rather than read as 1970.

OTLP's protos give every time of a record as `fixed64 time_unix_nano` ("nanoseconds since the epoch": a span's
start and end, an event's time, a log record's time and observed time). An SDK passes on a time its caller
gave it as given (opentelemetry-go `sdk/trace/span.go` keeps `trace.WithTimestamp`'s `time.Time`;
opentelemetry-js `Span.ts` reads a number as epoch milliseconds), so a caller's milliseconds, microseconds or
seconds reach the file as a time of January 1970. Read so, the record fell before every window and was taken
for one an earlier round counted: it is refused instead (`SourceFormatError`, which the readers list as a
skipped record, in every round, as nothing of it is remembered as read).
"""

from __future__ import annotations

from rounds_bot.errors import SourceFormatError

#: 1973-03-03 in Unix nanoseconds: no SDK running today writes an earlier time, and a time of today in
#: milliseconds, microseconds or seconds is below it
NANOS_OF_TODAY = 10**17

#: the unit a time below `NANOS_OF_TODAY` looks like, by its size: each bound is 1973 in that unit, so a time
#: of 1973 or later written in it is at least that bound (and below the next: 1973 in the unit 1,000 finer)
_UNITS_BY_SIZE = ((10**14, "microseconds"), (10**11, "milliseconds"), (0, "seconds"))


def nanos_of(unix_nano: int, field: str) -> int:
    """`unix_nano`, the record's `field`, unless it is a time in another unit (then refused, saying which
    field, its value, the unit it looks like and what to fix). 0, no time, is the callers' to judge."""
    if 0 < unix_nano < NANOS_OF_TODAY:
        unit = next(name for bound, name in _UNITS_BY_SIZE if unix_nano >= bound)
        raise SourceFormatError(
            f"{field} {unix_nano} is not a time in Unix nanoseconds (OTLP times are nanoseconds since the "
            f"epoch; read so it is 1970): by its size it is {unit}; have the exporter or SDK call that sets "
            "it write nanoseconds"
        )
    return unix_nano


def span_nanos(end: int, start: int) -> int:
    """A span's time, its end (else its start, when it has no end), in nanoseconds."""
    return nanos_of(end, "endTimeUnixNano") if end else nanos_of(start, "startTimeUnixNano")


def event_moment(at: int, index: int, end: int, start: int) -> int:
    """The time of the span's event number `index`: its own, `at`, refused when in another unit whatever its
    span's time (the event is a record of its own, and an SDK writes the event time its caller gives it:
    opentelemetry-go `sdk/trace/span.go` `addEvent`, `Time: c.Timestamp()`; opentelemetry-js `Span.ts`
    `_getTime`, a number is epoch milliseconds). It is not read at its span's end instead: a release before
    read it at 1970, and may have counted it there; read in a window now it would be counted twice. An event
    without a time (0) is read at its span's time, as it always was, refused when that is in another unit. A
    negative time is no time in any unit (a `fixed64` cannot be one): it is kept, and refused when read."""
    if at:
        return nanos_of(at, f"events.{index}.timeUnixNano")
    return span_nanos(end, start)
