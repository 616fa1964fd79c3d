"""A stack trace a log record carries without an SDK's exception: in its body, or a structured logger's field.

A process that crashes, or logs an error with its trace to the console, reaches the backend through a log
collector (the OpenTelemetry Collector's filelog receiver, a platform's log drain) as a log record whose body
is the whole report: a Python traceback, a Java stack trace after its log line, a Go panic, a Node error with
its `at` lines. A structured (JSON) logger writes the trace in a field of its own instead, which the
collector's `json_parser` makes an attribute (`TRACE_ATTRIBUTES`). Neither comes with the `exception.*`
attributes an SDK writes (OpenTelemetry's exception semantic conventions). Read as a message, such a record
made a headline of `Traceback (most recent call last): ...` or of the log line alone, and gave the issue, the
diagnoser and the code look-up no frames.

`logged_exception` reads it as the SDK would have recorded it: the stack trace is the field's text (or the
body), the type and message are those of the exception the trace raised. The event says where the trace was
(`TRACE_FROM`): earlier releases grouped such a record by its body as a message, and the signature made then
keeps receiving its events (`message_read_before`, asked by `EarlierReadings`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.models import AttributeValue, ErrorEvent

#: the attribute of an event whose stack trace a log record carried without an exception: its value says
#: where the trace was, `log.body` or the attribute's name
TRACE_FROM = "rounds.stacktrace_from"
LOG_BODY = "log.body"
#: the attribute of an event whose message is a field of its log record's structured body, naming the field;
#: the body is kept as `log.body`
MESSAGE_FROM = "rounds.message_from"
#: where structured loggers write a formatted stack trace, by the name the collector's `json_parser` gives
#: the field as an attribute (a nested object's keys joined with dots), looked at in this order
TRACE_ATTRIBUTES = (
    "error.stack_trace",  # Elastic Common Schema (the ecs-logging libraries, log4j2's EcsLayout)
    "stack_trace",  # logstash-logback-encoder (Java)
    "err.stack",  # pino and bunyan (Node.js): the error serialised under `err`
    "error.stack",  # pino with `errorKey: "error"`, winston with the error under `error`
    "stack",  # winston's `format.errors({ stack: true })`
    "exception",  # structlog's `format_exc_info` (Python)
    "exc_info",  # python-json-logger
    "@x",  # Serilog's compact JSON (.NET)
)


class LoggedException(NamedTuple):
    """The exception a log record reports with a stack trace, and where the trace was (`TRACE_FROM`)."""

    #: None when the trace names no type
    error_type: str | None
    message: str
    stacktrace: str
    source: str


def logged_exception(body: str, attributes: Mapping[str, AttributeValue]) -> LoggedException | None:
    """The exception a log record with no `exception.*` attribute reports: from a structured logger's trace
    field first (the body is then the log line around it), else from its body; None when neither holds a
    trace with a frame (a text of one line never does: it is a message)."""
    for key in TRACE_ATTRIBUTES:
        value = attributes.get(key)
        if isinstance(value, str) and (raised := _raised(value)) is not None:
            return LoggedException(*raised, value, key)
    raised = _raised(body)
    return None if raised is None else LoggedException(*raised, body, LOG_BODY)


def note_source(attributes: dict[str, AttributeValue], logged: LoggedException, body: str) -> None:
    """The attributes of the event `logged` is: where its trace was (`TRACE_FROM`); a field's trace, now the
    event's own, is not kept twice, and the body beside it is kept as the log line around the exception (also
    when it is the exception's message: it is what earlier releases grouped by, `message_read_before`)."""
    attributes[TRACE_FROM] = logged.source
    if logged.source != LOG_BODY:
        attributes.pop(logged.source, None)
        if body:
            attributes[LOG_BODY] = body


def message_read_before(event: ErrorEvent) -> str | None:
    """The message earlier releases grouped the event by, of no type, when its message is a field of a
    structured (JSON or logfmt) body (`MESSAGE_FROM`) or its stack trace is one a log record carried without
    an exception (`TRACE_FROM`): its body; None for any other event."""
    attributes = event.attributes
    source = attributes.get(TRACE_FROM)
    if MESSAGE_FROM not in attributes and (source is None or event.stacktrace is None):
        return None
    if MESSAGE_FROM not in attributes and source == LOG_BODY:
        return event.stacktrace  # the body itself
    return str(attributes.get(LOG_BODY, ""))


def _raised(text: str) -> tuple[str | None, str] | None:
    """The type and message of the exception a text's stack trace raised, or None without a frame."""
    if "\n" not in text:
        return None
    trace = parse_stacktrace(text)
    if trace is None or not trace.exceptions or trace.frame_count == 0:
        return None
    # the raised exception, first: unless a log line before it reads as an exception of no frame (.NET's
    # console logger writes `fail: Category[event id]` above the exception)
    raised = next(exception for exception in trace.exceptions if exception.frames)
    message = raised.value
    if raised.type and message.startswith(f"{raised.type} "):  # a sanitizer's line names its kind first
        message = message[len(raised.type) :].lstrip()
    return raised.type or None, message
