"""The incident look-ups over SigNoz: the emulator answers, the look-ups stay scoped, bounded and
redacted, the API key reaches only the look-up server, and the real CLI gets the emulator's spans."""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from diagnosis_samples import (
    diagnosis_error_count,
    fake_api_diagnoser,
    good_answer,
    make_checkout,
    sample_request,
)
from fake_messages_api import FakeMessagesApi, ToolUse, structured_output, turn
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines, signoz_group_id
from signoz_fixtures import fixture_dataset, fixture_window, source_for

from rounds_bot.diagnosis.claude_cli import ClaudeCli
from rounds_bot.diagnosis.claude_code import ClaudeCodeDiagnoser
from rounds_bot.diagnosis.configured import build_diagnoser
from rounds_bot.diagnosis.lookups.recorded import RecordedLookups
from rounds_bot.diagnosis.lookups.scope import (
    MAX_LOGS,
    MAX_SPANS,
    IncidentScope,
    RecordedBackend,
    ScopeViolation,
    SignozBackend,
    scope_for_request,
)
from rounds_bot.diagnosis.lookups.signoz import SignozLookups
from rounds_bot.diagnosis.lookups.tools import IncidentTools
from rounds_bot.diagnosis.mcp_server import McpLaunch, build_server, lookups_for, server_config
from rounds_bot.diagnosis.model import DiagnosisRequest, OccurrenceStats
from rounds_bot.errors import SignozError
from rounds_bot.models import ErrorEvent
from rounds_bot.settings import load_settings
from rounds_bot.sources.signoz.times import datetime_to_ns

T0 = datetime(2026, 5, 20, 10, 0, tzinfo=UTC)
API_KEY = "signoz-key-for-the-lookups-only-7f3e"
MESSAGE = "division by zero for alice@example.com"
SECRET_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
BEARER = "Authorization: Bearer abcdefghijklmnop123"
TRACE_A = "a" * 31 + "1"  # the incident's trace: a root span and the failing child
TRACE_BIG = "b" * 31 + "2"  # the incident's trace with more spans than a look-up returns
TRACE_OTHER = "c" * 31 + "3"  # another request of the same service: not the incident's
BIG_TRACE_SPANS = MAX_SPANS + 50
# ZeroDivisionError occurrences in "shop", seconds after T0 (two of them are in the traces above)
OCCURRENCES = (60, 600, 610, 1900, 1910, 1920)


# ---------------------------------------------------------------------- the telemetry


def _ns(seconds: float) -> str:
    return str(datetime_to_ns(T0) + int(seconds * 1e9))


def _attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"key": key, "value": {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}}
        for key, value in values.items()
    ]


def _span(
    trace_id: str,
    index: int,
    name: str,
    at: float,
    *,
    parent: str = "",
    error: str | None = None,
    exception: tuple[str, str] | None = None,
    attributes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    events = []
    if exception is not None:
        events.append(
            {
                "timeUnixNano": _ns(at + 0.001),
                "name": "exception",
                "attributes": _attributes(
                    {
                        "exception.type": exception[0],
                        "exception.message": exception[1],
                        "exception.stacktrace": f"Traceback:\n{exception[0]}: {exception[1]}",
                    }
                ),
            }
        )
    return {
        "traceId": trace_id,
        "spanId": f"{index:016x}",
        "parentSpanId": parent,
        "name": name,
        "kind": 2,
        "startTimeUnixNano": _ns(at),
        "endTimeUnixNano": _ns(at + 0.025),
        "attributes": _attributes(attributes or {}),
        "events": events,
        "status": {"code": 2, "message": error} if error else {},
    }


def _log(at: float, body: str, severity: str = "INFO", number: int = 9, trace_id: str = "") -> dict[str, Any]:
    return {
        "timeUnixNano": _ns(at),
        "observedTimeUnixNano": _ns(at),
        "severityText": severity,
        "severityNumber": number,
        "body": {"stringValue": body},
        "traceId": trace_id,
        "attributes": [],
    }


def _resource(service: str) -> dict[str, Any]:
    return {"attributes": _attributes({"service.name": service})}


def shop_otlp_lines() -> list[str]:
    zero = ("ZeroDivisionError", MESSAGE)
    shop = [
        _span(TRACE_A, 1, "POST /checkout", 600, attributes={"url.full": f"/checkout?token={SECRET_TOKEN}"}),
        _span(TRACE_A, 2, "compute_total", 600.01, parent=f"{1:016x}", error=BEARER, exception=zero),
        _span(TRACE_OTHER, 3, "GET /cart", 650, attributes={"url.full": "/cart"}),
        _span("e" * 32, 4, "compute_total", 700, error="KeyError", exception=("KeyError", "'price'")),
    ]
    for index, at in enumerate(occ for occ in OCCURRENCES if occ not in (600, 1920)):
        shop.append(_span(f"{index + 1:032x}", 10 + index, "compute_total", at, error="boom", exception=zero))
    shop += [
        _span(TRACE_BIG, 100 + index, f"step {index}", 1900 + index * 0.05)
        for index in range(BIG_TRACE_SPANS)
    ]
    shop.append(_span(TRACE_BIG, 999, "compute_total", 1920, error="boom", exception=zero))
    billing = [_span("d" * 32, 5, "compute_total", 650, error="boom", exception=zero)]
    traces = {
        "resourceSpans": [
            {"resource": _resource("shop"), "scopeSpans": [{"scope": {"name": "shop"}, "spans": shop}]},
            {
                "resource": _resource("billing"),
                "scopeSpans": [{"scope": {"name": "billing"}, "spans": billing}],
            },
        ]
    }
    # A log of the shop every 2 s from T0+300 s to T0+900 s, one of them carrying a bearer token.
    shop_logs = [_log(at, f"tick {at}") for at in range(300, 901, 2) if at != 598]
    shop_logs.append(_log(598, f"retrying payment with {BEARER}", "ERROR", 17, TRACE_A))
    logs = {
        "resourceLogs": [
            {
                "resource": _resource("shop"),
                "scopeLogs": [{"scope": {"name": "shop"}, "logRecords": shop_logs}],
            },
            {
                "resource": _resource("billing"),
                "scopeLogs": [{"scope": {"name": "billing"}, "logRecords": [_log(600, "billing tick")]}],
            },
        ]
    }
    return [json.dumps(traces), json.dumps(logs)]


def shop_dataset() -> Dataset:
    dataset = Dataset()
    load_otlp_lines(shop_otlp_lines(), dataset, where="shop telemetry")
    return dataset


def shop_request(checkout: Path) -> DiagnosisRequest:
    """What the SigNoz source hands the diagnosis: exception events of one SigNoz group."""
    group_id = signoz_group_id("shop", "ZeroDivisionError", MESSAGE)
    events = [
        ErrorEvent(
            event_id=f"signoz:{group_id}@{name}",
            timestamp=T0 + timedelta(seconds=at),
            service="shop",
            kind="exception",
            error_type="ZeroDivisionError",
            message=MESSAGE,
            trace_id=trace_id,
            source_group_id=group_id,
            count=3,
        )
        for name, at, trace_id in (("a", 600, TRACE_A), ("big", 1920, TRACE_BIG))
    ]
    return sample_request(checkout).model_copy(
        update={
            "service": "shop",
            "sample_events": events,
            "related_logs": [],
            "stats": OccurrenceStats(
                total=len(OCCURRENCES),
                in_window=len(OCCURRENCES),
                first_seen=T0 + timedelta(seconds=OCCURRENCES[0]),
                last_seen=T0 + timedelta(seconds=OCCURRENCES[-1]),
                services=["shop"],
            ),
        }
    )


# ---------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def shop_server() -> Iterator[SignozEmulator]:
    with SignozEmulator(shop_dataset(), Behaviour(api_key=API_KEY)) as emulator:
        yield emulator


@pytest.fixture
def shop_signoz(shop_server: SignozEmulator) -> SignozEmulator:
    # Every emulator of a process shares one ClickHouse engine, and each one started empties it: the
    # module's server is kept, its rows written again for each test that reads them.
    shop_server.load()
    return shop_server


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return make_checkout(tmp_path / "repo")


@pytest.fixture
def scope(shop_signoz: SignozEmulator, checkout: Path) -> IncidentScope:
    return scope_for_request(shop_request(checkout), backend=SignozBackend(url=shop_signoz.url))


@pytest.fixture
def lookups(scope: IncidentScope) -> Iterator[SignozLookups]:
    with SignozLookups.connect(scope, api_key=API_KEY) as connected:
        yield connected


def _query_requests(emulator: SignozEmulator) -> list[dict[str, Any]]:
    return [json.loads(seen.body) for seen in emulator.requests if seen.path == "/api/v5/query_range"]


# ---------------------------------------------------------------------- the trace


def test_trace_lookup_returns_every_span_of_the_incidents_trace_from_signoz_redacted(scope, lookups):
    answer = IncidentTools(lookups, scope).get_trace(TRACE_A)
    lines = answer.splitlines()
    assert len(lines) == 2
    root, child = lines
    assert root.startswith(f"span_id={1:016x} ") and "name=POST /checkout" in root
    assert f"parent={1:016x}" in child and "name=compute_total" in child and "status=ERROR" in child
    assert "attr.exception.type=ZeroDivisionError" in child and "duration_ms=25.0" in child
    # What the telemetry carried is redacted before anyone reads it.
    assert "alice@example.com" not in answer and "[REDACTED:email]" in answer
    assert SECRET_TOKEN not in answer and "abcdefghijklmnop123" not in answer


def test_trace_lookup_is_bounded_and_asks_signoz_for_no_more(scope, lookups, shop_signoz):
    before = len(_query_requests(shop_signoz))
    spans = lookups.trace(TRACE_BIG, 10_000)
    assert len(spans) == MAX_SPANS
    assert [span.name for span in spans[:2]] == ["step 0", "step 1"]  # oldest first
    (request,) = _query_requests(shop_signoz)[before:]
    spec = request["compositeQuery"]["queries"][0]["spec"]
    assert spec["limit"] == MAX_SPANS and spec["filter"]["expression"] == f"trace_id = '{TRACE_BIG}'"


def test_a_trace_outside_the_incident_is_refused_before_signoz_is_asked(scope, lookups, shop_signoz):
    before = len(shop_signoz.requests)
    with pytest.raises(ScopeViolation, match="not one of this incident's traces"):
        IncidentTools(lookups, scope).get_trace(TRACE_OTHER)
    with pytest.raises(ScopeViolation):
        lookups.trace(TRACE_OTHER, 10)  # the back-end refuses on its own too
    with pytest.raises(ScopeViolation):
        lookups.trace("' OR trace_id != '", 10)
    assert len(shop_signoz.requests) == before


# ---------------------------------------------------------------------- the logs


def test_logs_around_an_occurrence_are_the_closest_ones_bounded_and_redacted(scope, lookups):
    event_id = scope.events[0].event_id  # the occurrence at T0+600 s
    answer = IncidentTools(lookups, scope).get_logs_around(event_id, minutes_before=5, minutes_after=1)
    lines = answer.splitlines()
    # 181 shop logs fall in [T0+300 s, T0+660 s]; the 100 closest to T0+600 s are T0+462..660 s.
    assert len(lines) == MAX_LOGS
    assert lines[0].startswith((T0 + timedelta(seconds=462)).isoformat())
    assert lines[-1].startswith((T0 + timedelta(seconds=660)).isoformat())
    assert all(" shop " in line for line in lines)  # only the incident's service
    retry = next(line for line in lines if "retrying payment" in line)
    assert f"trace={TRACE_A}" in retry and "ERROR" in retry
    assert "abcdefghijklmnop123" not in answer


def test_logs_of_another_service_or_far_from_the_samples_are_refused(scope, lookups):
    around = T0 + timedelta(seconds=600)
    with pytest.raises(ScopeViolation, match="service 'billing'"):
        lookups.logs("billing", around - timedelta(minutes=5), around, 10)
    with pytest.raises(ScopeViolation, match="around this incident's samples"):
        lookups.logs("shop", around + timedelta(days=2), around + timedelta(days=2, minutes=5), 10)
    with pytest.raises(ScopeViolation, match="at most 30 minutes"):
        lookups.logs("shop", around - timedelta(hours=3), around, 10)
    with pytest.raises(ValueError, match="not one of this incident's samples"):
        IncidentTools(lookups, scope).get_logs_around("signoz:someone-else@1")


# ---------------------------------------------------------------------- the counts


def test_error_counts_count_the_incidents_exception_group_per_bucket_inside_signoz(
    scope, lookups, shop_signoz
):
    before = len(_query_requests(shop_signoz))
    answer = IncidentTools(lookups, scope).get_error_counts(bucket_minutes=10)
    # The window starts an hour before the first occurrence (T0+60 s): buckets start at :01.
    assert answer.splitlines() == [
        f"{(T0 + timedelta(seconds=60)).isoformat()} 3",
        f"{(T0 + timedelta(seconds=1860)).isoformat()} 3",
    ]  # not the KeyError of the same service, nor the same error of billing
    (request,) = _query_requests(shop_signoz)[before:]
    query = request["compositeQuery"]["queries"][0]
    assert query["type"] == "clickhouse_sql" and "GROUP BY bucket" in query["spec"]["query"]


def test_error_counts_of_another_error_type_are_refused(scope, lookups):
    with pytest.raises(ScopeViolation, match="error type 'KeyError'"):
        lookups.error_counts("shop", "KeyError", scope.window_start, scope.window_end, timedelta(hours=1))


@pytest.fixture(scope="module")
def fixture_server() -> Iterator[SignozEmulator]:
    with SignozEmulator(fixture_dataset()) as emulator:
        yield emulator


@pytest.fixture
def fixture_signoz(fixture_server: SignozEmulator) -> SignozEmulator:
    fixture_server.load()  # as `shop_signoz`: the shared engine may hold another emulator's rows
    return fixture_server


@pytest.mark.parametrize("kind", ["exception", "span_error", "log"])
def test_error_counts_agree_with_what_the_signoz_source_counted(fixture_signoz, tmp_path, kind):
    events = source_for(fixture_signoz).poll(fixture_window(), frozenset()).events
    totals: dict[str, int] = {}  # a group's occurrences come as one event per minute
    for e in events:
        if e.kind == kind and e.source_group_id:
            totals[e.source_group_id] = totals.get(e.source_group_id, 0) + e.count
    group = max(totals, key=lambda group_id: totals[group_id])
    event = next(e for e in events if e.source_group_id == group).model_copy(update={"count": totals[group]})
    assert event.count >= 2
    checkout = make_checkout(tmp_path / "repo")
    assert diagnosis_error_count(checkout, event, fixture_signoz.url, None) == event.count


def test_error_counts_say_why_they_failed_when_the_key_may_not_run_sql(scope, checkout):
    behaviour = Behaviour(api_key=API_KEY, clickhouse_sql_allowed=False)
    with SignozEmulator(shop_dataset(), behaviour) as emulator:
        scope = scope.model_copy(update={"backend": SignozBackend(url=emulator.url)})
        lookups = lookups_for(scope, {"SIGNOZ_API_KEY": API_KEY})
        assert isinstance(lookups, SignozLookups)
        with lookups:
            server = build_server(lookups, scope)

            async def exercise():
                from mcp import Client

                async with Client(server) as client:
                    counts = await client.call_tool("get_error_counts", {"bucket_minutes": 10})
                    trace = await client.call_tool("get_trace", {"trace_id": TRACE_A})
                    return counts.content[0].text, trace.content[0].text

            counts, trace = anyio.run(exercise)
    assert counts.startswith("failed: ") and "clickhouse_sql" in counts and "Viewer role" in counts
    assert "name=compute_total" in trace  # the builder look-ups need no grant


# ---------------------------------------------------------------------- the key and the back-end


def test_the_key_reaches_signoz_only_from_the_servers_environment(scope):
    with_key, without_key = lookups_for(scope, {"SIGNOZ_API_KEY": API_KEY}), lookups_for(scope, {})
    assert isinstance(with_key, SignozLookups) and isinstance(without_key, SignozLookups)
    with with_key, without_key:
        assert len(with_key.trace(TRACE_A, 10)) == 2
        with pytest.raises(SignozError, match="no SIGNOZ_API_KEY is set"):
            without_key.trace(TRACE_A, 10)


def test_without_a_signoz_section_the_server_answers_from_the_samples(scope):
    recorded = scope.model_dump(mode="json", exclude={"backend"})
    lookups = lookups_for(IncidentScope.model_validate(recorded), {"SIGNOZ_API_KEY": API_KEY})
    assert isinstance(lookups, RecordedLookups)
    assert {span.trace_id for span in lookups.trace(TRACE_A, 10)} == {TRACE_A}


def test_the_key_is_in_the_servers_env_entry_and_nowhere_else(shop_signoz, checkout):
    launch = McpLaunch.for_signoz(shop_signoz.url, API_KEY)
    assert API_KEY not in repr(launch)
    scope = scope_for_request(shop_request(checkout), backend=launch.backend)
    assert API_KEY not in scope.model_dump_json()
    with pytest.raises(ValueError, match="api_key"):
        SignozBackend.model_validate({"url": shop_signoz.url, "api_key": API_KEY})
    entry = server_config(launch, Path("scope.json"))
    assert entry["env"] == {"SIGNOZ_API_KEY": API_KEY}
    assert API_KEY not in json.dumps([entry["command"], entry["args"]])


def _recording_cli(directory: Path) -> tuple[Path, Path]:
    """A stand-in for `claude` that records what it was handed, and answers."""
    record = directory / "record.json"
    answer = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1, "result": ""}
    answer["structured_output"] = good_answer()
    script = directory / "claude"
    script.write_text(
        textwrap.dedent(
            f"""\
            #!{sys.executable}
            import json, os, stat, sys
            config_path = sys.argv[sys.argv.index("--mcp-config") + 1]
            config = json.load(open(config_path))
            server = config["mcpServers"]["rounds"]
            scope_path = server["args"][server["args"].index("--scope") + 1]
            json.dump({{"config": config, "config_mode": stat.S_IMODE(os.stat(config_path).st_mode),
                       "scope": open(scope_path).read(), "scope_path": scope_path,
                       "env": dict(os.environ), "argv": sys.argv[1:]}}, open({str(record)!r}, "w"))
            print(json.dumps({answer!r}))
            """
        ),
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script, record


def test_the_diagnoser_writes_the_key_only_into_the_servers_private_config_entry(
    shop_signoz, checkout, tmp_path
):
    binary, record = _recording_cli(tmp_path)
    cli = ClaudeCli(
        binary=binary,
        model="sonnet",
        credentials={"ANTHROPIC_API_KEY": "sk-ant-test"},
        inherited_env={"PATH": os.environ.get("PATH", "")},
    )
    diagnoser = ClaudeCodeDiagnoser(cli, incident_tools=McpLaunch.for_signoz(shop_signoz.url, API_KEY))
    outcome = diagnoser.diagnose(shop_request(checkout))
    assert outcome.status == "ok", outcome.detail
    seen = json.loads(record.read_text())
    assert seen["config"]["mcpServers"]["rounds"]["env"] == {"SIGNOZ_API_KEY": API_KEY}
    assert seen["config_mode"] & (stat.S_IRWXG | stat.S_IRWXO) == 0
    assert json.loads(seen["scope"])["backend"] == {
        "backend": "signoz",
        "url": shop_signoz.url,
        "timeout_seconds": 15.0,
        "deadline_seconds": 30.0,
    }
    assert API_KEY not in seen["scope"]
    assert API_KEY not in json.dumps([seen["env"], seen["argv"]])
    assert not Path(seen["scope_path"]).is_relative_to(checkout)


def test_a_round_hands_the_cli_the_signoz_lookups_when_signoz_is_configured(clean_env, tmp_path):
    binary, _ = _recording_cli(tmp_path)
    clean_env.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    clean_env.setenv("ROUNDS_CLAUDE_BIN", str(binary))
    diagnoser, _ = build_diagnoser(load_settings())
    assert isinstance(diagnoser, ClaudeCodeDiagnoser) and diagnoser.incident_tools is not None
    assert diagnoser.incident_tools.backend == RecordedBackend()

    clean_env.setenv("SIGNOZ_API_URL", "http://127.0.0.1:1")
    clean_env.setenv("SIGNOZ_API_KEY", API_KEY)
    diagnoser, _ = build_diagnoser(load_settings())
    assert isinstance(diagnoser, ClaudeCodeDiagnoser) and diagnoser.incident_tools is not None
    assert diagnoser.incident_tools.backend == SignozBackend(url="http://127.0.0.1:1")
    assert diagnoser.incident_tools.env == {"SIGNOZ_API_KEY": API_KEY}


# ---------------------------------------------------------------------- the real CLI


@pytest.mark.real_cli
def test_real_cli_gets_the_emulators_spans_through_the_signoz_lookups(shop_signoz, checkout, claude_bin):
    script = [
        turn(ToolUse("mcp__rounds__get_trace", {"trace_id": TRACE_A})),
        structured_output(good_answer()),
    ]
    with FakeMessagesApi(script) as api:
        diagnoser = fake_api_diagnoser(
            claude_bin, api, max_turns=6, incident_tools=McpLaunch.for_signoz(shop_signoz.url, API_KEY)
        )
        outcome = diagnoser.diagnose(shop_request(checkout))
    assert outcome.status == "ok", outcome.detail
    trace_answer = next(result for result in api.tool_results() if "name=compute_total" in result)
    # The emulator's spans, read with the key the server alone was given, redacted.
    assert "name=POST /checkout" in trace_answer and "attr.exception.type=ZeroDivisionError" in trace_answer
    assert "[REDACTED:email]" in trace_answer and "alice@example.com" not in trace_answer
    assert API_KEY not in api.all_request_text()
