"""Every way SigNoz can fail gives its own clear error, or a logged skip: never partial data."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from signoz_emulator import Behaviour, Fault, SignozEmulator
from signoz_emulator.data import Dataset
from signoz_fixtures import RecordedSleep, fixture_dataset, fixture_window, source_for

from rounds_bot.errors import SignozError
from rounds_bot.sources.signoz.client import SignozClient, normalise_base_url
from rounds_bot.sources.signoz.failures import parse_retry_after


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return fixture_dataset()


@pytest.fixture
def emulator(dataset: Dataset) -> Iterator[SignozEmulator]:
    with SignozEmulator(dataset, Behaviour(api_key="test-key")) as running:
        yield running


def poll_error(emulator: SignozEmulator, **options: Any) -> SignozError:
    with source_for(emulator, **options) as source, pytest.raises(SignozError) as caught:
        source.poll(fixture_window(), frozenset())
    return caught.value


def poll_failure(emulator: SignozEmulator, **options: Any) -> str:
    """What went wrong: the poll's error when nothing could be read, else its one line per failed stream
    (the other streams were read)."""
    with source_for(emulator, **options) as source:
        try:
            result = source.poll(fixture_window(), frozenset())
        except SignozError as error:
            return str(error)
    assert result.failures, "a stream should have failed"
    return "\n".join(result.failures)


@pytest.fixture
def listing(dataset: Dataset) -> Iterator[SignozEmulator]:
    """A SigNoz whose key may not run clickhouse_sql: exceptions come from countErrors and listErrors."""
    with SignozEmulator(dataset, Behaviour(api_key="test-key", clickhouse_sql_allowed=False)) as running:
        yield running


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -- refusals ---------------------------------------------------------------------------------


def test_an_html_page_instead_of_json_says_which_url_and_ports_to_use(emulator):
    emulator.behaviour.faults.append(Fault("html", path="/api/v1/version"))
    error = poll_error(emulator)
    assert f"{emulator.url}/api/v1/version answered an HTML page" in str(error)
    assert ":8080" in error.hint and ":3301" in error.hint


def test_a_wrong_api_key_names_the_header_and_where_keys_come_from(emulator):
    error = poll_error(emulator, api_key="wrong")
    assert "refused the API key" in str(error) and "401" in str(error)
    assert "SIGNOZ-API-KEY" in error.hint and "Service Accounts" in error.hint


def test_a_forbidden_role_names_the_role_and_the_clickhouse_sql_grant(dataset):
    with SignozEmulator(dataset, Behaviour(role_allowed=False)) as emulator:
        error = poll_error(emulator)
    assert "403" in str(error) and "only viewers/editors/admins" in str(error)
    assert "Viewer role" in error.hint and "clickhouse_sql grant" in error.hint


def test_a_bad_request_quotes_signoz_and_points_at_its_docs(emulator):
    query = {
        "type": "builder_query",
        "spec": {"name": "A", "signal": "logs", "filter": {"expression": "nope.x = 1"}},
    }
    request = {
        "schemaVersion": "v1",
        "start": 1,
        "end": 2,
        "requestType": "raw",
        "compositeQuery": {"queries": [query]},
    }
    with SignozClient(emulator.url, "test-key") as client, pytest.raises(SignozError) as caught:
        client.query_range(request)
    assert "400 invalid_input: key `nope.x` not found" in str(caught.value)
    assert "https://signoz.io/docs/userguide/search-troubleshooting/" in caught.value.hint


def test_an_unreachable_host_gives_up_with_the_url_hint():
    sleep = RecordedSleep()
    client = SignozClient(f"http://127.0.0.1:{free_port()}", None, sleep=sleep)
    with client, pytest.raises(SignozError, match="cannot reach SigNoz") as caught:
        client.version()
    assert "gave up after 5 attempt(s)" in str(caught.value)
    assert len(sleep.waits) == 4 and "SIGNOZ_API_URL" in caught.value.hint


def test_a_url_that_is_not_http_is_refused_before_any_request():
    with pytest.raises(SignozError, match="not an http"):
        normalise_base_url("signoz.example.com:8080")


# -- retries --------------------------------------------------------------------------------


def test_server_errors_are_retried_with_backoff_then_succeed(listing):
    listing.behaviour.faults.append(Fault("status", status=500, path="/api/v1/countErrors", times=2))
    sleep = RecordedSleep()
    with source_for(listing, sleep=sleep) as source:
        result = source.poll(fixture_window(), frozenset())
    assert listing.paths().count("/api/v1/countErrors") == 3
    assert len(sleep.waits) == 2 and all(0 < wait <= 10 for wait in sleep.waits)
    assert result.failures == [] and result.requests == len(listing.requests)


def test_a_rate_limit_waits_as_long_as_retry_after_says(listing):
    listing.behaviour.faults.append(Fault("status", status=429, retry_after="7", path="/api/v1/listErrors"))
    sleep = RecordedSleep()
    with source_for(listing, sleep=sleep) as source:
        source.poll(fixture_window(), frozenset())
    assert sleep.waits == [7.0]


def test_a_retry_after_beyond_the_deadline_fails_at_once(listing):
    listing.behaviour.faults.append(
        Fault("status", status=429, retry_after="600", path="/api/v1/countErrors")
    )
    sleep = RecordedSleep()
    failure = poll_failure(listing, sleep=sleep, deadline_seconds=30)
    assert failure.startswith("exceptions: not read this round")
    assert "rate-limited" in failure and "gave up after 1 attempt(s)" in failure
    assert sleep.waits == []


def test_persistent_server_errors_give_up_and_say_how_often_they_tried(emulator):
    emulator.behaviour.faults.append(Fault("status", status=503, path="/api/v1/", times=-1))
    error = poll_error(emulator, max_attempts=3)
    assert "HTTP 503" in str(error) and "gave up after 3 attempt(s)" in str(error)


def test_a_hanging_server_times_out_and_is_reported(listing):
    listing.behaviour.faults.append(Fault("hang", path="/api/v1/countErrors", times=-1, seconds=2))
    failure = poll_failure(listing, timeout_seconds=0.2, max_attempts=2)
    assert "did not answer POST /api/v1/countErrors within 0.2 s" in failure


def test_the_round_deadline_stops_requests_that_would_start_after_it(listing):
    listing.behaviour.faults.append(Fault("hang", path="/api/v1/countErrors", times=-1, seconds=2))
    failure = poll_failure(listing, timeout_seconds=5, deadline_seconds=0.3, max_attempts=5)
    assert "within 0.3 s" in failure or "deadline" in failure


def test_a_body_cut_short_is_retried_and_reported(listing):
    listing.behaviour.faults.append(Fault("truncated", path="/api/v1/listErrors", times=-1))
    failure = poll_failure(listing, max_attempts=2)
    assert "body was cut short" in failure


def test_a_body_that_is_not_json_is_reported_with_its_start(listing):
    listing.behaviour.faults.append(Fault("malformed", path="/api/v1/listErrors", times=-1))
    failure = poll_failure(listing, max_attempts=2)
    assert "not valid JSON" in failure and "/api/v1/listErrors" in failure


def test_retry_after_accepts_seconds_and_http_dates():
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    assert parse_retry_after("soon") is None


# -- bad payloads -------------------------------------------------------------------------------


def mutate(emulator: SignozEmulator, path: str, change, times: int = 1, body_contains: str = "") -> None:
    emulator.behaviour.faults.append(
        Fault("mutate", path=path, mutate=change, times=times, body_contains=body_contains)
    )


def test_a_list_errors_row_missing_a_field_is_a_shape_error(listing):
    def drop_group_id(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        del rows[0]["groupID"]
        return rows

    mutate(listing, "/api/v1/listErrors", drop_group_id)
    assert "unexpected shape: groupID: Field required" in poll_failure(listing)


def test_a_count_of_the_wrong_type_is_reported(listing):
    mutate(listing, "/api/v1/countErrors", lambda count: str(count))
    assert "countErrors with '3' instead of a group count" in poll_failure(listing)


def test_fewer_listed_groups_than_counted_raise_instead_of_a_partial_window(listing):
    mutate(listing, "/api/v1/listErrors", lambda rows: rows[:-1], times=-1)
    failure = poll_failure(listing)
    assert "returned 2 exception groups" in failure and "counted 3" in failure


def test_an_unreadable_last_seen_is_a_logged_skip(listing):
    def break_time(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows[0]["lastSeen"] = "20 May 2026"
        return rows

    mutate(listing, "/api/v1/listErrors", break_time)
    with source_for(listing) as source:
        result = source.poll(fixture_window(), frozenset())
    (skipped,) = result.skipped
    assert "listErrors group" in skipped.where and "20 May 2026" in skipped.reason
    assert len({e.source_group_id for e in result.events if e.kind == "exception"}) == 2


def test_a_sample_row_with_a_wrong_type_is_skipped_and_its_group_kept(emulator):
    def stringify(body: dict[str, Any]) -> dict[str, Any]:
        rows = body["data"]["data"]["results"][0]["rows"]
        rows[0]["data"]["timestamp_ns"] = str(rows[0]["data"]["timestamp_ns"])
        return body

    mutate(emulator, "/api/v5/query_range", stringify, body_contains="LIMIT 1 BY group_id")
    with source_for(emulator) as source:
        result = source.poll(fixture_window(), frozenset())
    (skipped,) = result.skipped
    assert "exception sample" in skipped.where and "timestamp_ns" in skipped.reason
    no_trace = {e.source_group_id for e in result.events if e.kind == "exception" and not e.stacktrace}
    assert len(no_trace) == 1
    assert any("without a representative occurrence" in note for note in result.notes)


def test_group_times_in_milliseconds_are_skipped_with_the_unit_named(emulator):
    def to_milliseconds(body: dict[str, Any]) -> dict[str, Any]:
        for row in body["data"]["data"]["results"][0]["rows"]:
            row["data"]["first_seen_ns"] //= 1_000_000
        return body

    emulator.requests.clear()
    mutate(emulator, "/api/v5/query_range", to_milliseconds, body_contains="has_error")  # error spans
    with source_for(emulator) as source:
        result = source.poll(fixture_window(), frozenset())
    (skipped,) = result.skipped
    assert "error spans row 0" in skipped.where and "milliseconds" in skipped.reason
    assert not [e for e in result.events if e.kind == "span_error"]


def test_raw_log_timestamps_in_milliseconds_are_skipped(dataset):
    def to_milliseconds(body: dict[str, Any]) -> dict[str, Any]:
        for row in body["data"]["data"]["results"][0]["rows"] or []:
            row["data"]["timestamp"] //= 1_000_000
        return body

    behaviour = Behaviour(clickhouse_sql_allowed=False)
    with SignozEmulator(dataset, behaviour) as emulator:
        mutate(emulator, "/api/v5/query_range", lambda body: body, times=2)  # 403, raw spans
        mutate(emulator, "/api/v5/query_range", to_milliseconds)
        with source_for(emulator) as source:
            result = source.poll(fixture_window(), frozenset())
    assert len(result.skipped) == 4
    assert all("log timestamp" in s.reason and "milliseconds" in s.reason for s in result.skipped)
    assert not [e for e in result.events if e.kind == "log"]


def test_a_results_payload_of_the_wrong_shape_fails_its_stream(emulator):
    def wreck(body: dict[str, Any]) -> dict[str, Any]:
        body["data"]["data"]["results"] = [{"rows": "many"}]
        return body

    mutate(emulator, "/api/v5/query_range", wreck)
    failure = poll_failure(emulator)
    assert failure.startswith("exceptions: not read this round") and "unexpected RawResult" in failure


def test_every_stream_failing_raises_rather_than_returning_an_empty_round(emulator):
    emulator.behaviour.faults.append(Fault("status", status=500, path="/api/v5/", times=-1))
    error = poll_error(emulator, max_attempts=2)
    assert "/api/v5/query_range" in str(error)
