"""The round's first step: what the source holds that no earlier round counted, redacted once.

    polled = read_new(source, window, store, redactor)

A source that can recognise an occurrence already counted from its raw record (`SkipsCounted`) is given
the check, so those records are never built, redacted or grouped: a quiet round over a window it has fully
counted costs little more than reading it. The check compares the id an occurrence would be stored under
(`Redactor.identity` of the source's id: the same function the redaction boundary applies to it) with
the ids earlier rounds stored, so the raw check and the stored identity cannot disagree, and an occurrence
is still counted once. Other sources return everything and the grouping step finds what was counted.

A source that can (`PollsInto`: the file source) also gives each event it builds to the redaction boundary
(`Boundary`) the moment it builds it, so a raw event is never kept nor written to disk; the events of other
sources are redacted as they return them (`Redactor.poll`).
"""

from __future__ import annotations

from rounds_bot.redact import Redactor
from rounds_bot.redact.event import HASHED_PREFIX, Boundary
from rounds_bot.sources.base import PollResult, PollsInto, SkipsCounted, Source, Window
from rounds_bot.store import Store


def read_new(source: Source, window: Window, store: Store, redactor: Redactor) -> PollResult:
    known_groups = frozenset(store.group_map())
    if isinstance(source, SkipsCounted):

        def counted(raw_ids: list[str]) -> set[str]:
            # A raw id found stored as it is was kept unchanged by redaction: a changed id is stored as
            # "sha256:..." (`HASHED_PREFIX`), which a raw id without that prefix cannot equal. So those
            # are found without redacting them; only the rest are redacted to the form they are stored in.
            found = store.seen(raw_id for raw_id in raw_ids if not raw_id.startswith(HASHED_PREFIX))
            stored = {raw_id: redactor.identity(raw_id) for raw_id in raw_ids if raw_id not in found}
            seen = store.seen(stored.values())
            return found | {raw_id for raw_id, safe in stored.items() if safe in seen}

        if isinstance(source, PollsInto):
            boundary = Boundary(redactor)
            return boundary.finish(source.poll_into(window, known_groups, counted, boundary))
        return redactor.poll(source.poll_new(window, known_groups, counted))
    return redactor.poll(source.poll(window, known_groups))
