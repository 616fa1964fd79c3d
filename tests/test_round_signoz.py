"""A whole round against the SigNoz emulator, configured the way a user would: SIGNOZ_API_URL and a key."""

from __future__ import annotations

import dataclasses
import functools
import sqlite3
import time
from datetime import datetime, timedelta

import pytest
from click.testing import CliRunner
from recovery_tally import record
from signoz_emulator import Behaviour, Fault, SignozEmulator, build_dataset
from signoz_fixtures import ERROR_LOGS_QUERY

from rounds_bot.cli.app import main
from rounds_bot.demo import DEMO_BUGS, demo_data_path
from rounds_bot.sources.signoz.client import SignozClient

NS_PER_S = 1_000_000_000


@pytest.fixture
def emulator():
    dataset = build_dataset(
        [demo_data_path()],
        rebase=True,
        synthetic_events=0,
        synthetic_groups=0,
        window_seconds=0,
        now_ns=time.time_ns(),
    )
    with SignozEmulator(dataset, Behaviour(api_key="demo-key")) as server:
        yield server


@pytest.fixture
def signoz_env(clean_env, emulator, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    clean_env.setenv("SIGNOZ_API_URL", emulator.url)
    clean_env.setenv("SIGNOZ_API_KEY", "demo-key")
    clean_env.setenv("ERROR_LOOKBACK_MINUTES", "1440")
    return tmp_path


def run() -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["run"], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_a_round_against_signoz_finds_every_demo_bug_once(signoz_env):
    code, _, err = run()
    assert code == 0, err
    db = sqlite3.connect(signoz_env / "rounds.db")
    assert db.execute("select count(*) from signatures").fetchone()[0] == len(DEMO_BUGS)
    assert db.execute("select sum(total_count) from signatures").fetchone()[0] == sum(
        bug.expected_count for bug in DEMO_BUGS
    )
    assert db.execute("select count(*) from source_groups").fetchone()[0] > 0
    assert len(list((signoz_env / "rounds-out").glob("*.md"))) == len(DEMO_BUGS)


def test_the_next_round_reads_from_the_cursor_and_counts_nothing_twice(signoz_env):
    run()
    code, out, _ = run()
    assert code == 0
    assert "Nothing new." in out
    db = sqlite3.connect(signoz_env / "rounds.db")
    assert db.execute("select sum(total_count) from signatures").fetchone()[0] == sum(
        bug.expected_count for bug in DEMO_BUGS
    )


def cursors(database) -> list[tuple[str, str]]:
    with sqlite3.connect(database) as db:
        return db.execute("select source, position from cursors").fetchall()


def test_a_wrong_key_is_a_one_line_error_and_moves_no_cursor(signoz_env, clean_env):
    clean_env.setenv("SIGNOZ_API_KEY", "wrong")
    code, _, err = run()
    assert code == 2
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert "SIGNOZ_API_KEY" in err and "401" in err
    # a first round that fails leaves no database behind, so no cursor either
    assert not (signoz_env / "rounds.db").exists()
    clean_env.setenv("SIGNOZ_API_KEY", "demo-key")
    assert run()[0] == 0
    # the next scheduled round comes a quarter of an hour later: it has a window to read
    with sqlite3.connect(signoz_env / "rounds.db") as db:
        ((source, position),) = db.execute("select source, position from cursors").fetchall()
        earlier = (datetime.fromisoformat(position) - timedelta(minutes=15)).isoformat()
        db.execute("update cursors set position = ? where source = ?", [earlier, source])
    before = cursors(signoz_env / "rounds.db")
    clean_env.setenv("SIGNOZ_API_KEY", "wrong")
    code, _, err = run()
    assert code == 2 and "401" in err
    assert cursors(signoz_env / "rounds.db") == before


# What a first round on the demo data asks SigNoz, its 24 hours read in one chunk: the version, the exception
# groups, their samples and their spans' attributes, the error spans, the error logs and the records before
# the new error logs.
DEMO_ROUND_REQUESTS = 7
# the last request reads the records logged before the new error logs: when it fails they come without them
NEIGHBOURS_REQUEST = DEMO_ROUND_REQUESTS - 1
# The kinds of failure a round can meet at any one of its SigNoz requests, from the start of the failure on.
REQUEST_FAULTS = {
    "server error": Fault("status", status=503, times=-1),
    "rate limited beyond the deadline": Fault("status", status=429, retry_after="3600", times=-1),
    "body cut short": Fault("truncated", times=-1),
}


@pytest.mark.security
@pytest.mark.parametrize("fault", list(REQUEST_FAULTS))
def test_a_round_failing_at_each_signoz_request_loses_and_doubles_nothing(
    fault, signoz_env, emulator, clean_env, monkeypatch
):
    clean_env.setenv("SIGNOZ_CHUNK_MINUTES", "1440")
    # retried as in production, without the waits between attempts
    quick = functools.partial(SignozClient, backoff_seconds=0.0, max_backoff_seconds=0.0)
    monkeypatch.setattr("rounds_bot.sources.signoz.source.SignozClient", quick)
    before = len(emulator.requests)
    assert run()[0] == 0  # a clean round, to count its requests
    requests = len(emulator.requests) - before
    assert requests == DEMO_ROUND_REQUESTS  # every one of them is a crash point below
    expected = sum(bug.expected_count for bug in DEMO_BUGS)
    for nth in range(requests):
        folder = signoz_env / f"crash-{nth}"
        folder.mkdir()
        clean_env.setenv("SIGNATURES_DB_PATH", str(folder / "rounds.db"))
        clean_env.setenv("ROUNDS_OUTPUT_DIR", str(folder / "out"))
        emulator.behaviour.faults = [dataclasses.replace(REQUEST_FAULTS[fault], after=nth)]
        code, out, err = run()
        if code == 2:  # nothing could be read: nothing is written
            assert err.startswith("error: "), (nth, err)
            assert not (folder / "rounds.db").exists() or cursors(folder / "rounds.db") == []
        elif nth == NEIGHBOURS_REQUEST:  # every stream was read; only the error logs' context is missing
            assert code == 0 and "not read this round" not in out, (nth, code, err)
        else:  # the streams read before the failure were counted, the failed ones are reported
            assert code == 0 and "not read this round" in out, (nth, code, err)
        emulator.behaviour.faults = []
        assert run()[0] == 0
        with sqlite3.connect(folder / "rounds.db") as db:
            counted = db.execute("select sum(total_count) from signatures").fetchone()[0]
            record(twins=0, happened=expected, counted=counted)  # one draft per signature: no twin possible
            assert db.execute("select count(*) from signatures").fetchone()[0] == len(DEMO_BUGS), nth
            assert counted == expected, nth
        assert len(cursors(folder / "rounds.db")) == 1


@pytest.mark.parametrize("version", ["v0.138.0", "v0.86.0"])  # v0.86: every stream through /api/v4
def test_a_round_whose_error_logs_fail_files_the_rest_and_the_next_round_files_the_logs_once(
    version, signoz_env, emulator
):
    emulator.behaviour.version = version
    busy = Fault("query", path="/api/v", times=-1, clickhouse_code=241, body_contains=ERROR_LOGS_QUERY)
    emulator.behaviour.faults = [busy]
    code, out, err = run()
    assert code == 0, err
    failures = [line for line in out.splitlines() if "not read this round" in line]
    assert len(failures) == 1 and "error logs" in failures[0] and "code: 241" in failures[0]
    db = sqlite3.connect(signoz_env / "rounds.db")
    filed = db.execute("select count(*), sum(total_count) from signatures").fetchone()
    assert 0 < filed[0] < len(DEMO_BUGS)
    emulator.behaviour.faults = []
    code, out, err = run()
    assert code == 0 and "not read this round" not in out, err
    total = db.execute("select count(*), sum(total_count) from signatures").fetchone()
    assert total == (len(DEMO_BUGS), sum(bug.expected_count for bug in DEMO_BUGS))
