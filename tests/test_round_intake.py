"""Only new records pay: a source that recognises counted occurrences from the raw record is asked with the
ids they are stored under, so an id the redaction boundary hashes is recognised too, and every occurrence is
counted once, with the same report as when the grouping step finds them."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from rounds_bot.models import ErrorEvent
from rounds_bot.redact import Redactor
from rounds_bot.redact.ids import HASHED_PREFIX, hashed_id
from rounds_bot.round.intake import already_counted
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.sources import otlp_json
from rounds_bot.sources.base import Counted, PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from rounds_bot.tracker.dryrun import DryRunTracker
from tests.test_otlp_lean import write_otlp
from tests.test_redact_fast_paths import hostile_ids

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
#: an id that holds a secret: the redaction boundary stores a hash of it, never the id
SECRET_ID = "order-7 password=hunter2hunter2"


class RawSource:
    """A source that leaves out what `counted` names, as a file source does from raw records."""

    name = "test:raw"

    def __init__(self, events: list[ErrorEvent]) -> None:
        self.events = events
        self.asked: list[str] = []

    def poll(self, window: Window, known_group_ids: frozenset[str]) -> PollResult:
        return PollResult(events=[e for e in self.events if window.start <= e.timestamp < window.end])

    def poll_new(self, window: Window, known_group_ids: frozenset[str], counted: Counted) -> PollResult:
        inside = self.poll(window, known_group_ids).events
        self.asked += [e.event_id for e in inside]
        done = counted([e.event_id for e in inside])
        fresh = [e for e in inside if e.event_id not in done]
        return PollResult(events=fresh, already_counted=len(inside) - len(fresh))


def occurrence(event_id: str, seconds_ago: int) -> ErrorEvent:
    return ErrorEvent(
        event_id=event_id,
        timestamp=NOW - timedelta(seconds=seconds_ago),
        service="api",
        error_type="LookupError",
        message="order not found",
    )


def test_an_id_the_boundary_hashes_is_recognised_from_the_raw_record(clean_env, fresh_db, tmp_path) -> None:
    # inside the overlap the next round reads again, where counted ids are remembered
    source = RawSource([occurrence(SECRET_ID, 60), occurrence("plain-1", 45)])
    first = run_round(load_settings(), source, DryRunTracker(tmp_path), fresh_db, now=NOW)
    assert first.occurrences_counted == 2
    hashed = Redactor().identity(SECRET_ID)
    assert hashed != SECRET_ID
    # the secret never reached the database: its occurrence is remembered by the hash
    assert fresh_db.seen(["plain-1", SECRET_ID, hashed]) == {"plain-1", hashed}
    again = run_round(
        load_settings(), source, DryRunTracker(tmp_path), fresh_db, now=NOW + timedelta(minutes=1)
    )
    assert (again.events_read, again.already_counted, again.occurrences_counted) == (2, 2, 0)
    assert source.asked == [SECRET_ID, "plain-1"] * 2  # asked about, by the raw ids, both times
    assert sum(signature.total_count for signature in fresh_db.signatures()) == 2


def test_a_first_round_asks_the_database_about_no_id_and_the_next_finds_them_all(
    clean_env, fresh_db, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # nothing is stored before a first round: whether anything is, is asked once a step, not once a batch
    asked: list[list[str]] = []
    seen = fresh_db.seen
    monkeypatch.setattr(fresh_db, "seen", lambda ids: seen(asked.append(list(ids)) or asked[-1]))
    source = RawSource([occurrence(f"first-{n}", 60 - n) for n in range(5)])
    first = run_round(load_settings(), source, DryRunTracker(tmp_path), fresh_db, now=NOW)
    assert (first.events_read, first.already_counted, first.occurrences_counted) == (5, 0, 5)
    assert asked == []
    again = run_round(
        load_settings(), source, DryRunTracker(tmp_path), fresh_db, now=NOW + timedelta(minutes=1)
    )
    assert (again.events_read, again.already_counted, again.occurrences_counted) == (5, 5, 0)
    assert {event_id for ids in asked for event_id in ids} >= {f"first-{n}" for n in range(5)}


def test_a_quiet_round_over_a_file_builds_no_record_and_reports_as_before(
    clean_env: pytest.MonkeyPatch, fresh_db, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_otlp(tmp_path / "telemetry.jsonl", 300, 40, NOW - timedelta(minutes=5))
    clean_env.setenv("ROUNDS_CURSOR_OVERLAP_SECONDS", "3600")
    settings = load_settings()
    source = OtlpFileSource(data)
    first = run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=NOW, reads_whole_history=True)
    assert first.occurrences_counted == first.events_read == 300

    def never(plain: object) -> None:
        raise AssertionError("a counted record was built")

    monkeypatch.setattr(otlp_json.Span, "model_validate", never)
    monkeypatch.setattr(otlp_json.LogRecord, "model_validate", never)
    again = run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=NOW + timedelta(minutes=1))
    assert (again.events_read, again.already_counted, again.occurrences_counted) == (300, 300, 0)
    assert sum(signature.total_count for signature in fresh_db.signatures()) == 300


def test_an_id_stored_as_it_is_is_found_without_redacting_it(
    clean_env, fresh_db, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = RawSource([occurrence(SECRET_ID, 60), occurrence("plain-1", 45)])
    run_round(load_settings(), source, DryRunTracker(tmp_path), fresh_db, now=NOW)
    redacted: list[str] = []
    identity = Redactor.identity

    def watched(self: Redactor, value: str) -> str:
        redacted.append(value)
        return identity(self, value)

    monkeypatch.setattr(Redactor, "identity", watched)
    again = run_round(
        load_settings(), source, DryRunTracker(tmp_path), fresh_db, now=NOW + timedelta(minutes=1)
    )
    assert (again.already_counted, again.occurrences_counted) == (2, 0)
    # the plain id was found as it is; only the one stored as a hash was redacted to be found
    assert redacted == [SECRET_ID]


def counted_the_long_way(raw_ids: list[str], store: Store, redactor: Redactor) -> set[str]:
    """What the intake's check found before it looked hashes up: every id not stored as it is redacted."""
    found = store.seen(raw_id for raw_id in raw_ids if not raw_id.startswith(HASHED_PREFIX))
    stored = {raw_id: redactor.identity(raw_id) for raw_id in raw_ids if raw_id not in found}
    seen = store.seen(stored.values())
    return found | {raw_id for raw_id, safe in stored.items() if safe in seen}


def test_the_check_finds_what_redacting_every_id_found_whatever_form_each_was_stored_in() -> None:
    chosen = random.Random(26)
    redactor = Redactor()
    ids = [*(value for value in hostile_ids() if value), SECRET_ID, "plain-1"]
    ids += [hashed_id(value) for value in ids[::40]] + [f"{HASHED_PREFIX}{value}" for value in ids[::30]]
    store = Store.memory()
    stored = chosen.sample(ids, len(ids) // 3)
    # the form each is stored in now, and the other form (as rules of another release might have made it)
    forms = [redactor.identity(value) for value in stored[::2]]
    forms += [hashed_id(value) if redactor.identity(value) == value else value for value in stored[1::2]]
    with store.db.conn:
        store.mark_seen((form, "s1", NOW) for form in forms)
    for batch in (ids, ids[::7], [*ids[:50], *ids[:50]]):
        found = already_counted(batch, store, redactor)
        assert found == counted_the_long_way(batch, store, Redactor())
    assert 0 < len(already_counted(ids, store, redactor)) < len(ids)


def test_before_the_first_round_nothing_is_looked_up_or_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store.memory()

    def never(*args: object) -> None:
        raise AssertionError("looked up or redacted")

    monkeypatch.setattr(Store, "seen", never)
    monkeypatch.setattr(Redactor, "identity", never)
    assert already_counted(["plain-1", SECRET_ID, f"{HASHED_PREFIX}{'0' * 32}"], store, Redactor()) == set()
