"""What an issue's marker remembers of a signature's diagnosis and spending (`marker_memory.py`)."""

from __future__ import annotations

from datetime import UTC, datetime

from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome
from rounds_bot.marker_memory import MAX_MARKED_ANSWER_CHARS, marker_memory, restore_memory
from rounds_bot.store import DiagnosisRecord, Store

AT = datetime(2026, 11, 2, 10, 5, tzinfo=UTC)


def diagnosed(store: Store, signature_id: str, root_cause: str) -> None:
    answer = Diagnosis(
        classification="server_bug", root_cause=root_cause, suggested_fix="add the tenant", confidence="high"
    )
    with store.transaction():
        store.record_diagnosis(
            DiagnosisRecord(
                cache_key=f"key-{signature_id}",
                signature_id=signature_id,
                revision="r1",
                at=AT.isoformat(),
                status="ok",
                trigger="new",
                cost_usd=0.5,
                outcome=DiagnosisOutcome(status="ok", diagnosis=answer, cost_usd=0.5),
            )
        )
        store.book_cost(run_id="r", signature_id=signature_id, usd=0.5, model="m", note="new: ok", at=AT)


def test_the_marker_carries_the_latest_good_diagnosis_and_every_call_paid(fresh_db: Store) -> None:
    diagnosed(fresh_db, "sig_a", "the cache key omits the tenant")
    memory = marker_memory(fresh_db, ["sig_a", "sig_never"])
    assert memory["sig_a"].diagnosis is not None
    assert memory["sig_a"].diagnosis.answer["root_cause"] == "the cache key omits the tenant"
    assert [paid.usd for paid in memory["sig_a"].spend] == [0.5]
    assert memory["sig_never"].diagnosis is None and memory["sig_never"].spend == []


def test_an_answer_too_long_to_carry_twice_is_left_out_but_its_cost_is_kept(fresh_db: Store) -> None:
    diagnosed(fresh_db, "sig_a", "x" * MAX_MARKED_ANSWER_CHARS)
    memory = marker_memory(fresh_db, ["sig_a"])["sig_a"]
    assert memory.diagnosis is None
    assert [paid.usd for paid in memory.spend] == [0.5]


def test_what_a_marker_remembers_reads_back_into_a_fresh_database(fresh_db: Store) -> None:
    diagnosed(fresh_db, "sig_a", "the cache key omits the tenant")
    memory = marker_memory(fresh_db, ["sig_a"])["sig_a"]
    fresh = Store.memory()
    with fresh.transaction():
        assert restore_memory(fresh, "sig_a", memory) == []
    cached = fresh.cached_diagnosis("key-sig_a")
    assert (
        cached is not None
        and cached.outcome.diagnosis == fresh_db.cached_diagnosis("key-sig_a").outcome.diagnosis
    )
    assert fresh.bookings("sig_a")[0].usd == 0.5 and fresh.bookings("sig_a")[0].run_id == "rebuilt"


def test_unreadable_times_in_a_marker_are_reported_and_the_rest_restored(fresh_db: Store) -> None:
    diagnosed(fresh_db, "sig_a", "the cache key omits the tenant")
    memory = marker_memory(fresh_db, ["sig_a"])["sig_a"]
    spend = [*memory.spend, memory.spend[0].model_copy(update={"at": "yesterday"})]
    garbled = memory.model_copy(
        update={"spend": spend, "diagnosis": memory.diagnosis.model_copy(update={"at": "soon"})}
    )
    fresh = Store.memory()
    with fresh.transaction():
        problems = restore_memory(fresh, "sig_a", garbled)
    assert problems == [
        "a paid model call has an unreadable time ('yesterday'); not counted",
        "its diagnosis could not be read back (ValueError); diagnosed again",
    ]
    assert [paid.usd for paid in fresh.bookings("sig_a")] == [0.5]
    assert fresh.cached_diagnosis("key-sig_a") is None
