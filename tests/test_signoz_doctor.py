"""`check()` reports what rounds will read from a SigNoz, and every problem at once."""

from __future__ import annotations

import socket

import pytest
from signoz_emulator import Behaviour, Fault, SignozEmulator
from signoz_fixtures import T0_NS, fixture_dataset

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
    assert any("clickhouse_sql" in api for api in report.apis)
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
    assert "refused the API key" in report.problems[0]
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
    assert "HTML page" in report.problems[0] and ":8080" in report.problems[0]


def test_an_unreachable_host_is_reported_not_raised():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    report = check(f"http://127.0.0.1:{port}", None)
    assert not report.ok and "cannot reach SigNoz" in report.problems[0]


def test_a_malformed_url_is_reported():
    report = check("signoz:8080", None)
    assert not report.ok and "not an http(s) URL" in report.problems[0]
