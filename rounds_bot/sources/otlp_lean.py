"""OTLP/JSON lines read lean: orjson into plain structures, an event built only for the records that are
errors and were not counted before.

    line = lean_line(raw_line)    # None: the line is not plainly well-formed, read it with the models

A line is read lean only when every object in it has exactly the JSON types the models accept without
coercion (strings where a string is due, integers or decimal strings for 64-bit integers, ...; checked by
`otlp_lean_check.py`). Anything else (a value of another type, a field spelled in snake_case, JSON orjson
refuses) returns None, and the caller reads the line with the models, which accept or refuse it and say why
exactly as before. So the lean reading never accepts a line the models refuse, and gives the same events for
every line it accepts: the facts of a record read here (`span_facts`, `log_facts`, `origin_of`) are the ones
the models' reading takes (`otlp_events.py`), and both build the event alike (`otlp_build.py`).

What the reading takes of each error record (`LeanSpan`, `LogFacts`) is read while the record is checked, in
one pass (`otlp_lean_check.py`); a record already counted costs that pass and a hash, never an event.
"""

from __future__ import annotations

from functools import lru_cache

import orjson

from rounds_bot.sources.log_bodies import attribute_message
from rounds_bot.sources.otlp_build import SEVERITY_BY_TEXT, SEVERITY_ERROR, LogFacts, Origin
from rounds_bot.sources.otlp_lean_check import (
    LeanLine,
    LeanScope,
    LeanSpan,
    Plain,
    checked_document,
    decode_plain,
    flat_key_values,
    message_of,
)
from rounds_bot.sources.otlp_lean_scalars import NotLean, lean_int, lean_severity_number, lean_trace_id

__all__ = [  # with the types of what `lean_line` gives
    "LeanLine",
    "LeanScope",
    "LeanSpan",
    "checked_logs",
    "decode_plain",
    "lean_line",
    "log_moment",
    "log_neighbour",
    "log_severity",
    "origin_of",
]


def lean_line(raw: bytes | str) -> LeanLine | None:
    """The line's scopes and records, checked; None when the line must be read with the models."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    try:
        return checked_document(orjson.loads(data))
    except (orjson.JSONDecodeError, NotLean, ValueError, TypeError, KeyError):
        return None


def checked_logs(raw: bytes) -> list[LeanScope[LogFacts]]:
    """The log scopes of a line `lean_line` accepted before (the same bytes), without checking it again."""
    document = orjson.loads(raw)
    return [
        LeanScope(resource_logs.get("resource", {}), scoped.get("scope", {}), scoped.get("logRecords", []))
        for resource_logs in document.get("resourceLogs", ())
        for scoped in resource_logs.get("scopeLogs", ())
    ]


# --- what is read of records that are not errors, on plain structures ------------------------------


def log_severity(record: Plain) -> int:
    number = lean_severity_number(record.get("severityNumber", 0))
    if number:
        return number
    text = record.get("severityText", "").strip().upper()
    return SEVERITY_ERROR if text in SEVERITY_BY_TEXT else 0  # only "an error or not" is asked of it


def log_moment(record: Plain) -> int:
    return lean_int(record.get("timeUnixNano", 0)) or lean_int(record.get("observedTimeUnixNano", 0))


def origin_of(resource: Plain, scope: Plain) -> Origin:
    """`otlp_events.origin_of`, from a checked resource and scope."""
    return Origin.of(flat_key_values(resource.get("attributes", [])), scope.get("name", ""))


def log_neighbour(record: Plain, severity: int) -> tuple[str, int, str, int, str]:
    """A record below ERROR as `Neighbours.note` keeps it (trace id, time, severity text and number, body),
    as `otlp_events.neighbour_of` reads it from the models; `severity` is its `log_severity`. Most records are
    read only for this: a string body, the usual kind, is taken as it is, and a trace's id is decoded once. An
    empty body reads its message from its attributes, as an error record's (`log_bodies.attribute_message`).
    """
    body = record.get("body")
    text = "" if body is None else message_of(body)
    if not text:  # (its attributes read only then: most records below ERROR have a body)
        text = attribute_message(text, flat_key_values(record.get("attributes", [])))
    trace = record.get("traceId", "")
    return (
        _cached_trace_id(trace) if trace else "",
        log_moment(record),
        record.get("severityText", ""),
        severity,
        text,
    )


@lru_cache(maxsize=4_096)
def _cached_trace_id(value: str) -> str:
    """`lean_trace_id` of a checked id (a line read lean holds only valid ones), remembered: a trace's records
    come together."""
    return lean_trace_id(value)
