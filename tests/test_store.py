"""The signature database: migrations, WAL, the event log's idempotency, all-or-nothing round commits."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from signature_samples import a_signature

from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome
from rounds_bot.errors import SchemaTooNewError, StoreError
from rounds_bot.store import SCHEMA_VERSION, CascadeLinks, DiagnosisRecord, Store
from rounds_bot.store.upsert import upsert

NOW = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)


def test_a_new_database_is_migrated_to_the_current_schema(fresh_db):
    assert fresh_db.schema_version() == SCHEMA_VERSION
    assert {"signatures", "occurrence_buckets", "events", "runs", "ledger", "cursors"} <= set(
        fresh_db.db.table_names()
    )


def test_a_file_database_uses_wal(tmp_path):
    store = Store.open(tmp_path / "rounds.db")
    assert store.db.journal_mode == "wal"
    store.close()


def test_reopening_does_not_migrate_again(tmp_path):
    Store.open(tmp_path / "r.db").close()
    store = Store.open(tmp_path / "r.db")
    assert store.schema_version() == SCHEMA_VERSION
    store.close()


def test_a_database_from_a_newer_rounds_is_refused_untouched(tmp_path):
    path = tmp_path / "r.db"
    store = Store.open(path)
    store.db["meta"].upsert({"key": "schema_version", "value": str(SCHEMA_VERSION + 1)}, pk="key")
    store.close()
    with pytest.raises(SchemaTooNewError, match="upgrade rounds"):
        Store.open(path)
    assert sqlite3.connect(path).execute("select value from meta").fetchone()[0] == str(SCHEMA_VERSION + 1)


def test_an_unwritable_path_names_the_setting(tmp_path):
    with pytest.raises(StoreError, match="SIGNATURES_DB_PATH"):
        Store.open(tmp_path / "missing-folder" / "r.db")


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path):
    path = tmp_path / "r.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="is not a signature database: it is not an SQLite file"):
        Store.open(path)


def test_event_log_appends_once_per_idempotency_key(fresh_db):
    with fresh_db.transaction():
        assert fresh_db.append_event(
            "IncidentDetected", "detected:s1", signature_id="s1", run_id="r1", at=NOW
        )
        assert not fresh_db.append_event(
            "IncidentDetected", "detected:s1", signature_id="s1", run_id="r2", at=NOW
        )
    assert len(fresh_db.events_of("s1")) == 1


def test_status_is_derived_from_the_event_log(fresh_db):
    with fresh_db.transaction():
        fresh_db.append_event("IncidentDetected", "d", signature_id="s1", run_id="r", at=NOW)
    assert fresh_db.status("s1") == "open"
    with fresh_db.transaction():
        fresh_db.append_event("IncidentResolved", "res", signature_id="s1", run_id="r", at=NOW)
    assert fresh_db.status("s1") == "resolved"
    with fresh_db.transaction():
        fresh_db.append_event("Regressed", "reg", signature_id="s1", run_id="r", at=NOW)
    assert fresh_db.status("s1") == "open"


def test_a_failed_transaction_leaves_nothing_behind(fresh_db):
    with pytest.raises(RuntimeError), fresh_db.transaction():
        fresh_db.set_cursor("src", NOW)
        fresh_db.add_occurrences("s1", {"2026-11-01T10:00:00+00:00": 3})
        fresh_db.append_event("IncidentDetected", "d", signature_id="s1", run_id="r", at=NOW)
        raise RuntimeError("the round failed half-way")
    assert fresh_db.cursor("src") is None
    assert fresh_db.count_since("s1", NOW - timedelta(days=1)) == 0
    assert fresh_db.events_of("s1") == []


def test_occurrence_buckets_accumulate(fresh_db):
    with fresh_db.transaction():
        fresh_db.add_occurrences("s1", {"2026-11-01T10:00:00+00:00": 3})
        fresh_db.add_occurrences("s1", {"2026-11-01T10:00:00+00:00": 2, "2026-11-01T10:05:00+00:00": 1})
    assert fresh_db.count_since("s1", NOW) == 6
    assert fresh_db.count_since("s1", NOW + timedelta(minutes=5)) == 1


def test_seen_ids_are_forgotten_once_no_window_can_reach_them(fresh_db):
    with fresh_db.transaction():
        fresh_db.mark_seen([("e1", "s1", NOW), ("e2", "s1", NOW + timedelta(hours=1))])
        fresh_db.forget_seen_before(NOW + timedelta(minutes=30))
    assert fresh_db.seen(["e1", "e2", "e3"]) == {"e2"}


def test_ledger_sums_spend_since_a_moment(fresh_db):
    with fresh_db.transaction():
        fresh_db.book_cost(run_id="r", signature_id="s", usd=0.02, model="sonnet", note="", at=NOW)
        fresh_db.book_cost(run_id="r", signature_id="s", usd=0.03, model="sonnet", note="", at=NOW)
    assert fresh_db.spent_since(NOW - timedelta(days=1)) == pytest.approx(0.05)
    assert fresh_db.spent_since(NOW + timedelta(days=1)) == 0


def _signature(store, sid, service="api", issue_ref=None, first_seen="2026-11-01T10:00:00+00:00"):
    store.save(a_signature(sid, service=service, issue_ref=issue_ref, first_seen=first_seen))


def test_unfiled_ids_are_the_signatures_without_an_issue_oldest_first(fresh_db):
    with fresh_db.transaction():
        _signature(fresh_db, "s2", first_seen="2026-11-01T11:00:00+00:00")
        _signature(fresh_db, "s1", first_seen="2026-11-01T10:00:00+00:00")
        _signature(fresh_db, "s3", issue_ref="#3")
    assert fresh_db.unfiled_ids() == ["s1", "s2"]


def _outcome(status: str, root_cause: str) -> DiagnosisOutcome:
    """An attempt's outcome as stored; the root cause names which attempt it was."""
    if status != "ok":
        return DiagnosisOutcome(status=status, detail=root_cause)
    diagnosis = Diagnosis(
        classification="server_bug", root_cause=root_cause, suggested_fix="", confidence="low"
    )
    return DiagnosisOutcome(status="ok", diagnosis=diagnosis)


def test_diagnosed_neighbours_are_the_same_service_latest_ok_diagnoses(fresh_db):
    with fresh_db.transaction():
        for sid, service in (("me", "api"), ("a", "api"), ("b", "api"), ("other", "web")):
            _signature(fresh_db, sid, service=service)
        for sid, status, outcome in (
            ("a", "ok", "old"),
            ("a", "ok", "new"),
            ("b", "timeout", "x"),
            ("other", "ok", "y"),
            ("me", "ok", "z"),
        ):
            fresh_db.record_diagnosis(
                DiagnosisRecord(cache_key=sid, signature_id=sid, revision="r", at="t", status=status,
                                trigger="new", outcome=_outcome(status, outcome))
            )  # fmt: skip
    found = fresh_db.diagnosed_neighbours("api", exclude="me", limit=3)
    assert [(signature.id, outcome.diagnosis.root_cause) for signature, outcome in found] == [("a", "new")]


def test_a_stored_answer_a_later_rule_refuses_reads_as_an_invalid_answer_not_a_failed_round(fresh_db):
    """An answer stored by an earlier release that this one refuses (an evidence path holding a line break,
    refused since fix prompts print paths) is not used, and every other record still reads."""
    with fresh_db.transaction():
        _signature(fresh_db, "a")
        fresh_db.record_diagnosis(
            DiagnosisRecord(cache_key="a", signature_id="a", revision="r", at="t", status="ok",
                            trigger="new", outcome=_outcome("ok", "fine"))
        )  # fmt: skip
    stored = fresh_db.db["diagnoses"].get(1)["outcome"]
    item = '{"kind":"file","path":"%s","line":3,"explanation":"the loader"}'
    kept, refused = (
        stored.replace('"evidence":[]', f'"evidence":[{item % path}]') for path in ("x", "x\\n#")
    )
    assert kept != stored and DiagnosisOutcome.model_validate_json(kept).diagnosis is not None
    fresh_db.db.execute("update diagnoses set outcome = ? where id = 1", [refused])
    record = fresh_db.latest_diagnosis("a")
    assert record is not None and record.status == "invalid_answer" and record.outcome.diagnosis is None
    assert "breaks a rule of this release" in record.outcome.detail
    assert fresh_db.latest_good_diagnoses(["a"]) == {}


def test_a_signatures_cascade_links_outlive_its_next_save_and_empty_links_are_forgotten(fresh_db):
    fresh_db.save(a_signature("sig_effect"))
    fresh_db.save(a_signature("sig_quiet"))
    with fresh_db.transaction():
        fresh_db.set_cascade_links({"sig_effect": CascadeLinks(caused_by={"sig_cause": 3})})
    fresh_db.save(a_signature("sig_effect", title="updated"))  # a later round saves the signature again
    assert fresh_db.cascade_links() == {"sig_effect": CascadeLinks(caused_by={"sig_cause": 3}, causes={})}
    fresh_db.set_cascade_links({"sig_effect": CascadeLinks()})
    assert fresh_db.cascade_links() == {}


def test_a_row_upserted_is_inserted_then_updated_as_sqlite_utils_upserts_it(tmp_path):
    ours, theirs = Store.open(tmp_path / "ours.db"), Store.open(tmp_path / "theirs.db")
    rows = [
        {"source_group_id": "g1", "signature_id": "s1"},
        {"source_group_id": "g2", "signature_id": "s2"},
        {"source_group_id": "g1", "signature_id": "s3"},  # the same key again: updated in place
    ]
    for row in rows:
        upsert(ours.db, "source_groups", row, pk="source_group_id")
        theirs.db.table("source_groups").upsert(row, pk="source_group_id")
    query = "select rowid, * from source_groups order by rowid"
    assert list(ours.db.query(query)) == list(theirs.db.query(query))
    assert ours.group_map() == {"g1": "s3", "g2": "s2"}
