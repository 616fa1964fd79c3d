"""What a log record says of its error when no SDK recorded an exception on it: a structured body's message
and fields, and a stack trace a logger wrote (`grouping.logged_traces`).

An app that logs JSON to its console (zap, zerolog, slog, pino, bunyan, winston, structlog, Serilog,
logstash-logback-encoder, the ECS loggers) reaches the backend through a log collector with that JSON as the
record's body: a string (the filelog receiver without a `json_parser`, or with one that parses into
attributes and keeps the body) or a map (`parse_to: body`, read as its JSON text). One that logs logfmt
(go-kit, logrus's text formatter, Heroku's router) gives its `key=value` line. Read as a message, the whole
line grouped and titled the issue, `{"level":"error","ts":...,"msg":"charge failed",...}`: its timestamp,
caller and ids were its words (in logfmt, every value a parameter), so log statements of a service shared a
signature.

`read_without_exception` reads such a body as the collector's `json_parser` (or `key_value_parser`) reads
it into attributes: its fields, a nested object's keys joined with dots and an array as its JSON text (as
OTLP attributes are flattened), a logfmt value as its text (`logfmt`); the message is its message field
(`MESSAGE_FIELDS`); the record's own attributes win over a field of the same name; the body is kept as
`log.body`, and `rounds.message_from` names the field. A body that is not one JSON object or logfmt line of
at most `MAX_STRUCTURED_BODY` characters, or without a message field, is read as before. A body of lines as
Android's logcat prints them is read without their prefixes (`logcat_body`; `rounds.message_from` says
`logcat`). Earlier releases grouped such a body as a message; the signature made then keeps receiving it
(`logged_traces.message_read_before`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import orjson

from rounds_bot.grouping.logged_traces import LOG_BODY, MESSAGE_FROM, logged_exception, note_source
from rounds_bot.grouping.stacktrace import logcat
from rounds_bot.models import AttributeValue
from rounds_bot.sources.logfmt import logfmt_pairs
from rounds_bot.sources.otlp_json import flatten_into

#: a structured logger's message field, by the names the common ones give it, looked at in this order: ECS,
#: zerolog, winston, logstash-logback-encoder and python-json-logger (`message`); zap, slog, pino, bunyan and
#: logrus (`msg`); Serilog's compact JSON, its message template first (`@mt`, then `@m`); structlog (`event`)
MESSAGE_FIELDS = ("message", "msg", "@mt", "@m", "event")
#: where a record with an empty body keeps its message, in this order: a pipeline's parsed `message`
#: (the one SigNoz's grouped SQL reads too, `signoz.queries.log_message_sql`), then `msg` (zap, slog,
#: pino and logrus, their JSON parsed into attributes by the collector's `json_parser`)
MESSAGE_ATTRIBUTES = ("message", "msg")
#: a longer body is read as text: parsing it would cost more than it can tell
MAX_STRUCTURED_BODY = 65_536
#: what `rounds.message_from` says of a body read without its logcat prefixes (`logcat_body`)
LOGCAT = "logcat"


class StructuredBody(NamedTuple):
    """A JSON body's message, the field it was in, and its other fields, flattened."""

    message: str
    field: str
    fields: dict[str, AttributeValue]


class LoggedError(NamedTuple):
    """What a log record with no exception attribute says of its error."""

    error_type: str | None
    message: str
    stacktrace: str | None


def logcat_body(body: str) -> StructuredBody | None:
    """A body of lines as Android's logcat prints them (`grouping.stacktrace.logcat.message_of`), read without
    their prefixes: the process id in them changes its width (`( 1234)`, `(20931)`) and so the template."""
    message = logcat.message_of(body.strip("\n"))
    return None if message is None or not message.strip() else StructuredBody(message, LOGCAT, {})


def structured_body(body: str) -> StructuredBody | None:
    """The body read as a structured log line, or None when it is neither one JSON object nor one logfmt line
    with a message."""
    text = body.strip()
    if len(text) > MAX_STRUCTURED_BODY:
        return None
    value: object
    if text.startswith("{"):
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:  # not JSON after all (or an integer past 64 bits): text, as before
            return None
    elif "msg=" in text or "message=" in text:  # (the only message fields logfmt writers use)
        value = logfmt_pairs(text)
    else:
        return None
    if not isinstance(value, dict):
        return None
    field = next((name for name in MESSAGE_FIELDS if _is_message(value.get(name))), None)
    if field is None:
        return None
    fields: dict[str, AttributeValue] = {}
    for key, item in value.items():
        if key != field:
            flatten_into(fields, str(key), item)
    return StructuredBody(value[field], field, fields)


def read_without_exception(
    body: str, own: Mapping[str, AttributeValue], attributes: dict[str, AttributeValue]
) -> LoggedError:
    """The error of a log record whose own attributes (`own`) hold no `exception.*`: a structured body's
    message and a logged trace's exception (else the body as the message). `attributes`, the event's, gain
    a structured body's fields (after those already there) and say where the message and trace were."""
    structured = structured_body(body) or logcat_body(body)
    text = body
    if structured is not None:
        for key, value in structured.fields.items():
            attributes.setdefault(key, value)
        own = {**structured.fields, **own}
        text = structured.message
        attributes[LOG_BODY] = body
        attributes[MESSAGE_FROM] = structured.field
    logged = logged_exception(text, own)
    if logged is None:
        return LoggedError(None, text, None)
    note_source(attributes, logged, body)
    return LoggedError(logged.error_type, logged.message, logged.stacktrace)


def attribute_message(body: str, own: Mapping[str, AttributeValue]) -> str:
    """The body, else (when it is empty) the first text attribute of `MESSAGE_ATTRIBUTES`: read as the
    body alone, every record whose logger put its message in attributes was one group of no message."""
    if body:
        return body
    for name in MESSAGE_ATTRIBUTES:
        value = own.get(name)
        if isinstance(value, str) and _is_message(value):
            return value
    return ""


def _is_message(value: object) -> bool:
    return isinstance(value, str) and not value.isspace() and value != ""
