"""The round's first step: what the source holds that no earlier round counted, redacted once.

    polled = read_new(source, window, store, redactor)

A source that can recognise an occurrence already counted from its raw record (`SkipsCounted`) is given
the check, so those records are never built, redacted or grouped: a quiet round over a window it has fully
counted costs little more than reading it. The check compares the id an occurrence would be stored under
(`Redactor.identity` of the source's id: the same function the redaction boundary applies to it) with
the ids earlier rounds stored, so the raw check and the stored identity cannot disagree, and an occurrence
is still counted once (`already_counted`, which finds that identity without redacting most ids). Other
sources return everything and the grouping step finds what was counted.

A source that can (`PollsInto`: the file source) also gives each event it builds to the redaction boundary
(`Boundary`) the moment it builds it, so a raw event is never kept nor written to disk; the events of other
sources are redacted as they return them (`redact_poll`).
"""

from __future__ import annotations

from rounds_bot.redact import Redactor
from rounds_bot.redact.boundary import Boundary, redact_poll
from rounds_bot.redact.ids import HASHED_PREFIX, hashed_id
from rounds_bot.sources.base import PollResult, PollsInto, SkipsCounted, Source, Window
from rounds_bot.store import Store


def read_new(source: Source, window: Window, store: Store, redactor: Redactor) -> PollResult:
    known_groups = frozenset(store.group_map())
    if isinstance(source, SkipsCounted):
        # asked once, not once a batch: nothing is stored while the source is read
        stored_any = store.any_seen()

        def counted(raw_ids: list[str]) -> set[str]:
            return already_counted(raw_ids, store, redactor) if stored_any else set()

        if isinstance(source, PollsInto):
            boundary = Boundary(redactor)
            return boundary.finish(source.poll_into(window, known_groups, counted, boundary))
        return redact_poll(redactor, source.poll_new(window, known_groups, counted))
    return redact_poll(redactor, source.poll(window, known_groups))


def already_counted(raw_ids: list[str], store: Store, redactor: Redactor) -> set[str]:
    """Those of `raw_ids` whose identity (`Redactor.identity`) an earlier round stored, found redacting few.

    The identity of an id is the id itself or its hash (`hashed_id`). A raw id found stored as it is was kept
    unchanged by redaction: a changed id is stored as "sha256:..." (`HASHED_PREFIX`), which a raw id without
    that prefix cannot equal. One not stored as it is was counted exactly when its identity is its hash and
    that is stored: so its hash is looked up, and only an id whose hash is found is redacted, to be sure the
    hash is its identity (under the rules of an earlier release, or another IP policy, it might have been
    hashed where it is kept now). A raw id with the prefix is redacted to its identity (a hash can be kept
    as it is). Before the first round nothing is stored and nothing is looked up.
    """
    if not store.any_seen():
        return set()
    found = store.seen(raw_id for raw_id in raw_ids if not raw_id.startswith(HASHED_PREFIX))
    forms = [
        (raw_id, redactor.identity(raw_id) if raw_id.startswith(HASHED_PREFIX) else hashed_id(raw_id))
        for raw_id in raw_ids
        if raw_id not in found
    ]
    stored = store.seen(form for _, form in forms)
    return found | {
        raw_id
        for raw_id, form in forms
        if form in stored and (raw_id.startswith(HASHED_PREFIX) or redactor.identity(raw_id) == form)
    }
