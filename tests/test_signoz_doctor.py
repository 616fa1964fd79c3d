"""`check()` reports what rounds will read from a SigNoz, and every problem at once."""

from __future__ import annotations

import socket

import pytest
from signoz_emulator import Behaviour, Fault, SignozEmulator
from signoz_fixtures import T0_NS, fixture_dataset

from rounds_bot.config import Settings
from rounds_bot.doctor.result import Check
from rounds_bot.doctor.source import source_checks
from rounds_bot.sources.signoz.probe import check
from rounds_bot.sources.signoz.times import ns_to_datetime

NOW = ns_to_datetime(T0_NS + 3_500 * 1_000_000_000)


@pytest.fixture(scope="module")
def dataset():
    return fixture_dataset()


def test_a_healthy_signoz_reports_version_apis_and_the_last_hour(dataset):
    with SignozEmulator(dataset, Behaviour(api_key="k")) as emulator:
        report = check(emulator.url, "k", now=NOW)
    assert report.ok and report.problems == []
    assert report.version == "v0.138.0" and report.clickhouse_sql is True
    assert report.apis == [
        "POST /api/v1/countErrors and POST /api/v1/listErrors (a JSON body: SigNoz v0.18+)",
        "POST /api/v5/query_range with clickhouse_sql: exception samples, error spans and logs grouped "
        "in ClickHouse (the window written in as nanoseconds)",
    ]
    assert report.clickhouse_errors is not None and report.clickhouse_errors.startswith(
        "400, 404 or 500 by ClickHouse's error code (SigNoz v0.131+)"
    )
    last_hour = report.last_hour
    assert last_hour is not None
    assert (last_hour.exception_groups, last_hour.exception_events) == (3, 5)
    assert (last_hour.error_spans, last_hour.error_logs) == (6, 4)


def test_a_key_without_the_clickhouse_sql_grant_is_reported_with_the_fallback(dataset):
    with SignozEmulator(dataset, Behaviour(clickhouse_sql_allowed=False)) as emulator:
        report = check(emulator.url, None, now=NOW)
    assert report.ok and report.clickhouse_sql is False
    assert "GET /api/v1/errorFromGroupID (one request per new exception group)" in report.apis
    assert report.last_hour is not None and report.last_hour.exception_events == 5


def test_a_wrong_key_is_the_one_problem_reported(dataset):
    with SignozEmulator(dataset, Behaviour(api_key="k")) as emulator:
        report = check(emulator.url, "nope", now=NOW)
    assert not report.ok and len(report.problems) == 1
    assert "refused the API key" in report.problems[0].problem
    assert report.problems[0].fix.startswith("set SIGNOZ_API_KEY to a key from Settings")
    assert report.version == "v0.138.0"


def test_an_old_signoz_is_reported_with_what_rounds_cannot_read(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.80.0")) as emulator:
        report = check(emulator.url, None, now=NOW)
    assert report.ok and report.last_hour is not None
    assert report.last_hour.error_spans is None and report.last_hour.exception_events == 5
    assert any("v0.87.0+" in note for note in report.notes)


def test_a_web_page_instead_of_the_api_is_reported_with_the_ports(dataset):
    with SignozEmulator(dataset) as emulator:
        emulator.behaviour.faults.append(Fault("html", path="/api/v1/version"))
        report = check(emulator.url, None, now=NOW)
    assert not report.ok and report.version is None
    assert "HTML page" in report.problems[0].problem and ":8080" in report.problems[0].fix


def test_an_unreachable_host_is_reported_not_raised():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    report = check(f"http://127.0.0.1:{port}", None)
    assert not report.ok and "cannot reach SigNoz" in report.problems[0].problem
    assert report.problems[0].fix.startswith(
        f"check that SigNoz is running and that this machine can reach http://127.0.0.1:{port}"
    )


def test_a_malformed_url_is_reported():
    report = check("signoz:8080", None)
    assert not report.ok and "not an http(s) URL" in report.problems[0].problem
    assert report.problems[0].fix.startswith("set SIGNOZ_API_URL to the SigNoz base URL")


@pytest.mark.parametrize(
    ("version", "method", "variables", "errors"),
    [
        ("v0.17.0", "GET", None, "no query_range before v0.87"),
        ("v0.18.0", "POST", None, "no query_range before v0.87"),
        ("v0.87.0", "POST", "unrendered; SigNoz renders them from v0.88)", "500 with ClickHouse's message"),
        ("v0.88.0", "POST", "(the window written in as nanoseconds)", "500 with ClickHouse's message"),
        ("v0.130.0", "POST", "(the window written in as nanoseconds)", "500 with ClickHouse's message"),
        ("v0.131.0", "POST", "(the window written in as nanoseconds)", "400, 404 or 500 by ClickHouse's"),
    ],
)
def test_the_api_paths_reported_follow_the_version_gates(dataset, version, method, variables, errors):
    with SignozEmulator(dataset, Behaviour(version=version)) as emulator:
        report = check(emulator.url, None, now=NOW)
        asked = {(request.method, request.path) for request in emulator.requests}
    assert report.ok, report.problems  # the probe itself asks the way the version wants
    assert report.version == version and report.last_hour is not None
    assert report.last_hour.exception_groups == 3 and report.last_hour.exception_events == 5
    assert report.apis[0].startswith(f"{method} /api/v1/countErrors and {method} /api/v1/listErrors")
    assert (method, "/api/v1/countErrors") in asked
    sql_paths = [api for api in report.apis if "clickhouse_sql" in api]
    if variables is None:
        assert sql_paths == [] and not any("query_range" in api for api in report.apis)
    else:
        assert len(sql_paths) == 1 and variables in sql_paths[0]
    assert report.clickhouse_errors is not None and report.clickhouse_errors.startswith(errors)


def test_the_doctor_shows_the_version_the_api_paths_and_each_problem_with_what_to_check(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.17.0")) as emulator:
        checks = _signoz_checks(emulator.url)
    lines = [f"{c.area}: {c.detail}" for c in checks]
    assert lines[0].startswith(f"source: SigNoz v0.17.0 at {emulator.url}; last hour: 3 exception groups")
    assert (
        "SigNoz API: uses GET /api/v1/countErrors and GET /api/v1/listErrors (query parameters: "
        "SigNoz before v0.18)" in lines
    )
    assert any(line.startswith("SigNoz API: ClickHouse errors come back as no query_range") for line in lines)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    unreachable = _signoz_checks(f"http://127.0.0.1:{port}")
    assert [c.status for c in unreachable] == ["fix"]
    assert unreachable[0].detail.startswith(f"cannot reach SigNoz at http://127.0.0.1:{port}")
    assert unreachable[0].fix is not None and "see the message" not in unreachable[0].fix
    assert (
        unreachable[0].fix.startswith("check that SigNoz is running")
        and "/api/v1/health" in unreachable[0].fix
    )


def _signoz_checks(url: str) -> list[Check]:
    settings = Settings(_env_file=None, SIGNOZ_API_URL=url)  # type: ignore[call-arg]
    return source_checks(settings, NOW, None)
