"""Reads of many signatures at once give what one read per signature gives, past the size of one statement's
chunk too (a round reads thousands)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from diagnosis_samples import good_answer
from hypothesis import given
from hypothesis import strategies as st
from signature_samples import a_signature
from sqlite_utils import Database

from rounds_bot.clock import iso
from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome
from rounds_bot.events import Fact
from rounds_bot.store import DiagnosisRecord, Store, derived
from rounds_bot.store.batches import CHUNK
from rounds_bot.store.records import Logged

NOW = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
MANY = CHUNK + 7


def a_diagnosis(sid: str, at: datetime, status: str) -> DiagnosisRecord:
    answer = Diagnosis.model_validate(good_answer())
    outcome = DiagnosisOutcome(status=status, diagnosis=answer if status == "ok" else None)
    return DiagnosisRecord(
        cache_key=f"k-{sid}", signature_id=sid, revision="r1", at=iso(at), status=status, outcome=outcome
    )


def filled(store: Store) -> list[str]:
    """Signatures with a little of everything, some without any; returns their ids and two unknown ones."""
    ids = [f"sig_{n:04d}" for n in range(MANY)]
    with store.transaction(), store.derived_once():
        for n, sid in enumerate(ids):
            store.save(a_signature(sid, issue_ref=f"#{n}" if n % 3 else None, related=frozenset(ids[:2])))
            if n % 2:
                store.add_occurrences(sid, {iso(NOW): n, iso(NOW + timedelta(days=2)): 1})
            if n % 5 == 0:
                store.record_diagnosis(a_diagnosis(sid, NOW, "ok"))
                store.record_diagnosis(a_diagnosis(sid, NOW + timedelta(hours=1), "timeout"))
                store.book_cost(run_id="r", signature_id=sid, usd=0.1, model="m", note="a", at=NOW)
                store.book_cost(run_id="r", signature_id=sid, usd=0.2, model="m", note="b", at=NOW)
            store.append_event(
                Fact.INCIDENT_DETECTED, f"detected:{sid}", signature_id=sid, run_id="r", at=NOW
            )
    return [*reversed(ids), "sig_unknown", "sig_other"]


def test_many_signatures_read_together_are_what_one_read_each_gives(fresh_db: Store) -> None:
    ids = filled(fresh_db)
    assert fresh_db.signatures_of(ids) == {
        sid: signature for sid in ids if (signature := fresh_db.signature(sid)) is not None
    }
    assert fresh_db.issue_refs(ids) == {
        sid: signature.issue_ref for sid in ids if (signature := fresh_db.signature(sid)) is not None
    }
    for ok_only in (False, True):
        assert fresh_db.latest_diagnoses(ids, ok_only=ok_only) == {
            sid: record
            for sid in ids
            if (record := fresh_db.latest_diagnosis(sid, ok_only=ok_only)) is not None
        }
    since = NOW + timedelta(days=1)
    assert fresh_db.counts_since(ids, since) == {sid: fresh_db.count_since(sid, since) for sid in ids}
    assert fresh_db.occurrence_counts_of(ids) == {sid: fresh_db.occurrence_counts(sid) for sid in ids}
    assert fresh_db.bookings_of(ids) == {sid: fresh_db.bookings(sid) for sid in ids}
    assert fresh_db.fix_records_of(ids) == {sid: fresh_db.fix_records(sid) for sid in ids}
    assert fresh_db.incidents_of(ids) == {
        sid: incident for sid in ids if (incident := fresh_db.incident(sid)) is not None
    }
    assert len(fresh_db.incidents_of(ids)) == MANY


def test_the_derived_rows_refreshed_once_for_many_signatures_are_those_a_refresh_each_gives(
    fresh_db: Store,
) -> None:
    filled(fresh_db)
    together = fresh_db.derived_rows()
    fresh_db.replay()
    assert fresh_db.derived_rows() == together


def test_a_refresh_of_many_signatures_reads_their_facts_a_batch_at_a_time(
    fresh_db: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[int] = []
    original = derived._facts_of

    def counted(db: Database, signature_ids: list[str]) -> dict[str, list[Logged]]:
        read.append(len(signature_ids))
        return original(db, signature_ids)

    monkeypatch.setattr(derived, "_facts_of", counted)
    filled(fresh_db)
    assert MANY > derived.REFRESH_BATCH
    # incidents; none of them has a fix, so none is read again for its fixes
    assert max(read) == derived.REFRESH_BATCH and sum(read) == MANY
    together = fresh_db.derived_rows()
    fresh_db.replay()
    assert fresh_db.derived_rows() == together


def proposed(store: Store, sid: str, pr: int, key: str) -> None:
    payload = {"pr": pr, "url": f"https://example.test/pull/{pr}", "issue": "#1", "files": [f"{key}.py"]}
    store.append_event(Fact.FIX_PROPOSED, key, signature_id=sid, run_id="r", at=NOW, payload=payload)


def with_fixes(store: Store, *, together: bool) -> None:
    """Signatures with and without fixes, over two rounds: proposals, one fix moved to another signature,
    one fix's signature that only gets an incident fact; each round's facts refreshed together or one by
    one."""
    ids = [f"sig_{n:04d}" for n in range(MANY)]
    rounds = [
        [(sid, None) for sid in ids] + [(ids[3], 1), (ids[-2], 2), (ids[4], 3)],
        [(sid, None) for sid in reversed(ids)] + [(ids[5], 1), (ids[4], 4)],
    ]
    for number, facts in enumerate(rounds):
        with store.transaction():
            if together:
                with store.derived_once():
                    _log(store, number, facts)
            else:
                _log(store, number, facts)


def _log(store: Store, number: int, facts: list[tuple[str, int | None]]) -> None:
    for sid, pr in facts:
        if number == 0 and pr is None:
            store.save(a_signature(sid))
        if pr is None:
            key, issue = f"filed:{sid}:{number}", {"issue": f"#{number + 1}"}
            store.append_event(Fact.ISSUE_FILED, key, signature_id=sid, run_id="r", at=NOW, payload=issue)
        else:
            proposed(store, sid, pr, f"fix:{sid}:{pr}:{number}")


def test_the_fixes_refreshed_together_are_those_a_refresh_per_fact_gives(tmp_path: Path) -> None:
    each, together = Store.open(tmp_path / "each.db"), Store.open(tmp_path / "together.db")
    with_fixes(each, together=False)
    with_fixes(together, together=True)
    assert together.derived_rows() == each.derived_rows()
    assert {row["pr_number"]: row["signature_id"] for row in together.derived_rows()["fixes"]} == {
        1: "sig_0005",
        2: f"sig_{MANY - 2:04d}",
        3: "sig_0004",
        4: "sig_0004",
    }
    together.replay()
    assert together.derived_rows() == each.derived_rows()


_COUNTS = st.lists(
    st.tuples(
        st.sampled_from(["sig_a", "sig_b", "sig_c"]),
        st.dictionaries(
            st.sampled_from([iso(NOW + timedelta(minutes=5 * n)) for n in range(4)]), st.integers(1, 9)
        ),
        st.dictionaries(
            st.tuples(st.sampled_from(["api", "web"]), st.sampled_from(["1.0", "1.1", "2.0"])),
            st.sampled_from([NOW + timedelta(seconds=s) for s in (-60, 0, 30, 90)]),
        ),
    ),
    max_size=8,
)


def _rows(store: Store) -> list[list[tuple[object, ...]]]:
    """Each table's rows, with their row ids where it has them (else in the order of its key)."""
    rows = []
    for table in ("occurrence_buckets", "versions_seen"):
        (sql,) = store.db.execute("select lower(sql) from sqlite_master where name = ?", [table]).fetchone()
        order = (
            "select * from {} order by 1, 2"
            if "without rowid" in sql
            else "select rowid, * from {} order by 1"
        )
        rows.append(store.db.execute(order.format(table)).fetchall())
    return rows


@given(_COUNTS, _COUNTS)
def test_buckets_and_versions_written_together_are_those_written_a_signature_at_a_time(
    before: list[tuple[str, dict[str, int], dict[tuple[str, str], datetime]]],
    counted: list[tuple[str, dict[str, int], dict[tuple[str, str], datetime]]],
) -> None:
    """Over what earlier rounds wrote (so counts add up and the earliest version's moment is kept), the same
    rows, with the same row ids."""
    each, together = Store.memory(), Store.memory()
    for store in (each, together):
        for signature_id, buckets, versions in before:
            store.add_occurrences(signature_id, buckets)
            store.note_versions(versions)
    for signature_id, buckets, versions in counted:
        each.add_occurrences(signature_id, buckets)
        each.note_versions(versions)
    together.add_occurrences_of((signature_id, buckets) for signature_id, buckets, _ in counted)
    together.note_versions_of(versions for _, _, versions in counted)
    assert _rows(together) == _rows(each)
