"""Scenarios whose HTTP exchanges are kept as vcrpy cassettes in tests/cassettes/signoz/.

Each scenario drives the SigNoz client as rounds does and returns a summary of what it read;
`scenarios.json` keeps, per scenario, the URL and window it was recorded with and that summary,
so a replay (record_mode="none") must reach the same summary from the recorded answers alone.
Each cassette opens with a comment naming what it was recorded against: the SigNoz version and
the ClickHouse engine that ran its queries (the emulator's in-process chDB, or the live
instance's ClickHouse as `SELECT version()` reports it where the key may run clickhouse_sql).

Re-record the committed cassettes against the emulator:

    python tests/signoz_recorder.py

Re-record against a real SigNoz (only the scenarios a real instance can play; the others keep
their emulator recordings):

    ROUNDS_TEST_SIGNOZ_URL=https://<instance> ROUNDS_TEST_SIGNOZ_API_KEY=<key> \
        python -m pytest -m signoz_live tests/test_signoz_cassettes.py

The API key header is replaced by REDACTED in every cassette.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import vcr

sys.path.insert(0, str(Path(__file__).parent))

from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.engine import Engine
from signoz_fixtures import WINDOW_END_NS, WINDOW_START_NS, fixture_dataset

from rounds_bot.errors import SignozError
from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.signoz.client import SignozClient
from rounds_bot.sources.signoz.probe import check
from rounds_bot.sources.signoz.queries import clickhouse_sql, query_range_request
from rounds_bot.sources.signoz.source import SignozSource
from rounds_bot.sources.signoz.times import (
    datetime_to_ns,
    ns_to_datetime,
    parse_rfc3339_ns,
)

CASSETTES = Path(__file__).parent / "cassettes" / "signoz"
INDEX = CASSETTES / "scenarios.json"
EMULATOR_KEY = "test-key"
WRONG_KEY = "rounds-wrong-key"
MATCH_ON = ("method", "scheme", "host", "port", "path", "query", "body")


@dataclass(frozen=True)
class Context:
    url: str
    api_key: str | None
    start_ns: int
    end_ns: int

    @property
    def window(self) -> Window:
        return Window(start=ns_to_datetime(self.start_ns), end=ns_to_datetime(self.end_ns))

    def source(self) -> SignozSource:
        return SignozSource(
            self.url,
            self.api_key,
            sleep=lambda seconds: None,
            wall_clock=lambda: self.end_ns / 1e9 + 60,
        )


@dataclass(frozen=True)
class Recording:
    """What cassettes were recorded against: who answered, its SigNoz version, its ClickHouse."""

    against: str
    signoz_version: str
    clickhouse: str

    def header(self) -> str:
        return (
            f"# Recorded against {self.against}: SigNoz {self.signoz_version}, its queries run by "
            f"{self.clickhouse}.\n# Re-record: see tests/signoz_recorder.py.\n"
        )


def emulator_recording(version: str) -> Recording:
    engine = f"ClickHouse {Engine.shared().version()} in-process (chdb-core-lite {_chdb_version()})"
    return Recording("the rounds SigNoz emulator", version, engine)


def _chdb_version() -> str:
    try:
        return importlib.metadata.version("chdb-core-lite")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def live_recording(context: Context) -> Recording:
    """A live SigNoz's version and, where the key may run clickhouse_sql, its ClickHouse version;
    asked outside any cassette."""
    with SignozClient(context.url, context.api_key) as client:
        version = client.version().version
        sql = clickhouse_sql("SELECT version() AS version")
        try:
            data = client.query_range(query_range_request(context.start_ns, context.end_ns, "raw", sql))
            rows = [row for result in data.raw_results() for row in result.rows or []]
            clickhouse = f"ClickHouse {rows[0].data['version']}" if rows else "ClickHouse (version not read)"
        except SignozError as error:
            clickhouse = f"its ClickHouse (version not read: {str(error).split(' (')[0]})"
    return Recording(f"the SigNoz at {context.url}", version, clickhouse)


@dataclass(frozen=True)
class Scenario:
    name: str
    run: Callable[[Context], dict[str, Any]]
    behaviour: Callable[[], Behaviour]
    live: bool


def _event(event: ErrorEvent) -> list[Any]:
    return [event.event_id, event.kind, event.count, event.error_type, bool(event.stacktrace)]


def _poll_summary(result: PollResult) -> dict[str, Any]:
    return {
        "events": sorted(_event(event) for event in result.events),
        "known": sorted([c.source_group_id, c.count] for c in result.known_group_counts),
        "skipped": [[s.where, s.reason] for s in result.skipped],
        "notes": result.notes,
        "requests": result.requests,
    }


def first_and_quiet_round(context: Context) -> dict[str, Any]:
    with context.source() as source:
        first = source.poll(context.window, frozenset())
        known = frozenset(e.source_group_id for e in first.events if e.source_group_id)
        quiet = source.poll(context.window, known)
    return {"first": _poll_summary(first), "quiet": _poll_summary(quiet)}


def one_round(context: Context) -> dict[str, Any]:
    with context.source() as source:
        return _poll_summary(source.poll(context.window, frozenset()))


def exceptions_api(context: Context) -> dict[str, Any]:
    headers = {"SIGNOZ-API-KEY": context.api_key or ""}
    with SignozClient(context.url, context.api_key) as client:
        summary: dict[str, Any] = {"count": client.count_errors(context.start_ns, context.end_ns)}
        rows = client.list_errors(context.start_ns, context.end_ns, limit=100)
        summary["groups"] = sorted([row.groupID, row.exceptionCount] for row in rows)
        if not rows:
            return summary
        row = rows[0]
        timestamp = parse_rfc3339_ns(row.lastSeen)
        detail = client.error_from_group_id(row.groupID, timestamp)
        summary["detail_found"] = detail is not None
        summary["miss_found"] = client.error_from_group_id(row.groupID, timestamp + 1) is not None
    if detail is not None:
        params = {"errorID": detail.errorId, "groupID": row.groupID, "timestamp": str(timestamp)}
        with httpx.Client(base_url=context.url, headers=headers) as http:
            by_error = http.get("/api/v1/errorFromErrorID", params=params)
            walk = http.get("/api/v1/nextPrevErrorIDs", params=params)
            health = http.get("/api/v1/health")
        summary["by_error_id"] = by_error.json()["errorId"] == detail.errorId
        summary["walk_group"] = walk.json()["groupID"] == row.groupID
        summary["health"] = health.json()
    return summary


def refusals(context: Context) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    with SignozClient(context.url, WRONG_KEY) as client:
        try:
            client.count_errors(context.start_ns, context.end_ns)
        except SignozError as error:
            summary["wrong_key"] = str(error).split(" (")[0].replace(context.url, "<url>")
    unknown_key = {
        "type": "builder_query",
        "spec": {"name": "A", "signal": "logs", "filter": {"expression": "rounds.no_such_key = 1"},
                 "limit": 1},
    }  # fmt: skip
    request = {
        "schemaVersion": "v1",
        "start": context.start_ns // 1_000_000,
        "end": context.end_ns // 1_000_000,
        "requestType": "raw",
        "compositeQuery": {"queries": [unknown_key]},
    }
    with SignozClient(context.url, context.api_key) as client:
        try:
            client.query_range(request)
            summary["unknown_key"] = "accepted"
        except SignozError as error:
            summary["unknown_key"] = str(error).split(" (")[0]
    headers = {"SIGNOZ-API-KEY": context.api_key or ""}
    with httpx.Client(base_url=context.url, headers=headers) as http:
        numeric = http.post(
            "/api/v1/listErrors", json={"start": context.start_ns, "end": context.end_ns, "limit": 1}
        )
        no_error_id = http.get("/api/v1/errorFromErrorID", params={"groupID": "x", "timestamp": "1"})
    summary["numeric_start_status"] = numeric.status_code
    summary["no_error_id_status"] = no_error_id.status_code
    return summary


def doctor(context: Context) -> dict[str, Any]:
    now = ns_to_datetime(context.end_ns) + timedelta(seconds=30)
    report = check(context.url, context.api_key, now=now).model_dump()
    report.pop("url")
    return report


SCENARIOS = [
    Scenario("first_and_quiet_round", first_and_quiet_round, Behaviour, live=True),
    Scenario("exceptions_api", exceptions_api, Behaviour, live=True),
    Scenario("refusals", refusals, Behaviour, live=True),
    Scenario("doctor", doctor, Behaviour, live=True),
    Scenario(
        "refused_clickhouse_sql",
        one_round,
        lambda: Behaviour(clickhouse_sql_allowed=False),
        live=False,
    ),
    Scenario("signoz_v0_59_without_sql", one_round, lambda: Behaviour(version="v0.59.0"), live=False),
    Scenario("signoz_v0_80_on_v4", one_round, lambda: Behaviour(version="v0.80.0"), live=False),
    Scenario(
        "signoz_v0_120_refused_sql",
        one_round,
        lambda: Behaviour(version="v0.120.0", clickhouse_sql_allowed=False),
        live=False,
    ),
]


def make_vcr(directory: Path, record_mode: str) -> vcr.VCR:
    return vcr.VCR(
        cassette_library_dir=str(directory),
        record_mode=record_mode,
        match_on=MATCH_ON,
        filter_headers=[("SIGNOZ-API-KEY", "REDACTED")],
        decode_compressed_response=True,
    )


def record(scenario: Scenario, context: Context, directory: Path, recording: Recording) -> dict[str, Any]:
    cassette = directory / f"{scenario.name}.yaml"
    cassette.unlink(missing_ok=True)
    with make_vcr(directory, "all").use_cassette(cassette.name):
        summary = scenario.run(context)
    cassette.write_text(recording.header() + cassette.read_text(encoding="utf-8"), encoding="utf-8")
    return {
        "url": context.url,
        "start_ns": context.start_ns,
        "end_ns": context.end_ns,
        "recorded_against": recording.against,
        "signoz_version": recording.signoz_version,
        "clickhouse": recording.clickhouse,
        "summary": summary,
    }


def replay(name: str, entry: dict[str, Any], directory: Path = CASSETTES) -> dict[str, Any]:
    scenario = next(s for s in SCENARIOS if s.name == name)
    context = Context(entry["url"], "replay-key", entry["start_ns"], entry["end_ns"])
    with make_vcr(directory, "none").use_cassette(f"{name}.yaml"):
        return json.loads(json.dumps(scenario.run(context)))


def record_against_emulator(directory: Path = CASSETTES) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    dataset = fixture_dataset()
    index: dict[str, Any] = {}
    for scenario in SCENARIOS:
        behaviour = scenario.behaviour()
        behaviour.api_key = EMULATOR_KEY
        with SignozEmulator(dataset, behaviour) as emulator:
            context = Context(emulator.url, EMULATOR_KEY, WINDOW_START_NS, WINDOW_END_NS)
            recording = emulator_recording(behaviour.version)
            index[scenario.name] = record(scenario, context, directory, recording)
    write_index(directory, index)
    return index


def record_against_live(url: str, api_key: str, directory: Path = CASSETTES) -> dict[str, Any]:
    now = datetime.now(UTC)
    context = Context(
        url.rstrip("/"),
        api_key,
        datetime_to_ns(now - timedelta(hours=1)),
        datetime_to_ns(now - timedelta(seconds=60)),
    )
    index = read_index(directory)
    recording = live_recording(context)
    for scenario in SCENARIOS:
        if scenario.live:
            index[scenario.name] = record(scenario, context, directory, recording)
    write_index(directory, index)
    return index


def read_index(directory: Path = CASSETTES) -> dict[str, Any]:
    path = directory / INDEX.name
    return json.loads(path.read_text()) if path.exists() else {}


def write_index(directory: Path, index: dict[str, Any]) -> None:
    text = json.dumps(json.loads(json.dumps(index)), indent=1, sort_keys=True)
    (directory / INDEX.name).write_text(text + "\n")


if __name__ == "__main__":
    recorded = record_against_emulator()
    print(f"recorded {len(recorded)} scenarios into {CASSETTES}")
