"""`rounds run` end to end: the demo round, the second round that files nothing, and every bad input."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from rounds_bot.cli.app import main
from rounds_bot.demo import DEMO_BUGS, demo_data_path
from rounds_bot.round.run import BEGINNING, load_engine
from rounds_bot.settings import load_settings
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import SCHEMA_VERSION, Store

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def workdir(clean_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_demo_round_files_one_draft_per_distinct_bug_and_no_noise(workdir):
    code, out, _ = run("run", "--demo")
    assert code == 0, out
    drafts = sorted((workdir / "rounds-out").glob("*.md"))
    assert len(drafts) == len(DEMO_BUGS)
    assert f"**{len(DEMO_BUGS)} new, 0 updated, 0 regressed**" in out
    signatures = (
        sqlite3.connect(workdir / "rounds.db").execute("select count(*) from signatures").fetchone()[0]
    )
    assert signatures == len(DEMO_BUGS)


def test_demo_signatures_match_the_known_bugs_exactly(clean_env):
    """Every demo bug is one signature, and no signature mixes two bugs (the round's engine and defaults)."""
    truth = json.loads((FIXTURES / "demo_truth.json").read_text())["events"]
    polled = OtlpFileSource(demo_data_path()).poll(
        Window(start=BEGINNING, end=datetime.now(UTC)), frozenset()
    )
    engine = load_engine(load_settings(), Store.memory())
    bugs_by_signature: dict[str, set[str]] = {}
    signatures_by_bug: dict[str, set[str]] = {}
    for event in polled.events:
        signature_id = engine.assign(event).signature_id
        bug = truth[event.event_id]
        bugs_by_signature.setdefault(signature_id, set()).add(bug)
        signatures_by_bug.setdefault(bug, set()).add(signature_id)
    assert all(len(b) == 1 for b in bugs_by_signature.values()), bugs_by_signature
    assert all(len(s) == 1 for s in signatures_by_bug.values()), signatures_by_bug
    assert set(signatures_by_bug) == {bug.id for bug in DEMO_BUGS}


def test_second_demo_round_files_nothing_new_and_says_so(workdir):
    run("run", "--demo")
    before = {p.name: p.read_text() for p in (workdir / "rounds-out").glob("*.md")}
    code, out, _ = run("run", "--demo")
    assert code == 0
    assert "Nothing new." in out
    assert "already counted" in out
    after = {p.name: p.read_text() for p in (workdir / "rounds-out").glob("*.md")}
    assert after.keys() == before.keys()
    totals = (
        sqlite3.connect(workdir / "rounds.db").execute("select sum(total_count) from signatures").fetchone()
    )
    assert totals[0] == sum(bug.expected_count for bug in DEMO_BUGS)


def test_report_goes_to_the_github_step_summary(workdir, monkeypatch):
    summary = workdir / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run("run", "--demo")
    assert "## rounds: round" in summary.read_text()


def test_without_a_source_the_error_names_the_settings_and_points_at_demo(workdir):
    code, _, err = run("run")
    assert code == 2
    assert err.count("\n") == 1
    assert "SIGNOZ_API_URL" in err and "ROUNDS_SOURCE" in err and "--demo" in err
    assert not (workdir / "rounds.db").exists()


def test_an_unknown_source_scheme_is_refused(workdir, monkeypatch):
    monkeypatch.setenv("ROUNDS_SOURCE", "kafka:errors")
    code, _, err = run("run")
    assert code == 2
    assert "'kafka:errors'" in err and "otlp-file:PATH" in err


def test_a_missing_data_file_is_a_clear_error_and_writes_nothing(workdir, monkeypatch):
    monkeypatch.setenv("ROUNDS_SOURCE", "otlp-file:absent.jsonl")
    code, _, err = run("run")
    assert code == 2
    assert "absent.jsonl" in err
    assert not (workdir / "rounds.db").exists()  # nothing written, not even an empty database


def test_malformed_lines_are_reported_with_file_and_line_and_the_rest_is_read(workdir, monkeypatch):
    good = (FIXTURES / "otlp" / "shop_sample.otlp.jsonl").read_text().splitlines()
    data = workdir / "mixed.jsonl"
    data.write_text("\n".join([good[0], "{not json", *good[1:]]) + "\n")
    monkeypatch.setenv("ROUNDS_SOURCE", f"otlp-file:{data}")
    code, out, _ = run("run")
    assert code == 0
    assert f"{data}:2" in out
    assert "Skipped records (1)" in out


def test_an_unwritable_database_path_is_a_clear_error(workdir, monkeypatch):
    monkeypatch.setenv("SIGNATURES_DB_PATH", str(workdir / "no" / "such" / "dir" / "r.db"))
    code, _, err = run("run", "--demo")
    assert code == 2
    assert "SIGNATURES_DB_PATH" in err


def test_a_database_from_a_newer_rounds_is_refused_and_left_alone(workdir):
    run("run", "--demo")
    db = sqlite3.connect(workdir / "rounds.db")
    db.execute("update meta set value = ? where key = 'schema_version'", [str(SCHEMA_VERSION + 1)])
    db.commit()
    db.close()
    code, _, err = run("run", "--demo")
    assert code == 2
    assert "upgrade rounds" in err


def test_invalid_settings_are_all_reported(workdir, monkeypatch):
    monkeypatch.setenv("ERROR_LOOKBACK_MINUTES", "0")
    monkeypatch.setenv("ROUNDS_MAX_NEW_ISSUES_PER_ROUND", "many")
    code, _, err = run("run", "--demo")
    assert code == 2
    assert "ERROR_LOOKBACK_MINUTES" in err and "ROUNDS_MAX_NEW_ISSUES_PER_ROUND" in err


def test_new_issue_cap_defers_the_rest_to_the_next_round(workdir, monkeypatch):
    monkeypatch.setenv("ROUNDS_MAX_NEW_ISSUES_PER_ROUND", "3")
    code, out, _ = run("run", "--demo")
    assert code == 0
    assert len(list((workdir / "rounds-out").glob("*.md"))) == 3
    assert "Deferred to the next round" in out
    run("run", "--demo")
    assert len(list((workdir / "rounds-out").glob("*.md"))) == 6
    monkeypatch.setenv("ROUNDS_MAX_NEW_ISSUES_PER_ROUND", "100")
    run("run", "--demo")
    assert len(list((workdir / "rounds-out").glob("*.md"))) == len(DEMO_BUGS)


def test_db_status_lists_each_signature_with_its_count_status_and_issue(workdir):
    run("run", "--demo")
    code, out, _ = run("db", "status")
    assert code == 0
    header, *lines = out.splitlines()
    assert header == (
        f"database rounds.db: schema v{SCHEMA_VERSION}, {len(DEMO_BUGS)} signatures, 1 runs, integrity ok"
    )
    assert len(lines) == len(DEMO_BUGS)
    signature_id, count = lines[0].split()[:2]
    assert signature_id.startswith("sig_") and int(count) > 0
    assert lines[0].endswith(f"  open  {signature_id}.md")


def test_a_failed_first_round_leaves_no_empty_database_behind(workdir, monkeypatch):
    monkeypatch.setenv("ROUNDS_SOURCE", f"otlp-file:{workdir / 'missing.jsonl'}")
    code, _, err = run("run")
    assert code == 2 and "does not exist" in err
    assert not list(workdir.glob("rounds.db*"))


def test_db_status_without_a_database_says_so_and_creates_none(workdir):
    code, out, _ = run("db", "status")
    assert code == 0 and "no signature database at rounds.db yet" in out
    assert not list(workdir.glob("rounds.db*"))


def test_an_invalid_source_is_reported_with_every_other_invalid_setting(workdir, monkeypatch):
    monkeypatch.setenv("ROUNDS_SOURCE", "bogus")
    monkeypatch.setenv("ROUNDS_DIAGNOSER", "nope")
    code, _, err = run("run")
    assert code == 2 and "2 invalid settings" in err
    assert "ROUNDS_SOURCE='bogus': unknown telemetry source" in err and "ROUNDS_DIAGNOSER" in err


def test_from_the_second_round_the_report_charts_new_and_ongoing_signatures(workdir, monkeypatch):
    assert "New and ongoing signatures" not in run("run", "--demo")[1]  # one round: nothing to compare
    code, out, _ = run("run", "--demo")
    assert code == 0 and "### New and ongoing signatures\n```mermaid\nxychart-beta" in out
    assert "bar [16, 0]" in out
    monkeypatch.setenv("ROUNDS_CHARTS", "false")
    out = run("run", "--demo")[1]
    assert "mermaid" not in out and "| round | new | ongoing |" in out


# --- the GitHub tracker from the command line -------------------------------------------------------
@pytest.fixture
def fake_github():
    from fake_github.fixtures import running_fake

    yield from running_fake()


def _github_settings(monkeypatch: pytest.MonkeyPatch, fake) -> None:
    from fake_github.fixtures import REPOSITORY, TOKEN

    monkeypatch.setenv("ROUNDS_TRACKER", "github")
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_REPOSITORY", REPOSITORY)
    monkeypatch.setenv("ROUNDS_GITHUB_API_URL", fake.base_url)


@pytest.mark.github_spec
def test_the_github_tracker_starts_a_new_database_and_the_next_round_opens_it(
    workdir, monkeypatch, fake_github
):
    _github_settings(monkeypatch, fake_github)
    monkeypatch.setenv("ROUNDS_SOURCE", f"otlp-file:{demo_data_path()}")
    monkeypatch.setenv("ROUNDS_MAX_NEW_ISSUES_PER_ROUND", "1")
    monkeypatch.setenv("SIGNATURES_DB_PATH", str(workdir / "fresh" / "rounds.db"))
    (workdir / "fresh").mkdir()
    code, out, err = run("run")
    assert code == 0, out + err
    assert len(fake_github.issues()) == 1
    store = Store.open(workdir / "fresh" / "rounds.db")
    try:
        assert len(store.signatures()) == len(DEMO_BUGS)
    finally:
        store.close()
    code, out, err = run("run")
    assert code == 0, out + err
    assert len(fake_github.issues()) == 2  # the next deferred signature, nothing twice


def test_a_database_holding_only_the_trackers_journal_is_taken_as_rounds_own(workdir):
    from rounds_bot.github.journal import Journal

    Journal.open(workdir / "journal-only.db").close()
    store = Store.open(workdir / "journal-only.db")
    try:
        assert store.is_empty()
    finally:
        store.close()


@pytest.mark.github_spec
def test_the_demo_writes_drafts_only_whatever_the_tracker_setting(workdir, monkeypatch, fake_github):
    _github_settings(monkeypatch, fake_github)
    code, out, err = run("run", "--demo")
    assert code == 0, out + err
    assert "the demo writes drafts only: ROUNDS_TRACKER=github is not used for it" in err
    assert fake_github.issues() == [] and fake_github.repo.labels == {}
    assert len(list((workdir / "rounds-out").glob("*.md"))) == len(DEMO_BUGS)


def test_in_actions_a_refused_command_leaves_one_line_on_the_job_summary(workdir, monkeypatch):
    summary = workdir / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, _, err = run("run")
    assert code == 2 and "::error::no telemetry source configured" in err
    [line] = summary.read_text().strip().splitlines()
    assert line.startswith("**`rounds run` stopped:** ``no telemetry source configured: set SIGNOZ_API_URL")
