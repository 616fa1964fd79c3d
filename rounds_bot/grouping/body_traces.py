"""A crash report in a log record's body, read as the exception an SDK would have recorded.

A process that crashes, or logs an error with its trace to the console, reaches the backend through a log
collector (the OpenTelemetry Collector's filelog receiver, a platform's log drain) as a log record whose body
is the whole report: a Python traceback, a Java stack trace, a Go panic, a Node error with its `at` lines.
None of the `exception.*` attributes an SDK writes (OpenTelemetry's exception semantic conventions) comes with
it. Read as a message, such a body made a headline of `Traceback (most recent call last): ...` and gave the
issue, the diagnoser and the code look-up no frames.

`exception_of_body` reads it as the SDK would have recorded it: the stack trace is the body, the type and
message are those of the exception the trace raised. The event says so (`TRACE_FROM`): earlier releases
grouped such a body as a message, and the signature made then keeps receiving its events
(`EarlierReadings._previous_message_owner`).
"""

from __future__ import annotations

from typing import NamedTuple

from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.models import ErrorEvent

#: the attribute of an event whose stack trace is its log record's body, and its value
TRACE_FROM = "rounds.stacktrace_from"
LOG_BODY = "log.body"


class BodyException(NamedTuple):
    """The exception a log record's body reports: its type (None when the trace names none) and message."""

    error_type: str | None
    message: str


def exception_of_body(body: str) -> BodyException | None:
    """The exception a log record's body reports with its stack trace, or None when the body holds no trace
    with a frame (a body of one line never does: it is a message)."""
    if "\n" not in body:
        return None
    trace = parse_stacktrace(body)
    if trace is None or not trace.exceptions or trace.frame_count == 0:
        return None
    # the raised exception, first: unless a log line before it reads as an exception of no frame (.NET's
    # console logger writes `fail: Category[event id]` above the exception)
    raised = next(exception for exception in trace.exceptions if exception.frames)
    return BodyException(raised.type or None, raised.value)


def trace_from_body(event: ErrorEvent) -> bool:
    """Whether the event's stack trace is its log record's body (`exception_of_body`)."""
    return event.attributes.get(TRACE_FROM) == LOG_BODY
