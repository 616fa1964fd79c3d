"""The log records just before an error log: what the code was doing when it failed.

While a file source streams its records, `Neighbours` keeps the last few records below ERROR of each trace and
service (and, for records outside any trace, of each service), and hands an error log the ones logged shortly
before it. Memory stays bounded whatever the file holds: a few records per key, a body cut to a few hundred
characters, and at most `MAX_KEYS` keys, the least recently written forgotten first.

    neighbours.note(service, trace_id, moment, severity_text, severity_number, body)    a record below ERROR
    context_records(neighbours.before(service, trace_id, moment))    the context of an error at `moment`
"""

from __future__ import annotations

from collections import OrderedDict, deque
from datetime import UTC, datetime, timedelta

from rounds_bot.models import CONTEXT_BODY_CHARS, MAX_CONTEXT_RECORDS, ContextRecord

#: keys (trace and service, or service alone) remembered at most
MAX_KEYS = 4_096
#: a record this long before the error, or more, is not its neighbour
WINDOW_NANOS = 60 * 1_000_000_000
#: characters of a body kept; redaction cuts to CONTEXT_BODY_CHARS and says so
KEPT_BODY_CHARS = 2 * CONTEXT_BODY_CHARS

#: OTLP's severity numbers by range, for a record that has no severityText
_SEVERITY_NAMES = ((1, "TRACE"), (5, "DEBUG"), (9, "INFO"), (13, "WARN"), (17, "ERROR"), (21, "FATAL"))
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: the first nanosecond a datetime cannot hold (year 10000)
_LAST_NANOS = 253_402_300_800 * 1_000_000_000

Noted = tuple[int, str, int, str]


class Neighbours:
    """The last records below ERROR per (trace, service), and per service for untraced records."""

    def __init__(self, max_keys: int = MAX_KEYS) -> None:
        self.max_keys = max_keys
        self._recent: OrderedDict[tuple[str, str], deque[Noted]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._recent)

    def note(
        self, service: str, trace_id: str, moment: int, severity_text: str, severity_number: int, body: str
    ) -> None:
        """A record below ERROR; one without a time (or with one no clock shows) cannot be placed before
        anything and is not kept."""
        if not 0 < moment < _LAST_NANOS:
            return
        key = (trace_id, service)
        recent = self._recent.get(key)
        if recent is None:
            recent = self._recent[key] = deque(maxlen=MAX_CONTEXT_RECORDS)
            if len(self._recent) > self.max_keys:
                self._recent.popitem(last=False)
        else:
            self._recent.move_to_end(key)
        # the severity is named only for the few records an error takes: most records are never shown
        recent.append((moment, severity_text, severity_number, body[:KEPT_BODY_CHARS]))

    def before(self, service: str, trace_id: str, moment: int) -> list[Noted]:
        """The records of the error's trace and service (or of its service, when it has no trace) logged in
        the minute before it, oldest first, as kept: `context_records` makes them an event's context when the
        event is built (most errors of a file read again were counted before and are never built)."""
        recent = self._recent.get((trace_id, service))
        if not recent or moment <= 0:
            return []
        return [noted for noted in recent if moment - WINDOW_NANOS < noted[0] <= moment]


def context_records(noted: list[Noted]) -> list[ContextRecord]:
    """Records as `before` gave them, as an event's context."""
    # built without validation: every value is already of its field's type (a str, a datetime)
    return [
        ContextRecord.model_construct(
            timestamp=_EPOCH + timedelta(microseconds=at // 1_000),
            severity=severity_name(text, number),
            body=body,
        )
        for at, text, number, body in noted
    ]


def severity_name(text: str, number: int) -> str:
    """A record's severity as its bridge wrote it, or the name OTLP gives its number."""
    if text.strip():
        return text.strip()
    return next((name for low, name in reversed(_SEVERITY_NAMES) if number >= low), "")
