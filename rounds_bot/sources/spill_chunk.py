"""One chunk of an event spill (`spill.py`) as it is written to its file, and read back.

A chunk is two pieces, one after the other: the events' keys (id, time, trace id: what a pass that only
sorts them reads), then the rest of their fields. The rest is two compressed parts (the first's length
first): every field but the stack trace, with a blank trace (None, empty, white space) in its place and
False for a trace there is to read; then the traces there are to read, most of a chunk's bytes. A pass that
asks no trace but whether there is one to read (`BLANK_TRACE`: the grouping engine's counting pass, which
skips the events that hold one) decodes the first part alone. Each part holds the field values of the
chunk's events as columns (one list per field, in the model's order), not one record per event: columns are
pickled faster than as many small records, need no field names, and hold the keys once. In a column of the
fields that take few values (a service's name, ...) equal values are one object, written once and read back
once. Each event's values were validated when it was made, so it is put back as it was, unchanged and
without validating it again (`models.assembled_event`), with the fields it was given (`model_fields_set`).
lz4 rather than zlib: it compresses a chunk a third less, four times faster, both ways.

    keys, rest = written(events)
    read_keys(keys) == [key_of(event) for event in events]
    read_events(keys, rest) == events
    read_fields(keys, rest, names) == [fields_of(event, names) for event in events]
    read_fields(keys, rest, ("message", BLANK_TRACE))    the trace only when blank, the traces not read
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Hashable, Sequence
from datetime import datetime
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import Any, Literal, TypeVar

import lz4.frame

from rounds_bot.models import ErrorEvent, assembled_event

#: what sorts an event without reading it whole: its id, its time, its trace id
Key = tuple[str, datetime, str | None]

_FIELDS = tuple(ErrorEvent.model_fields)
_KEY_FIELDS = ("event_id", "timestamp", "trace_id")
#: the fields of the second piece, in the model's order
_REST = tuple(name for name in _FIELDS if name not in _KEY_FIELDS)
_rest_of = itemgetter(*_REST)
_TRACE_AT = _REST.index("stacktrace")
#: a field a chunk is read for as if it were the event's: its `stacktrace` when blank (None, empty or white
#: space: nothing to read), else False
BLANK_TRACE = "blank_stacktrace"
#: the length of the rest's first part, before it
_LENGTH = struct.Struct("<Q")
#: the fields of which a chunk holds few different values (a service's name, ...)
_FEW = frozenset(
    {"service", "error_type", "error_code", "severity", "span_kind", "service_version", "environment"}
)


def key_of(event: ErrorEvent) -> Key:
    return event.event_id, event.timestamp, event.trace_id


def written(events: list[ErrorEvent]) -> tuple[bytes, bytes]:
    """The chunk's two pieces: its keys, and the rest of its events."""
    # each step a `map` over the chunk's events, without a Python step per event (a chunk is written for
    # every thousand events a large round reads)
    values = list(map(_values_of, events))
    keys = tuple(zip(*map(_keys_in, values), strict=True))
    rest: list[Sequence[Any]] = [
        _shared(column) if name in _FEW else column
        for name, column in zip(_REST, _columns(values), strict=True)
    ]
    traces = rest[_TRACE_AT]
    rest[_TRACE_AT] = [False if trace and not trace.isspace() else trace for trace in traces]
    first = _compressed((rest, _shared(_fields_sets(events))))
    to_read = [trace for trace in traces if trace and not trace.isspace()]
    return _compressed(keys), _LENGTH.pack(len(first)) + first + _compressed(to_read)


def read_keys(keys: bytes) -> list[Key]:
    ids, moments, trace_ids = _decompressed(keys)
    return list(zip(ids, moments, trace_ids, strict=True))


def read_events(keys: bytes, rest: bytes) -> list[ErrorEvent]:
    ids, moments, trace_ids = _decompressed(keys)
    first, traces = _parts(rest)
    columns, fields_set = _decompressed(first)
    if not ids:
        return []
    columns[_TRACE_AT] = _with_traces(columns[_TRACE_AT], traces)
    by_name = dict(zip(_REST, columns, strict=True))
    by_name.update(event_id=ids, timestamp=moments, trace_id=trace_ids)
    rows = zip(*(by_name[name] for name in _FIELDS), strict=True)
    values = map(dict, map(zip, repeat(_FIELDS), rows))
    return list(map(assembled_event, values, map(set, fields_set)))


def read_fields(keys: bytes, rest: bytes, names: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """Each event's values of the fields `names` (`BLANK_TRACE` among them, if wanted), as `read_events`
    would give them, without making the events: a part none of `names` is in is not even decompressed."""
    by_name: dict[str, Any] = {}
    if any(name in _KEY_FIELDS for name in names):
        by_name.update(zip(_KEY_FIELDS, _decompressed(keys), strict=True))
    if any(name not in _KEY_FIELDS for name in names):
        first, traces = _parts(rest)
        by_name.update(zip(_REST, _decompressed(first)[0], strict=True))
        by_name[BLANK_TRACE] = blank = by_name["stacktrace"]
        if "stacktrace" in names:
            by_name["stacktrace"] = _with_traces(blank, traces)
    return list(zip(*(by_name[name] for name in names), strict=True))


def fields_of(event: ErrorEvent, names: tuple[str, ...]) -> tuple[Any, ...]:
    """`read_fields` of one event."""
    values = event.__dict__
    if BLANK_TRACE in names:
        return tuple(_blank(values["stacktrace"]) if name == BLANK_TRACE else values[name] for name in names)
    return tuple(values[name] for name in names)


def _blank(trace: str | None) -> str | Literal[False] | None:
    """A `BLANK_TRACE` value: the trace when blank, else False."""
    return False if trace and not trace.isspace() else trace


def _parts(rest: bytes) -> tuple[memoryview, memoryview]:
    """The rest's two compressed parts (views, not copies): every field but the traces to read, and those
    traces."""
    (length,) = _LENGTH.unpack_from(rest)
    start, view = _LENGTH.size, memoryview(rest)
    return view[start : start + length], view[start + length :]


def _with_traces(blank: Sequence[str | Literal[False] | None], traces: memoryview) -> list[str | None]:
    """The stack trace column: the blank column with the traces to read (decompressed) put back in order."""
    to_read = iter(_decompressed(traces))
    return [next(to_read) if trace is False else trace for trace in blank]


def _columns(values: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The values of the fields past the keys (`_REST`), one tuple per field, from the events' values."""
    return list(zip(*map(_rest_of, values), strict=True))


def _shared(column: Sequence[_V]) -> list[_V]:
    """The column with one object for equal values: pickled once per chunk, and read back once."""
    first: dict[_V, _V] = {}
    return list(map(first.setdefault, column, column))


def _fields_sets(events: list[ErrorEvent]) -> list[frozenset[str]]:
    """Each event's `model_fields_set`, frozen (equal ones are shared by `_shared`, so pickled once)."""
    return list(map(frozenset, map(_fields_set_of, events)))


_V = TypeVar("_V", bound=Hashable)
_values_of = attrgetter("__dict__")
_fields_set_of = attrgetter("__pydantic_fields_set__")  # what `model_fields_set` gives
_keys_in = itemgetter(*_KEY_FIELDS)


def _compressed(value: object) -> bytes:
    return bytes(lz4.frame.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)))


def _decompressed(data: bytes | memoryview) -> Any:
    return pickle.loads(lz4.frame.decompress(data))  # the spill's own file, written by `_compressed`
