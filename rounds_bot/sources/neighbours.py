"""The log records just before an error log: what the code was doing when it failed.

While a file source streams its records, `Neighbours` keeps the last few records below ERROR of each trace and
service (and, for records outside any trace, of each service), and hands an error log the ones logged shortly
before it. Memory stays bounded whatever the file holds: a few records per key, a body cut to a few hundred
characters, and at most `MAX_KEYS` keys, the least recently written forgotten first.

    neighbours.note(trace_id, service, moment, severity, body)    a record below ERROR, in file order
    neighbours.before(trace_id, service, moment)                  the context records of an error at `moment`
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

_Noted = tuple[int, str, str]


class Neighbours:
    """The last records below ERROR per (trace, service), and per service for untraced records."""

    def __init__(self, max_keys: int = MAX_KEYS) -> None:
        self.max_keys = max_keys
        self._recent: OrderedDict[tuple[str, str], deque[_Noted]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._recent)

    def note(self, trace_id: str, service: str, moment: int, severity: str, body: str) -> None:
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
        recent.append((moment, severity, body[:KEPT_BODY_CHARS]))

    def before(self, trace_id: str, service: str, moment: int) -> list[ContextRecord]:
        """The records of the error's trace and service (or of its service, when it has no trace) logged in
        the minute before it, oldest first."""
        recent = self._recent.get((trace_id, service))
        if not recent or moment <= 0:
            return []
        return [
            ContextRecord(timestamp=_EPOCH + timedelta(microseconds=at // 1_000), severity=level, body=body)
            for at, level, body in recent
            if moment - WINDOW_NANOS < at <= moment
        ]


def severity_name(text: str, number: int) -> str:
    """A record's severity as its bridge wrote it, or the name OTLP gives its number."""
    if text.strip():
        return text.strip()
    return next((name for low, name in reversed(_SEVERITY_NAMES) if number >= low), "")
