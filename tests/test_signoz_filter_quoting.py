"""Strings in a v5 filter expression, quoted as SigNoz's filter grammar reads them.

SigNoz's grammar takes `'...'` with backslash escapes (grammar/FilterQuery.g4 QUOTED_TEXT), and the where
clause visitor unescapes only `\\\\` and `\\'` before binding the value (pkg/querybuilder/
where_clause_visitor.go trimQuotes): any other backslash is the value's own. So a filter string is not a
ClickHouse literal: a service whose name is an unexpanded `${OTEL_SERVICE_NAME}` must be asked for as it is.
Before v0.91.0 trimQuotes only drops the quotes, so rounds writes a name verbatim, in whichever quotes it
lacks, whenever both readings agree.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_emulator.engine import sql_literal
from signoz_emulator.filters import FieldMapper, where_clause

from rounds_bot.diagnosis.lookups.scope import IncidentScope, ScopedEvent, SignozBackend
from rounds_bot.diagnosis.lookups.signoz import SignozLookups
from rounds_bot.sources.signoz.builder_queries import filter_string
from rounds_bot.sources.signoz.times import datetime_to_ns

T0 = datetime(2026, 5, 20, 10, 0, tzinfo=UTC)
KEY = "filter-quoting-key"
# an unexpanded environment variable as the service's name, and a name with a quote and a backslash
ODD_SERVICES = ("${OTEL_SERVICE_NAME}", "o'brien\\shop [eu]")


def _mapper(*, unescapes_quoted: bool = True) -> FieldMapper:
    return FieldMapper(
        signal="logs",
        intrinsic=frozenset({"severity_text"}),
        key_exists=lambda key: True,
        unescapes_quoted=unescapes_quoted,
    )


def test_the_emulator_unescapes_only_a_backslash_and_a_quote_as_signoz_does():
    condition = where_clause(r"severity_text = 'it\'s \\ \x24\x7B \n'", _mapper())
    value = "it's " + "\\ \\x24\\x7B \\n"  # `\\` and `\'` read as one character, the rest as written
    assert condition == "severity_text = " + sql_literal(value)


def test_the_emulator_before_v0_91_only_drops_the_quotes_as_signoz_did():
    condition = where_clause(r"severity_text = 'it\'s \\ \n'", _mapper(unescapes_quoted=False))
    assert condition == "severity_text = " + sql_literal(r"it\'s \\ \n")
    condition = where_clause(r'severity_text = "o\'brien\shop"', _mapper(unescapes_quoted=False))
    assert condition == "severity_text = " + sql_literal(r"o\'brien\shop")


# names that read back on every SigNoz with the v5 API: no `\\` or `\'`, no trailing backslash, and not both
# kinds of quote
FINDABLE_EVERYWHERE = ["plain", *ODD_SERVICES, 'say "hi"', "line\nbreak", "tab\\tname"]
# names only SigNoz v0.91.0+ reads back, as it alone unescapes
FINDABLE_FROM_V0_91 = ["a\\'b", "a\\\\b", "ends in \\", 'it\'s "quoted"']


@pytest.mark.parametrize("text", FINDABLE_EVERYWHERE + FINDABLE_FROM_V0_91)
def test_a_filter_string_reads_back_as_the_text_it_quotes(text):
    condition = where_clause(f"severity_text = {filter_string(text)}", _mapper())
    assert condition == f"severity_text = {sql_literal(text)}"


@pytest.mark.parametrize("text", FINDABLE_EVERYWHERE)
def test_a_filter_string_reads_back_before_v0_91_when_it_can(text):
    condition = where_clause(f"severity_text = {filter_string(text)}", _mapper(unescapes_quoted=False))
    assert condition == f"severity_text = {sql_literal(text)}"


def _log(at_s: int, body: str) -> dict[str, Any]:
    at = str(datetime_to_ns(T0 + timedelta(seconds=at_s)))
    return {"timeUnixNano": at, "observedTimeUnixNano": at, "severityText": "INFO", "severityNumber": 9,
            "body": {"stringValue": body}, "attributes": []}  # fmt: skip


def _dataset() -> Dataset:
    blocks = [
        {
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
            "scopeLogs": [
                {
                    "scope": {"name": "app"},
                    "logRecords": [_log(60 + i, f"{service} tick {i}") for i in range(3)],
                }
            ],
        }
        for service in ODD_SERVICES
    ]
    dataset = Dataset()
    load_otlp_lines([json.dumps({"resourceLogs": blocks})], dataset, where="odd service names")
    return dataset


# v0.87.0 is the first with the v5 API, v0.90.1 the last whose trimQuotes does not unescape
@pytest.fixture(scope="module", params=["v0.87.0", "v0.90.1", "v0.91.0", "v0.138.0"])
def odd_signoz(request: pytest.FixtureRequest) -> Iterator[SignozEmulator]:
    with SignozEmulator(_dataset(), Behaviour(api_key=KEY, version=request.param)) as emulator:
        yield emulator


@pytest.mark.parametrize("service", ODD_SERVICES)
def test_logs_of_a_service_whose_name_holds_quotes_braces_or_dollars_are_found(odd_signoz, service):
    odd_signoz.load()
    moment = T0 + timedelta(seconds=61)
    scope = IncidentScope(
        signature_id="sig",
        service=service,
        window_start=T0,
        window_end=T0 + timedelta(hours=1),
        events=[ScopedEvent(event_id="e1", timestamp=moment, service=service, trace_id=None)],
        backend=SignozBackend(url=odd_signoz.url),
    )
    with SignozLookups.connect(scope, api_key=KEY) as lookups:
        rows = lookups.logs(service, moment - timedelta(minutes=1), moment + timedelta(minutes=1), 10)
    assert [row.body for row in rows] == [f"{service} tick {i}" for i in range(3)]
    assert {row.service for row in rows} == {service}
