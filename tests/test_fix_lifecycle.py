"""The fix lifecycle folded from the event log, its derived tables, and `rounds db replay`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from rounds_bot.cli.app import main
from rounds_bot.events import Fact
from rounds_bot.lifecycle import fold_fixes
from rounds_bot.store import Store

pytestmark = pytest.mark.fix_loop

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def log(store: Store, kind: Fact, key: str, sid: str | None, minutes: int, **payload: object) -> None:
    with store.transaction():
        store.append_event(
            kind, key, signature_id=sid, run_id="r", at=T0 + timedelta(minutes=minutes), payload=payload
        )


def a_fix_that_ships(store: Store, sid: str = "sig_a", pr: int = 7) -> None:
    log(store, Fact.INCIDENT_DETECTED, f"detected:{sid}", sid, 0)
    log(store, Fact.ISSUE_FILED, f"filed:{sid}", sid, 0, issue="#3")
    log(store, Fact.FIX_REQUESTED, f"fix:{sid}:1", sid, 5, by="alice", issue=3, trigger="command")
    proposed = {
        "pr": pr,
        "url": f"https://github.com/octo/app/pull/{pr}",
        "issue": "#3",
        "files": ["app/calc.py"],
    }
    log(
        store, Fact.FIX_PROPOSED, f"fixdone:{sid}:1", sid, 10, branch=f"rounds/fix-{sid}-20260302", **proposed
    )
    log(store, Fact.FIX_APPLIED, f"fixapplied:{pr}", sid, 60, pr=pr, merged_at="2026-03-02T09:55:00Z",
        versions_before=["1.0.0"], rate_before=12.0)  # fmt: skip


def test_a_fix_moves_from_proposed_to_merged_to_resolved(fresh_db):
    a_fix_that_ships(fresh_db)
    [fix] = fresh_db.fix_records()
    assert (fix.status, fix.pr_number, fix.merged_at, fix.rate_before) == (
        "merged",
        7,
        "2026-03-02T09:55:00Z",
        12.0,
    )
    log(fresh_db, Fact.FIX_RELEASED, "fixreleased:7", "sig_a", 90, pr=7, version="1.1.0", first_seen="x")
    log(fresh_db, Fact.INCIDENT_RESOLVED, "resolved:sig_a:7", "sig_a", 500, pr=7, rate_after=0.5,
        rate_after_release=0.0)  # fmt: skip
    [fix] = fresh_db.fix_records()
    assert (fix.status, fix.released_version, fix.rate_after, fix.rate_after_release) == (
        "resolved",
        "1.1.0",
        0.5,
        0.0,
    )
    incident = fresh_db.incident("sig_a")
    assert incident is not None
    assert (incident.status, incident.issue, incident.fix_pr, incident.fix_status) == (
        "resolved",
        "#3",
        7,
        "resolved",
    )


def test_a_regression_after_the_merge_marks_the_fix_regressed_and_a_second_push_is_a_revision(fresh_db):
    a_fix_that_ships(fresh_db)
    log(fresh_db, Fact.REGRESSED, "regressed:sig_a:r9", "sig_a", 700, count=3, reason="on 1.1.0")
    [fix] = fresh_db.fix_records()
    assert (fix.status, fix.regression) == ("regressed", "on 1.1.0")

    log(fresh_db, Fact.FIX_PROPOSED, "fixdone:sig_b:1", "sig_b", 1, pr=9, files=["a.py"], branch="b")
    log(fresh_db, Fact.FIX_PROPOSED, "fixdone:sig_b:2", "sig_b", 2, pr=9, files=["b.py"], branch="b")
    log(fresh_db, Fact.FIX_ABANDONED, "fixabandoned:9", "sig_b", 3, pr=9)
    second = fresh_db.fix_records("sig_b")[0]
    assert (second.status, second.revisions, second.files) == ("abandoned", 2, ["a.py", "b.py"])


def test_a_regression_before_any_merge_leaves_an_open_proposal_alone():
    class F:
        def __init__(self, kind: str, **payload: object) -> None:
            self.kind, self.signature_id, self.at, self.payload = kind, "s", "t", payload

    fixes = fold_fixes([F(Fact.FIX_PROPOSED, pr=1), F(Fact.REGRESSED, count=1)])
    assert fixes[0].status == "proposed"


def dump(store: Store) -> dict[str, list[dict[str, object]]]:
    tables = ("signatures", "events", "occurrence_buckets", "incidents", "fixes", "meta", "runs", "ledger")
    order = {"occurrence_buckets": "signature_id, bucket_start"}  # clustered on its key: it has no rowid
    return {
        table: list(store.db.query(f"select * from {table} order by {order.get(table, 'rowid')}"))
        for table in tables
    }


def test_replay_rebuilds_the_derived_tables_from_the_log_and_changes_nothing_else(fresh_db):
    a_fix_that_ships(fresh_db)
    log(fresh_db, Fact.FIX_RELEASED, "fixreleased:7", "sig_a", 90, pr=7, version="1.1.0")
    log(fresh_db, Fact.INCIDENT_SUPPRESSED, "ignore:1", "sig_c", 5, source="command", by="bob")
    before = dump(fresh_db)
    assert before["fixes"] and len(before["incidents"]) == 2

    fresh_db.replay()
    assert dump(fresh_db) == before
    fresh_db.replay()
    assert dump(fresh_db) == before

    fresh_db.db.execute("delete from fixes")
    fresh_db.db.execute("update incidents set status = 'garbage'")
    fresh_db.replay()
    assert dump(fresh_db) == before


def test_rounds_db_replay_on_a_database_file_gives_the_same_database_twice(tmp_path: Path, clean_env):
    path = tmp_path / "rounds.db"
    store = Store.open(path)
    a_fix_that_ships(store)
    before = dump(store)
    store.close()
    clean_env.setenv("SIGNATURES_DB_PATH", str(path))
    runner = CliRunner()
    first = runner.invoke(main, ["db", "replay"])
    assert first.exit_code == 0, first.output
    assert "1 signature, 1 fix" in first.output
    store = Store.open(path)
    assert dump(store) == before
    store.close()
    second = runner.invoke(main, ["db", "replay"])
    assert second.output == first.output


def test_a_release_logged_after_the_regression_of_the_same_round_is_kept(fresh_db):
    """The round logs its plans' facts (the Regressed) before the facts its steps found (the FixReleased)."""
    a_fix_that_ships(fresh_db)
    log(fresh_db, Fact.REGRESSED, "regressed:sig_a:r9", "sig_a", 700, count=3, reason="on 1.1.0")
    log(fresh_db, Fact.FIX_RELEASED, "fixreleased:7", "sig_a", 700, pr=7, version="1.1.0",
        first_seen="2026-03-02T20:30:00+00:00")  # fmt: skip
    [fix] = fresh_db.fix_records()
    assert (fix.status, fix.released_version, fix.released_at) == (
        "regressed",
        "1.1.0",
        "2026-03-02T20:30:00+00:00",
    )


def test_a_release_of_a_fix_never_merged_is_not_one():
    class F:
        def __init__(self, kind: str, **payload: object) -> None:
            self.kind, self.signature_id, self.at, self.payload = kind, "s", "t", payload

    [fix] = fold_fixes([F(Fact.FIX_PROPOSED, pr=1), F(Fact.FIX_RELEASED, pr=1, version="2.0")])
    assert fix.released_version is None


def test_a_resolution_says_what_it_was_judged_from_and_older_ones_are_read_by_their_release(fresh_db):
    a_fix_that_ships(fresh_db, "sig_a", 7)
    log(fresh_db, Fact.INCIDENT_RESOLVED, "resolved:sig_a:7", "sig_a", 500, pr=7, judged_from="merge")
    a_fix_that_ships(fresh_db, "sig_b", 8)
    log(fresh_db, Fact.FIX_RELEASED, "fixreleased:8", "sig_b", 90, pr=8, version="1.1.0")
    log(fresh_db, Fact.INCIDENT_RESOLVED, "resolved:sig_b:8", "sig_b", 500, pr=8)  # written before the field
    a_fix_that_ships(fresh_db, "sig_c", 9)
    log(fresh_db, Fact.INCIDENT_RESOLVED, "resolved:sig_c:9", "sig_c", 500, pr=9)  # ... without a release
    judged = {fix.signature_id: fix.judged_from for fix in fresh_db.fix_records()}
    assert judged == {"sig_a": "merge", "sig_b": "release", "sig_c": "merge"}


def test_facts_restored_from_a_marker_give_back_revisions_and_attempts(fresh_db):
    log(fresh_db, Fact.FIX_PROPOSED, "rebuilt:fixproposed:7", "sig_a", 10, pr=7, branch="b", files=["a.py"],
        revisions=3, updated_at="2026-03-02T12:00:00+00:00", restored=True)  # fmt: skip
    log(fresh_db, Fact.FIX_FAILED, "rebuilt:fixfailed:sig_a", "sig_a", 0, restored=True, count=2)
    log(fresh_db, Fact.FIX_OFFERED, "rebuilt:fixoffered:sig_a", "sig_a", 0, restored=True, count=1)
    log(fresh_db, Fact.FIX_FAILED, "fixdone:x", "sig_a", 20, reason="tests failed", count=9)  # a live one
    [fix] = fresh_db.fix_records()
    assert (fix.revisions, fix.proposed_at, fix.updated_at) == (
        3,
        "2026-03-02T09:10:00+00:00",
        "2026-03-02T12:00:00+00:00",
    )
    incident = fresh_db.incident("sig_a")
    assert incident is not None and (incident.failed_fixes, incident.offered_fixes) == (3, 1)


def test_derived_rows_refreshed_once_per_signature_are_the_rows_a_refresh_per_fact_gives(tmp_path: Path):
    # interleaved signatures, a signature whose facts come back after another's, a fix that ships
    facts: list[tuple[Fact, str, str, int, dict[str, object]]] = [
        (Fact.INCIDENT_DETECTED, "detected:sig_a", "sig_a", 0, {}),
        (Fact.INCIDENT_DETECTED, "detected:sig_b", "sig_b", 0, {}),
        (Fact.ISSUE_FILED, "filed:sig_a", "sig_a", 0, {"issue": "#3"}),
        (Fact.FIX_PROPOSED, "fixdone:sig_a:1", "sig_a", 10, {"pr": 7, "issue": "#3", "files": ["a.py"]}),
        (Fact.ISSUE_FILED, "filed:sig_b", "sig_b", 1, {"issue": "#4"}),
        (Fact.INCIDENT_SUPPRESSED, "ignore:1", "sig_c", 5, {"source": "command", "by": "bob"}),
        (Fact.FIX_APPLIED, "fixapplied:7", "sig_a", 60, {"pr": 7, "merged_at": "2026-03-02T09:55:00Z"}),
        (Fact.REGRESSED, "regressed:sig_b:r", "sig_b", 70, {"count": 2}),
    ]
    each, once = Store.open(tmp_path / "each.db"), Store.open(tmp_path / "once.db")
    for kind, key, sid, minutes, payload in facts:
        log(each, kind, key, sid, minutes, **payload)
    with once.transaction(), once.derived_once():
        for kind, key, sid, minutes, payload in facts:
            once.append_event(
                kind, key, signature_id=sid, run_id="r", at=T0 + timedelta(minutes=minutes), payload=payload
            )
        assert once.derived_rows() == {"incidents": [], "fixes": []}  # waiting for the end of the block
    assert dump(once) == dump(each)
    assert len(dump(once)["incidents"]) == 3 and dump(once)["fixes"]
