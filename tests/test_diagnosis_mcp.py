"""The incident look-ups: scoped, bounded and redacted, over a fake back-end and over MCP."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import anyio
import pytest
from diagnosis_samples import START, make_checkout, sample_request

from rounds_bot.diagnosis.lookups.recorded import RecordedLookups
from rounds_bot.diagnosis.lookups.scope import CountPoint, LogRow, SpanRecord, scope_for_request
from rounds_bot.diagnosis.lookups.tools import IncidentTools
from rounds_bot.diagnosis.mcp_server import McpLaunch, build_server, server_config


class FakeLookups:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def trace(self, trace_id: str, limit: int) -> list[SpanRecord]:
        self.calls.append(("trace", trace_id, limit))
        return [
            SpanRecord(
                trace_id=trace_id, name=f"span-{i}", service="shop", attributes={"user": "bob@example.com"}
            )
            for i in range(limit + 50)
        ]

    def logs(self, service: str, start: datetime, end: datetime, limit: int) -> list[LogRow]:
        self.calls.append(("logs", service, start, end, limit))
        return [LogRow(timestamp=start, service=service, body="Authorization: Bearer abcdefghijklmnop123")]

    def error_counts(self, service, error_type, start, end, step) -> list[CountPoint]:
        self.calls.append(("counts", service, error_type, step))
        return [CountPoint(start=start, count=3)]


@pytest.fixture
def scope(tmp_path: Path):
    return scope_for_request(sample_request(make_checkout(tmp_path / "repo")))


def test_trace_lookup_accepts_only_the_incidents_traces_and_is_bounded_and_redacted(scope):
    fake = FakeLookups()
    tools = IncidentTools(fake, scope)
    answer = tools.get_trace("trace-0")
    assert len(answer.splitlines()) == 200
    assert "bob@example.com" not in answer and "[REDACTED:email]" in answer
    with pytest.raises(ValueError, match="not one of this incident's traces"):
        tools.get_trace("trace-of-another-tenant")


def test_logs_around_an_event_are_clamped_to_thirty_minutes_and_redacted(scope):
    fake = FakeLookups()
    answer = IncidentTools(fake, scope).get_logs_around("evt-0", minutes_before=600, minutes_after=-5)
    _, service, start, end, _ = fake.calls[0]
    assert service == "shop" and end - start == timedelta(minutes=30)
    assert "abcdefghijklmnop123" not in answer
    with pytest.raises(ValueError, match="not one of this incident's samples"):
        IncidentTools(fake, scope).get_logs_around("evt-unknown")


def test_error_counts_use_the_incidents_service_and_type(scope):
    fake = FakeLookups()
    answer = IncidentTools(fake, scope).get_error_counts(bucket_minutes=5)
    assert fake.calls[0][:3] == ("counts", "shop", "ZeroDivisionError")
    assert answer.endswith(" 3")


def test_recorded_backend_answers_from_the_incidents_own_events(scope):
    lookups = RecordedLookups(scope.recorded_events, scope.recorded_logs)
    assert {span.trace_id for span in lookups.trace("trace-1", 10)} == {"trace-1"}
    logs = lookups.logs("shop", START, START + timedelta(minutes=1), 10)
    assert [log.body for log in logs] == ["checkout failed for cart 991: empty cart"]
    counts = lookups.error_counts("shop", None, START, START + timedelta(hours=1), timedelta(minutes=1))
    assert sum(point.count for point in counts) == 6


def test_server_config_passes_the_scope_and_only_the_servers_own_variables(tmp_path):
    config = server_config(McpLaunch(command=["python", "-m", "x"], env={"K": "v"}), tmp_path / "s.json")
    assert config == {
        "type": "stdio",
        "command": "python",
        "args": ["-m", "x", "--scope", str(tmp_path / "s.json")],
        "env": {"K": "v"},
    }


def test_mcp_server_lists_read_only_tools_and_refuses_out_of_scope_calls(scope):
    from mcp import Client

    server = build_server(FakeLookups(), scope)

    async def exercise():
        async with Client(server) as client:
            listed = await client.list_tools()
            inside = await client.call_tool("get_trace", {"trace_id": "trace-1"})
            outside = await client.call_tool("get_trace", {"trace_id": "elsewhere"})
            return listed, inside, outside

    listed, inside, outside = anyio.run(exercise)
    assert sorted(tool.name for tool in listed.tools) == ["get_error_counts", "get_logs_around", "get_trace"]
    assert all(tool.annotations.read_only_hint for tool in listed.tools)
    assert "name=span-0" in inside.content[0].text
    assert outside.content[0].text.startswith("refused:")
