"""The Signature: built from a tally, absorbing later rounds, stored, and carried in the issue marker."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from rounds_bot.github.rebuild import signature_from_issue
from rounds_bot.grouping.state import SignatureState
from rounds_bot.marker import read_marker, write_marker
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.signature import Signature
from rounds_bot.tally import Tally

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
# Occurrences reach a signature redacted at ingestion (`redact_poll`); nothing redacts them again.
TOKEN = "[REDACTED:github_token]"


def tally_of(*events: ErrorEvent, related: tuple[str, ...] = ()) -> Tally:
    tally = Tally(
        assignment=Assignment(
            signature_id="sig_1",
            tier="new",
            fingerprint_hash="h1",
            fingerprint_version="fp-1",
            explanation=f"message: token {TOKEN}",
            title=f"AuthError: bad token {TOKEN}",
            normalized_message=f"bad token {TOKEN}",
            related=list(related),
        )
    )
    for event in events:
        tally.add(event, event.count, event.timestamp, event.timestamp)
    return tally


def occurrence(n: int, minutes: int, *, service: str = "api", version: str = "1.0", **fields) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0 + timedelta(minutes=minutes),
        service=service,
        service_version=version,
        environment="prod",
        error_type="AuthError",
        message=f"bad token {TOKEN} for user {n}",
        **fields,
    )


STATE = SignatureState(signature_id="sig_1", service="api", seq=0, hashes=["h1"])


def test_a_first_signature_takes_its_identity_and_text_from_the_tally_as_the_boundary_left_it():
    signature = Signature.first(tally_of(occurrence(1, 0), occurrence(2, 5)), STATE, run_id="r1", now=T0)
    assert (signature.id, signature.service, signature.error_type) == ("sig_1", "api", "AuthError")
    assert (signature.first_seen, signature.last_seen, signature.total_count) == (
        T0,
        T0 + timedelta(minutes=5),
        2,
    )
    assert signature.created_run == "r1" and signature.issue_ref is None
    assert signature.normalized_message == f"bad token {TOKEN}"
    assert signature.explanation == f"message: token {TOKEN}"
    assert signature.representative == occurrence(1, 0)


def test_absorbing_a_later_round_adds_counts_and_places_but_never_changes_identity():
    first = Signature.first(tally_of(occurrence(1, 0)), STATE, run_id="r1", now=T0)
    later = tally_of(occurrence(3, 60, service="worker", version="1.1"), related=("sig_9",))
    after = first.filed_as("#4").absorb(later, STATE, now=T0)
    assert after.total_count == 2 and after.last_seen == T0 + timedelta(minutes=60)
    assert after.services == {"api", "worker"} and after.versions == {"1.0", "1.1"}
    assert after.related == {"sig_9"} and after.issue_ref == "#4"
    assert (after.id, after.title, after.service, after.created_run) == (
        first.id,
        first.title,
        first.service,
        "r1",
    )
    assert first.total_count == 1  # values: the first one is unchanged


def test_severity_is_critical_when_fatal_and_otherwise_grows_with_the_total():
    signature = Signature.first(tally_of(occurrence(1, 0)), STATE, run_id="r", now=T0)
    assert signature.severity == "low"
    assert signature.model_copy(update={"total_count": 100}).severity == "medium"
    assert signature.model_copy(update={"total_count": 1_000}).severity == "high"
    fatal = signature.representative.model_copy(update={"fatal": True})
    assert signature.model_copy(update={"representative": fatal}).severity == "critical"


def test_the_marker_carries_what_a_rebuild_needs_and_reads_back_to_the_same_signature():
    signature = Signature.first(
        tally_of(occurrence(1, 0), occurrence(2, 9, service="worker")), STATE, run_id="r1", now=T0
    ).filed_as("#7")
    why = f"<details><summary>Why grouped</summary>\n\n```\n{signature.explanation}\n```\n</details>\n"
    body = "Body\n" + why + write_marker(signature.to_marker())
    issue = {
        "number": 7,
        "title": f"[api] {signature.title}",
        "body": body,
        "updated_at": "2026-11-02T00:00:00Z",
    }
    rebuilt = signature_from_issue(issue, read_marker(body))
    rebuilt_fields = set(Signature.model_fields) - {"representative", "created_run", "counted_through"}
    for name in sorted(rebuilt_fields):
        assert getattr(rebuilt, name) == getattr(signature, name), name
    # the ids of the occurrences counted are not in the marker: the moment they were counted up to is
    assert rebuilt.counted_through == signature.last_seen


def test_a_stored_signature_reads_back_equal(fresh_db):
    signature = Signature.first(tally_of(occurrence(1, 0), occurrence(2, 3)), STATE, run_id="r1", now=T0)
    with fresh_db.transaction():
        fresh_db.save(signature)
    assert fresh_db.signature("sig_1") == signature
    assert fresh_db.grouping_states() == [STATE]
    assert fresh_db.unfiled_ids() == ["sig_1"]
    with fresh_db.transaction():
        fresh_db.save(signature.filed_as("#1"))
    assert fresh_db.signatures() == [signature.filed_as("#1")] and fresh_db.unfiled_ids() == []
