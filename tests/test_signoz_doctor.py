"""`check()` reports what rounds will read from a SigNoz, and every problem at once."""

from __future__ import annotations

import socket
from functools import partial

import pytest
from signoz_emulator import Behaviour, Fault, SignozEmulator
from signoz_emulator.data import Dataset
from signoz_fixtures import ERROR_LOGS_QUERY, T0_NS, fixture_dataset

from rounds_bot.doctor.result import Check
from rounds_bot.doctor.source import source_checks
from rounds_bot.settings import Settings
from rounds_bot.sources.signoz.probe import check
from rounds_bot.sources.signoz.times import ns_to_datetime

NOW = ns_to_datetime(T0_NS + 3_500 * 1_000_000_000)


@pytest.fixture(scope="module")
def dataset():
    return fixture_dataset()


def test_a_healthy_signoz_reports_version_apis_and_the_last_hour(dataset):
    with SignozEmulator(dataset, Behaviour(api_key="k")) as emulator:
        report = check(emulator.url, "k", now=NOW)
        asked = emulator.paths()
    assert report.ok and report.problems == []
    assert report.version == "v0.138.0" and report.clickhouse_sql is True
    assert report.apis == [
        "POST /api/v5/query_range with clickhouse_sql: exceptions, error spans and logs counted per minute "
        "in ClickHouse (the window written in as nanoseconds)",
    ]
    # the round's own counting queries, one per stream (and the logs' JSON-body check): no countErrors
    assert asked == ["/api/v1/version"] + ["/api/v5/query_range"] * (len(asked) - 1)
    assert report.clickhouse_errors is not None and report.clickhouse_errors.startswith(
        "400, 404 or 500 by ClickHouse's error code (SigNoz v0.131+)"
    )
    last_hour = report.last_hour
    assert last_hour is not None
    assert (last_hour.exception_groups, last_hour.exception_events) == (3, 5)
    # error spans as a round counts them: those without an exception event (the other 4 are exceptions)
    assert (last_hour.error_spans, last_hour.error_logs) == (2, 4)


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
    with SignozEmulator(dataset, Behaviour(version="v0.59.0")) as emulator:
        report = check(emulator.url, None, now=NOW)
    assert report.ok and report.last_hour is not None
    assert report.last_hour.error_spans is None and report.last_hour.exception_events == 5
    assert any("v0.60.0+" in note for note in report.notes)


def test_a_signoz_before_v0_87_is_read_on_v4_and_the_doctor_says_so(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.80.0")) as emulator:
        report = check(emulator.url, None, now=NOW)
    assert report.ok and report.last_hour is not None
    assert report.last_hour.error_spans == 2 and report.last_hour.error_logs == 4
    assert any(path.startswith("POST /api/v4/query_range with clickhouse_sql") for path in report.apis)


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
        ("v0.17.0", "GET", None, "no query_range rounds can run SQL on before v0.60"),
        ("v0.18.0", "POST", None, "no query_range rounds can run SQL on before v0.60"),
        ("v0.59.0", "POST", None, "no query_range rounds can run SQL on before v0.60"),
        (
            "v0.60.0",
            "POST",
            "v4 runs the same SQL as a list panel)",
            "500 with ClickHouse's message from /api/v4",
        ),
        (
            "v0.86.0",
            "POST",
            "v4 runs the same SQL as a list panel)",
            "500 with ClickHouse's message from /api/v4",
        ),
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
    sql_paths = [api for api in report.apis if "clickhouse_sql" in api]
    if variables is None:
        assert report.apis[0].startswith(f"{method} /api/v1/countErrors and {method} /api/v1/listErrors")
        assert (method, "/api/v1/countErrors") in asked
        assert sql_paths == [] and not any("query_range" in api for api in report.apis)
        assert report.last_hour.error_spans is None and report.last_hour.error_logs is None
    else:
        assert len(sql_paths) == 1 and variables in sql_paths[0]
        assert not any(path.startswith("/api/v1/countErrors") for _, path in asked)
        assert (report.last_hour.error_spans, report.last_hour.error_logs) == (2, 4)
    assert report.clickhouse_errors is not None and report.clickhouse_errors.startswith(errors)


def test_the_doctor_shows_the_version_the_api_paths_and_each_problem_with_what_to_check(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.17.0")) as emulator:
        checks = _signoz_checks(emulator.url)
    lines = [f"{c.area}: {c.detail}" for c in checks]
    assert lines[:4] == [
        f"source: SigNoz v0.17.0 at {emulator.url}",
        "last hour: exceptions: 5 occurrences in 3 exception groups",
        "last hour: error spans: not read, SigNoz v0.17.0 has no query_range rounds can run its SQL on "
        "(from v0.60.0)",
        "last hour: error logs: not read, SigNoz v0.17.0 has no query_range rounds can run its SQL on "
        "(from v0.60.0)",
    ]
    assert (
        "SigNoz API: uses GET /api/v1/countErrors and GET /api/v1/listErrors (query parameters: "
        "SigNoz before v0.18): exception groups, each counted over its first to last seen" in lines
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


def _signoz_checks(url: str, key: str | None = None) -> list[Check]:
    settings = Settings(_env_file=None, SIGNOZ_API_URL=url, SIGNOZ_API_KEY=key)  # type: ignore[call-arg]
    return source_checks(settings, NOW, None)


def _lines(checks: list[Check]) -> list[str]:
    return [f"{c.status}: {c.area}: {c.detail}" + (f" -> {c.fix}" if c.fix else "") for c in checks]


def test_the_doctor_reports_each_stream_as_a_round_reads_it(dataset):
    with SignozEmulator(dataset, Behaviour(api_key="k")) as emulator:
        lines = _lines(_signoz_checks(emulator.url, "k"))
    assert lines[:4] == [
        f"ok: source: SigNoz v0.138.0 at {emulator.url}",
        "ok: last hour: exceptions: 5 occurrences in 3 exception groups",
        "ok: last hour: error spans: 2 occurrences in 1 group of error spans whose exception SigNoz did "
        "not index",
        "ok: last hour: error logs: 4 occurrences in 3 groups of logs of severity ERROR or worse",
    ]


@pytest.mark.parametrize(
    ("kept", "counts"),
    [
        # no error index rows: the spans whose exception events the collector flagged as indexed (`isError`,
        # which it sets on exactly the events it writes error rows of) are left to the exceptions, so only the
        # two error spans without an exception event count
        ("spans", ("0 occurrences", "2 occurrences", "0 occurrences")),
        ("logs", ("0 occurrences", "0 occurrences", "4 occurrences")),
    ],
)
def test_a_spans_only_or_logs_only_install_shows_its_errors(dataset, kept, counts):
    only = Dataset(**{kept: getattr(dataset, kept)})
    with SignozEmulator(only) as emulator:
        checks = _signoz_checks(emulator.url)
    streams = [c for c in checks if c.area == "last hour"]
    assert [c.status for c in streams] == ["ok", "ok", "ok"]
    for check_, count in zip(streams, counts, strict=True):
        assert check_.detail.split(": ", 1)[1].startswith(count)


@pytest.mark.parametrize(
    ("key", "said"),
    [("nope", "refused the API key on /api/v5/query_range (401"), (None, "no SIGNOZ_API_KEY is set (401")],
)
def test_a_refused_key_is_one_line_and_nothing_more_is_asked(dataset, key, said):
    with SignozEmulator(dataset, Behaviour(api_key="k")) as emulator:
        checks = _signoz_checks(emulator.url, key)
        asked = emulator.paths()
    assert [(c.status, c.area) for c in checks] == [("fix", "source")]
    assert said in checks[0].detail
    assert key is not None or "refused the API key" not in checks[0].detail
    assert checks[0].fix is not None and checks[0].fix.startswith("set SIGNOZ_API_KEY")
    assert asked == ["/api/v1/version", "/api/v5/query_range"]


def test_a_role_refused_is_one_line_too(dataset):
    with SignozEmulator(dataset, Behaviour(role_allowed=False)) as emulator:
        checks = _signoz_checks(emulator.url, "k")
    assert [(c.status, c.area) for c in checks] == [("fix", "source")]
    assert "forbids /api/v1/countErrors for this API key (403" in checks[0].detail


def test_a_proxy_error_page_is_summarised_in_one_line_per_stream(dataset):
    with SignozEmulator(dataset) as emulator:
        emulator.behaviour.faults.append(Fault("proxy", status=502, path="/api/v5/", times=-1))
        checks = _signoz_checks(emulator.url)
    lines = _lines(checks)
    for line, stream in zip(lines[1:4], ("exceptions", "error spans", "error logs"), strict=True):
        assert line.startswith(
            f"fix: last hour: {stream}: SigNoz failed POST /api/v5/query_range (HTTP 502: an HTML page, "
            'server nginx/1.25.3, title "502 Bad Gateway"); gave up after 2 attempt(s) -> a proxy in '
            "front of SigNoz answered instead of SigNoz"
        )
    assert not any("<" in line for line in lines)


@pytest.mark.parametrize(
    ("status", "location", "base"),
    [
        (301, "https://signoz.example.com/api/v1/version", "https://signoz.example.com"),
        (308, "/signoz/api/v1/version", "{url}/signoz"),  # a relative Location, under a path prefix
    ],
)
def test_a_redirect_is_one_line_naming_where_it_points(dataset, status, location, base):
    with SignozEmulator(dataset) as emulator:
        emulator.behaviour.faults.append(Fault("redirect", status=status, path="/api/", location=location))
        lines = _lines(_signoz_checks(emulator.url))
    assert lines == [
        f"fix: source: {emulator.url} redirects GET /api/v1/version to {location} (HTTP {status}); rounds "
        f"follows no redirect -> set SIGNOZ_API_URL to where it points: {base.format(url=emulator.url)}"
    ]


def test_a_failed_count_errors_query_is_reported_as_not_retried(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.59.0")) as emulator:
        emulator.behaviour.faults.append(Fault("query", path="/api/v1/countErrors"))
        checks = _signoz_checks(emulator.url)
        asked = emulator.paths()
    lines = _lines(checks)
    assert lines[1] == (
        "fix: last hour: exceptions: SigNoz could not run the query for POST /api/v1/countErrors (HTTP 422 "
        "exec: error in processing sql query) -> a 422 is not retried: SigNoz's query-service and ClickHouse "
        "logs name the failed query; report the SigNoz version and this message"
    )
    assert asked.count("/api/v1/countErrors") == 1  # not retried, as the line says
    assert [c.status for c in checks[2:4]] == ["off", "off"]  # v0.59: spans and logs not read, said so
    assert any("422 from countErrors (not retried)" in line for line in lines)


def test_a_proxy_that_answers_404_for_v5_is_read_on_v4(dataset):
    with SignozEmulator(dataset) as emulator:
        emulator.behaviour.faults.append(Fault("proxy", status=404, path="/api/v5/", times=-1))
        lines = _lines(_signoz_checks(emulator.url))
        asked = emulator.paths()
    assert lines[1:4] == [
        "ok: last hour: exceptions: 5 occurrences in 3 exception groups",
        "ok: last hour: error spans: 2 occurrences in 1 group of error spans whose exception SigNoz did "
        "not index",
        "ok: last hour: error logs: 4 occurrences in 3 groups of logs of severity ERROR or worse",
    ]
    assert asked.count("/api/v5/query_range") == 1 and "/api/v4/query_range" in asked


@pytest.mark.parametrize("failing", ["exceptions", "error spans", "error logs"])
def test_one_failing_stream_is_one_line_and_the_others_are_counted(dataset, failing):
    marker = {
        "exceptions": "AS placed_ns",  # where the exception groups' query places each row
        "error spans": "name AS span_name",  # the spans table is read by the exceptions' query too
        "error logs": ERROR_LOGS_QUERY,
    }[failing]
    with SignozEmulator(dataset) as emulator:
        emulator.behaviour.faults.append(Fault("query", path="/api/v5/", body_contains=marker, times=-1))
        lines = _lines(_signoz_checks(emulator.url))
    streams = [line for line in lines if ": last hour: " in line]
    assert len(streams) == 3
    for line in streams:
        if f"last hour: {failing}:" in line:
            assert line.startswith(f"fix: last hour: {failing}: SigNoz's ClickHouse was too busy")
            assert "\n" not in line
        else:
            assert line.startswith("ok: ")


#: how long the doctor waits for a stream: long enough that the streams the emulator answers at once are read
#: on a loaded machine (its ClickHouse queries take seconds there), and for the hung one, short of the hang
STREAM_TIMEOUT = 30.0
HANG_TIMEOUT = 2.5


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        (Fault("hang", seconds=5.0), f"did not answer POST /api/v5/query_range within {HANG_TIMEOUT:.1f} s"),
        (
            Fault("status", status=429, retry_after="0"),
            "SigNoz rate-limited POST /api/v5/query_range (HTTP 429",
        ),
        (Fault("html"), "answered an HTML page (HTTP 200, server signoz-emulator"),
        (Fault("truncated"), "the body was cut short"),
        (Fault("malformed"), "with a body that is not valid JSON"),
        (Fault("status", status=400), "SigNoz rejected POST /api/v5/query_range as invalid (400"),
    ],
)
def test_a_stream_answered_badly_is_one_doctor_line_and_the_others_are_counted(dataset, fault, said):
    fault.path, fault.times, fault.body_contains = "/api/v5/", -1, ERROR_LOGS_QUERY
    with SignozEmulator(dataset, Behaviour(faults=[fault])) as emulator:
        settings = Settings(_env_file=None, SIGNOZ_API_URL=emulator.url)  # type: ignore[call-arg]
        timeout = HANG_TIMEOUT if fault.kind == "hang" else STREAM_TIMEOUT
        checks = source_checks(settings, NOW, partial(check, timeout_seconds=timeout))
    streams = [c for c in checks if c.area == "last hour"]
    assert [(c.status, c.detail.split(":")[0]) for c in streams] == [
        ("ok", "exceptions"),
        ("ok", "error spans"),
        ("fix", "error logs"),
    ]
    failed = streams[2]
    assert said in failed.detail and "\n" not in failed.detail and "<title" not in failed.detail
    assert failed.fix
