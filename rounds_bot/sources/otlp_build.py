"""One error event of an OTLP record, built from what the record says of itself (`SpanFacts`, `LogFacts`) and
what it inherits from its resource and scope (`Origin`), with the id and time that identify it (`Known`).

Both readers of a line build their events here: the models' (`otlp_events.py`) and the lean one
(`otlp_reading.py`, from the plain records `otlp_lean.py` checked), so a record gives the same event
whichever read it. The id and time are worked out first (`exception_known`, `span_error_known`,
`log_known`): the lean reader asks whether a record was counted before from them alone, and builds only the
records that were not.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import NamedTuple

from rounds_bot.errors import SourceFormatError
from rounds_bot.models import AttributeValue, ContextRecord, ErrorEvent
from rounds_bot.sources.log_bodies import attribute_message, read_without_exception
from rounds_bot.sources.otlp_assembly import (
    EXCEPTION_GIVEN,
    LOG_GIVEN,
    LOG_WITH_CONTEXT_GIVEN,
    SPAN_ERROR_GIVEN,
    in_order,
)
from rounds_bot.sources.otlp_identity_json import identity_json
from rounds_bot.sources.otlp_time_units import event_moment, nanos_of, span_nanos

SEVERITY_ERROR = 17
SEVERITY_FATAL = 21
SEVERITY_FATAL_MAX = 24

#: Severity words of log bridges that write only severityText, and the number they stand for.
SEVERITY_BY_TEXT = {
    "ERROR": SEVERITY_ERROR,
    "ERR": SEVERITY_ERROR,
    "SEVERE": SEVERITY_ERROR,
    "CRITICAL": SEVERITY_FATAL,
    "CRIT": SEVERITY_FATAL,
    "ALERT": SEVERITY_FATAL,
    "EMERGENCY": SEVERITY_FATAL,
    "FATAL": SEVERITY_FATAL,
    "PANIC": SEVERITY_FATAL,
}

EXCEPTION_TYPE = "exception.type"
EXCEPTION_MESSAGE = "exception.message"
EXCEPTION_STACKTRACE = "exception.stacktrace"
#: Kept in ErrorEvent's own fields, so not repeated in its attributes.
_EXCEPTION_KEYS = (EXCEPTION_TYPE, EXCEPTION_MESSAGE, EXCEPTION_STACKTRACE)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: an error's id and time, worked out before it is built (to decide whether to build it)
Known = tuple[str, datetime]
#: OTLP's SpanKind, by number or by name (without its `SPAN_KIND_` prefix)
_SPAN_KINDS = {
    **dict.fromkeys(("1", "internal"), "internal"),
    **dict.fromkeys(("2", "server"), "server"),
    **dict.fromkeys(("3", "client"), "client"),
    **dict.fromkeys(("4", "producer"), "producer"),
    **dict.fromkeys(("5", "consumer"), "consumer"),
}


@dataclass(frozen=True)
class Origin:
    """What a record inherits from its resource and instrumentation scope."""

    service: str
    version: str | None
    environment: str | None
    attributes: dict[str, AttributeValue]

    @classmethod
    def of(cls, attributes: dict[str, AttributeValue], scope_name: str) -> Origin:
        """The origin of the resource's flat attributes (taken, not copied) and the scope's name."""
        if scope_name:
            attributes["otel.scope.name"] = scope_name
        environment = attributes.get("deployment.environment.name", attributes.get("deployment.environment"))
        version = attributes.get("service.version")
        return cls(
            service=str(attributes.get("service.name") or "unknown"),
            version=None if version is None else str(version),
            environment=None if environment is None else str(environment),
            attributes=attributes,
        )


class SpanFacts(NamedTuple):
    """What an error event reads of its span, as the span's model holds it (a tuple: made once a span)."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int | str
    start_time_unix_nano: int
    end_time_unix_nano: int
    status_message: str
    attributes: dict[str, AttributeValue]


class LogFacts(NamedTuple):
    """What an error event reads of its log record, as the record's model holds it: the body as text as its
    id hashes it (`otlp_json.to_text`), and the body as its message reads it, None when that is `body` (a
    string body) else `otlp_json.message_text`'s: a map body's keys sorted for the message alone, as the
    release before hashed them in the record's own order, so a record it counted keeps its id."""

    trace_id: str
    span_id: str
    time_unix_nano: int
    observed_time_unix_nano: int
    severity_number: int
    severity_text: str
    event_name: str
    body: str
    attributes: dict[str, AttributeValue]
    message_body: str | None = None  # last, with a default: a string body, the usual one, needs none


# --- spans ------------------------------------------------------------------------------------


def span_identity(trace_id: str, span_id: str, service: str, name: str, start: int) -> tuple[str, ...]:
    """What identifies a span: its ids; a span without valid ids is still one record, named by what it says
    about itself."""
    if trace_id and span_id:
        return (trace_id, span_id)
    return ("no-ids", service, name, str(start))


def exception_known(span: SpanFacts, index: int, time_unix_nano: int, origin: Origin) -> Known:
    """The id and time of the span's `exception` event number `index`, of that time."""
    moment = event_moment(time_unix_nano, index, span.end_time_unix_nano, span.start_time_unix_nano)
    return (
        stable_id("span-event", *_identity(span, origin), str(index)),
        moment_from_nanos(moment, "exception event"),
    )


def span_error_known(span: SpanFacts, origin: Origin) -> Known:
    moment = span_nanos(span.end_time_unix_nano, span.start_time_unix_nano)
    return stable_id("span", *_identity(span, origin)), moment_from_nanos(moment, "span")


def _identity(span: SpanFacts, origin: Origin) -> tuple[str, ...]:
    return span_identity(span.trace_id, span.span_id, origin.service, span.name, span.start_time_unix_nano)


def exception_event(
    span: SpanFacts, own: dict[str, AttributeValue], origin: Origin, known: Known
) -> ErrorEvent:
    """The error of one of the span's `exception` events, with those attributes."""
    attributes = {**origin.attributes, **span.attributes, **own}
    code = attributes.get("error.code")
    for key in _EXCEPTION_KEYS:  # in place: the others keep their order, as a copy without them would
        attributes.pop(key, None)
    # each value as `_text_or_none` gives it, written out: this runs once an event
    kind, message, stack = own.get(EXCEPTION_TYPE), own.get(EXCEPTION_MESSAGE), own.get(EXCEPTION_STACKTRACE)
    # by position, in the model's order (`in_order`): a call by keyword costs more than the event's own dict
    return in_order(
        EXCEPTION_GIVEN,
        known[0],
        known[1],
        origin.service,
        "exception",
        None if kind is None else str(kind),  # error_type
        "" if message is None else str(message),  # message
        None if stack is None else str(stack),  # stacktrace
        None if code is None else str(code),  # error_code
        None,  # severity
        False,  # fatal
        span.trace_id or None,
        span.span_id or None,
        span.parent_span_id or None,
        _span_kind(span.kind),
        origin.version,
        origin.environment,
        attributes,
        None,  # context
    )


def span_error_event(span: SpanFacts, origin: Origin, known: Known) -> ErrorEvent:
    attributes = {**origin.attributes, **span.attributes}
    return in_order(  # by position, as `exception_event` calls it
        SPAN_ERROR_GIVEN,
        known[0],
        known[1],
        origin.service,
        "span_error",
        # `error.type` is the semantic conventions' low-cardinality class of a failed operation.
        _text_or_none(span.attributes.get("error.type")),
        span.status_message or span.name,  # message
        None,  # stacktrace
        _text_or_none(attributes.get("error.code")),
        None,  # severity
        False,  # fatal
        span.trace_id or None,
        span.span_id or None,
        span.parent_span_id or None,
        _span_kind(span.kind),
        origin.version,
        origin.environment,
        attributes,
        None,  # context
    )


@lru_cache(maxsize=64, typed=True)
def _span_kind(kind: int | str) -> str | None:
    """The kind's name; remembered (a file holds a few spellings of five kinds), `typed`: True is not 1."""
    return _SPAN_KINDS.get(str(kind).removeprefix("SPAN_KIND_").lower())


# --- logs -------------------------------------------------------------------------------------


def log_severity(record: LogFacts) -> int:
    """The record's severity number; a record without one is judged by its severity text."""
    return record.severity_number or SEVERITY_BY_TEXT.get(record.severity_text.strip().upper(), 0)


def log_known(record: LogFacts, origin: Origin) -> Known:
    return log_event_id(record, origin), log_timestamp(record)


def log_error(
    record: LogFacts, origin: Origin, known: Known, context: list[ContextRecord] | None = None
) -> ErrorEvent | None:
    """The error of a log record, or None when its severity is below ERROR; with the records logged before
    it (`context`), when there are any."""
    severity = log_severity(record)
    if severity < SEVERITY_ERROR:
        return None
    fatal = SEVERITY_FATAL <= severity <= SEVERITY_FATAL_MAX
    own = record.attributes
    # the body as its message reads it (`LogFacts.message_body`); an empty one: its message attribute
    body = attribute_message(record.body if record.message_body is None else record.message_body, own)
    # each value as `_text_or_none` gives it, written out as `exception_event` writes them: once an event
    kind, message, stack = own.get(EXCEPTION_TYPE), own.get(EXCEPTION_MESSAGE), own.get(EXCEPTION_STACKTRACE)
    exception_message = None if message is None else str(message)
    attributes = {**origin.attributes, **own}
    code = attributes.get("error.code")
    error_code = None if code is None else str(code)
    for key in _EXCEPTION_KEYS:  # only the record's are its event's fields: the resource's are kept
        if key in own:
            if key in origin.attributes:
                attributes[key] = origin.attributes[key]  # in its place, as a merge without own's would
            else:
                del attributes[key]
    error_type = None if kind is None else str(kind)
    stacktrace = None if stack is None else str(stack)
    if exception_message is not None and body and body != exception_message:
        # The exception is the error; the log line around it is kept as context.
        attributes["log.body"] = body
    elif kind is None and exception_message is None and stack is None:
        # No SDK recorded an exception: a JSON body's message, a logger's trace (`log_bodies`).
        error_type, exception_message, stacktrace = read_without_exception(body, own, attributes)
    return in_order(  # by position, as `exception_event` calls it
        LOG_WITH_CONTEXT_GIVEN if context else LOG_GIVEN,
        known[0],
        known[1],
        origin.service,
        "log",
        error_type,
        exception_message if exception_message is not None else body,  # message
        stacktrace,
        error_code,
        "FATAL" if fatal else "ERROR",  # severity
        fatal,
        record.trace_id or None,
        record.span_id or None,
        None,  # parent_span_id
        None,  # span_kind
        origin.version,
        origin.environment,
        attributes,
        context or None,
    )


def log_event_id(record: LogFacts, origin: Origin) -> str:
    """What identifies a log record: everything it says of itself, and where it was logged; its body as
    `to_text` spells it (not its `message_body`), as every release before hashed it."""
    return stable_id(
        "log",
        origin.service,
        str(origin.attributes.get("otel.scope.name", "")),
        record.trace_id,
        record.span_id,
        str(record.time_unix_nano),
        str(record.observed_time_unix_nano),
        str(record.severity_number),
        record.severity_text,
        record.event_name,
        record.body,
        identity_json(record.attributes),
    )


def log_timestamp(record: LogFacts) -> datetime:
    time, observed = record.time_unix_nano, record.observed_time_unix_nano
    moment = nanos_of(time, "timeUnixNano") if time else nanos_of(observed, "observedTimeUnixNano")
    return moment_from_nanos(moment, "log record")


# --- small conversions ------------------------------------------------------------------------


def stable_id(*parts: str) -> str:
    digest = hashlib.sha256("\x1f".join(("otlp", *parts)).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def moment_from_nanos(unix_nano: int, what: str) -> datetime:
    """`_EPOCH + timedelta(microseconds=unix_nano // 1_000)`, made from the fields of its second, remembered
    (a file's records share their seconds): a datetime made of its fields costs a third less than a sum."""
    if unix_nano <= 0:
        raise SourceFormatError(f"the {what} has no timestamp (timeUnixNano is 0 or missing)")
    second, micros = divmod(unix_nano // 1_000, 1_000_000)
    fields = _SECOND_FIELDS.get(second)
    if fields is None:
        fields = _second_fields(second, unix_nano, what)
    return datetime(*fields, micros, UTC)


def _second_fields(second: int, unix_nano: int, what: str) -> tuple[int, int, int, int, int, int]:
    """The date and time of a whole second since the epoch, remembered; a second past what a datetime can
    hold is refused (a time within it would be too)."""
    try:
        moment = _EPOCH + timedelta(seconds=second)
    except OverflowError:
        raise SourceFormatError(
            f"the {what}'s timestamp {unix_nano} is not a time in Unix nanoseconds"
        ) from None
    if len(_SECOND_FIELDS) >= _MAX_SECONDS:
        _SECOND_FIELDS.clear()  # a bound on memory: a file's records come roughly in order of time
    fields = _SECOND_FIELDS[second] = (
        moment.year,
        moment.month,
        moment.day,
        moment.hour,
        moment.minute,
        moment.second,
    )
    return fields


#: the date and time fields of the seconds `moment_from_nanos` met last (at most `_MAX_SECONDS`)
_SECOND_FIELDS: dict[int, tuple[int, int, int, int, int, int]] = {}
_MAX_SECONDS = 65_536


def _text_or_none(value: AttributeValue | None) -> str | None:
    return None if value is None else str(value)
