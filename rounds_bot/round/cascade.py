"""The round's cascade step: signatures whose errors share a trace, read as one problem.

    cascades = correlate_traces(polled.events, grouped.counted.signature_of(), after)
    cascades = cascades_of(grouped.traces, after)      the same, from what the grouping step kept of them

A request that fails in one service often fails in every service that called it: the payment service's
exception, then the checkout's 502, then the gateway's 502. Each is its own signature (each service's code
and error differ), but the issue a maintainer should start from is the first. Within one trace the errors
are ordered by cause: an error whose span is the parent of another's span comes after it (the caller fails
after its callee), else the earlier error comes first. The first error of a trace is where it began: each
signature of another service in the same trace is "caused by" the first one's signature, and the first
"causes" them. Errors of the same service in one trace are not a cascade (a retry, a log beside its
exception) and are listed on the path only.

Values in, values out: the round's (redacted) events, which signature each event was counted in and
the signatures as they will be after the round (their titles); nothing is read or written elsewhere.

A round sees a cascade only while its window holds a shared trace, so what earlier rounds saw is kept with
the signature (`store/cascades.py`) and carried over:

    cascades, links = carry_over(found, store.cascade_links(), statuses)

A link stays until the problem is gone: until either of its two signatures is resolved or merged into
another (their status from the event log). The counts add up the traces of every round that saw them.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import chain, compress
from operator import itemgetter

from rounds_bot.models import ErrorEvent, EventKind
from rounds_bot.render.cascade_section import Cascade, PathStep
from rounds_bot.round.spilled import SpilledBatches
from rounds_bot.round.trace_filter import SharedTraceFilter
from rounds_bot.signature import Signature
from rounds_bot.store import CascadeLinks

#: the errors of one trace listed on an issue's path at most
MAX_PATH = 8
#: statuses of a signature whose problem is gone: its cascade links are not kept
GONE = frozenset({"resolved", "merged"})


def correlate_traces(
    events: Iterable[ErrorEvent], signature_of: Mapping[str, str], after: dict[str, Signature]
) -> dict[str, Cascade]:
    """The cascade of each signature the round saw errors of in a trace shared with another signature (of
    the same service too: its neighbouring errors, on the path without a cause). `signature_of` names the
    signature each event counted was counted in (`Counted.signature_of`)."""
    errors = TraceErrors()
    for event in events:
        signature_id = signature_of.get(event.event_id)
        if signature_id is not None:
            errors.add(event, signature_id)
    return cascades_of(errors, after)


class TraceErrors:
    """The round's counted errors that have a trace, each with its signature, in the order counted: what
    `cascades_of` reads. A round may count a million; past `IN_MEMORY` they wait in a temporary file (the few
    fields a cascade shows), so the round's memory does not grow with them, and a fixed-size filter notes
    which traces may hold errors of two signatures (`SharedTraceFilter`): only those traces' errors are put
    in a temporary database to be gathered by trace (most traces show no cascade)."""

    IN_MEMORY = 20_000

    def __init__(self) -> None:
        self._rows: list[_Row] = []
        self._spilled: SpilledBatches[_Row] = SpilledBatches("rounds-traces-")
        self._filter: SharedTraceFilter | None = None  # made as the first batch is spilled

    def add(self, event: ErrorEvent, signature_id: str, micros: int | None = None) -> None:
        """Keep an error counted in `signature_id`; `micros`, when given, is its moment in UTC as microseconds
        since the epoch (what the tally of it gave, `Tally.add`)."""
        if not event.trace_id:
            return
        # a moment in UTC (the usual) as its microseconds since the epoch, quicker to write and to read back
        # than its text; any other as its text, which keeps its offset
        at: int | str | None = micros
        if at is None:
            moment = event.timestamp
            at = (moment - _EPOCH) // _MICROSECOND if moment.tzinfo is UTC else moment.isoformat()
        self._rows.append(
            (
                event.trace_id,
                at,
                event.event_id,
                event.span_id,
                event.parent_span_id,
                event.service,
                event.kind,
                signature_id,
            )
        )
        if len(self._rows) >= self.IN_MEMORY:
            self._spill()

    def shared(self) -> Iterator[tuple[str, list[tuple[ErrorEvent, str]]]]:
        """Each trace that holds errors of two signatures or more, in trace id order, with its errors."""
        if self._filter is None:
            traces: dict[str, list[_Row]] = defaultdict(list)
            for row in self._rows:
                traces[row[0]].append(row)
            for trace_id in sorted(traces):
                rows = traces[trace_id]
                if len({row[7] for row in rows}) >= 2:
                    yield trace_id, [_error(row) for row in rows]
            return
        self._note(self._rows)  # (noting a row again changes nothing)
        db = self._gathered()
        if db is None:
            return
        query = (
            "select e.* from errors e join (select trace_id from errors group by trace_id "
            "having count(distinct signature_id) >= 2) shared using (trace_id) order by e.trace_id, e.rowid"
        )
        try:
            current: str | None = None
            together: list[_Row] = []
            for row in db.execute(query):
                if row[0] != current:
                    if current is not None:
                        yield current, [_error(r) for r in together]
                    current, together = row[0], []
                together.append(row)
            if current is not None:
                yield current, [_error(r) for r in together]
        finally:
            db.close()

    def _spill(self) -> None:
        self._note(self._rows)
        self._spilled.write(self._rows)
        self._rows = []

    def _note(self, rows: list[_Row]) -> None:
        if self._filter is None:
            self._filter = SharedTraceFilter()
        self._filter.note_each(map(_trace_and_signature, rows))

    def _gathered(self) -> sqlite3.Connection | None:
        """A temporary database of the errors of every trace that may be shared, in the order counted (every
        error of a trace shared by two signatures is among them); None when there are none."""
        assert self._filter is not None
        may_share = self._filter.may_share_each
        db: sqlite3.Connection | None = None
        for batch in chain(self._spilled, [self._rows]):  # a batch at a time
            kept = list(compress(batch, may_share(map(_trace_of, batch))))
            if not kept:
                continue
            if db is None:
                db = sqlite3.connect("")  # a temporary database on disk, gone when closed
                db.execute(
                    "create table errors (trace_id text, at, event_id text, span_id text, "
                    "parent_span_id text, service text, kind text, signature_id text)"
                )
            db.executemany("insert into errors values (?, ?, ?, ?, ?, ?, ?, ?)", kept)
        return db


_Row = tuple[str, int | str, str, str | None, str | None, str, EventKind, str]
_trace_of = itemgetter(0)
_trace_and_signature = itemgetter(0, 7)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _error(row: _Row) -> tuple[ErrorEvent, str]:
    """An error as a cascade reads it (the fields it shows), and its signature."""
    trace_id, at, event_id, span_id, parent_span_id, service, kind, signature_id = row
    event = ErrorEvent.model_construct(
        event_id=event_id,
        timestamp=_EPOCH + timedelta(microseconds=at) if isinstance(at, int) else datetime.fromisoformat(at),
        service=service,
        kind=kind,
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent_span_id,
    )
    return event, signature_id


def cascades_of(errors: TraceErrors, after: dict[str, Signature]) -> dict[str, Cascade]:
    """`correlate_traces` from the round's errors as the grouping step counted them."""
    caused_by: dict[str, dict[str, int]] = defaultdict(dict)
    causes: dict[str, dict[str, int]] = defaultdict(dict)
    example: dict[str, tuple[str, list[tuple[ErrorEvent, str]]]] = {}
    for trace_id, trace_errors in errors.shared():
        ordered = causal_order(trace_errors)
        first_event, first = ordered[0]
        effects = {sid for event, sid in ordered[1:] if sid != first and event.service != first_event.service}
        for effect in sorted(effects):
            caused_by[effect][first] = caused_by[effect].get(first, 0) + 1
            causes[first][effect] = causes[first].get(effect, 0) + 1
        for signature_id in {sid for _, sid in ordered}:
            if _better_example(trace_id, ordered, example.get(signature_id), after.get(signature_id)):
                example[signature_id] = (trace_id, ordered)
    return {
        signature_id: Cascade(
            caused_by=dict(caused_by.get(signature_id, {})),
            causes=dict(causes.get(signature_id, {})),
            trace_id=trace_id,
            path=tuple(_step(event, sid, after) for event, sid in ordered[:MAX_PATH]),
        )
        for signature_id, (trace_id, ordered) in sorted(example.items())
    }


def causal_order(errors: list[tuple[ErrorEvent, str]]) -> list[tuple[ErrorEvent, str]]:
    """The errors of one trace, cause first: a callee's error before its caller's (the span whose parent is
    another error's span came first), else by time, then by event id (the same input, the same order)."""
    ordered = sorted(errors, key=lambda pair: (pair[0].timestamp, pair[0].event_id))
    by_span = {event.span_id: index for index, (event, _) in enumerate(ordered) if event.span_id}
    for _ in range(len(ordered) ** 2):  # bounded: ids that claim a cycle cannot loop forever
        moved = False
        for index, (event, _) in enumerate(ordered):
            parent = by_span.get(event.parent_span_id or "")
            if parent is not None and parent < index:
                ordered.insert(parent, ordered.pop(index))
                by_span = {e.span_id: i for i, (e, _) in enumerate(ordered) if e.span_id}
                moved = True
                break
        if not moved:
            break
    return ordered


def _better_example(
    trace_id: str,
    ordered: list[tuple[ErrorEvent, str]],
    current: tuple[str, list[tuple[ErrorEvent, str]]] | None,
    signature: Signature | None,
) -> bool:
    """The trace of the signature's representative (the one its issue shows) is the best example; else a
    trace with errors in more signatures; traces come in id order, so the first of equals stays."""
    if current is None:
        return True
    shown = signature.representative.trace_id if signature is not None else None
    if shown is not None and (trace_id == shown) != (current[0] == shown):
        return trace_id == shown
    return len({sid for _, sid in ordered}) > len({sid for _, sid in current[1]})


def _step(event: ErrorEvent, signature_id: str, after: dict[str, Signature]) -> PathStep:
    signature = after.get(signature_id)
    return PathStep(
        signature_id=signature_id,
        service=event.service,
        title=signature.title if signature is not None else signature_id,
        kind=event.kind,
        timestamp=event.timestamp,
    )


def carry_over(
    found: dict[str, Cascade], kept: Mapping[str, CascadeLinks], statuses: Mapping[str, str]
) -> tuple[dict[str, Cascade], dict[str, CascadeLinks]]:
    """This round's cascades with the links earlier rounds kept (the round's path and trace stay its own),
    and the links to keep now for every signature that had or has some (empty: forget them). `statuses`
    are the signatures' statuses before the round; a link to or of a signature whose problem is gone is
    dropped, unless this round saw it again."""
    cascades: dict[str, Cascade] = {}
    links: dict[str, CascadeLinks] = {}
    for signature_id in sorted({*found, *kept}):
        new = found.get(signature_id, Cascade())
        old = kept.get(signature_id, CascadeLinks())
        gone = statuses.get(signature_id) in GONE
        merged = CascadeLinks(
            caused_by=_added(new.caused_by, {} if gone else old.caused_by, statuses),
            causes=_added(new.causes, {} if gone else old.causes, statuses),
        )
        if merged or signature_id in kept:
            links[signature_id] = merged
        if merged or new.path:
            cascades[signature_id] = replace(
                new, caused_by=dict(merged.caused_by), causes=dict(merged.causes)
            )
    return cascades, links


def _added(new: Mapping[str, int], old: Mapping[str, int], statuses: Mapping[str, str]) -> dict[str, int]:
    counts = {sid: count for sid, count in old.items() if statuses.get(sid) not in GONE}
    for sid, count in new.items():
        counts[sid] = counts.get(sid, 0) + count
    return dict(sorted(counts.items()))
