"""The emulator writes a span's `response_status_code` as the collector does (signoz-otel-collector
exporter/clickhousetracesexporter/clickhouse_exporter_v3.go populateCustomAttrsAndAttrs): every status
attribute in the span's order, the last one written winning, each read as pcommon reads it."""

from __future__ import annotations

from typing import Any

import pytest
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import T0_NS
from signoz_rows import error_span, otlp_lines


def _stored_code(attributes: list[dict[str, Any]]) -> str:
    span = {**error_span(0, T0_NS), "attributes": attributes}
    dataset = Dataset()
    load_otlp_lines(otlp_lines([span], []), dataset, where="codes")
    (row,) = dataset.spans
    return str(row["response_status_code"])


@pytest.mark.parametrize(
    ("attributes", "stored"),
    [
        # a gRPC-gateway span: the HTTP status, then the gRPC one; the collector keeps the last
        (
            [
                {"key": "http.response.status_code", "value": {"intValue": "503"}},
                {"key": "rpc.grpc.status_code", "value": {"intValue": "14"}},
            ],
            "14",
        ),
        # a double is neither a string Atoi reads nor an int: pcommon's Int() of it is 0
        ([{"key": "http.status_code", "value": {"doubleValue": 503.0}}], "0"),
        # a string that is a number is read as it
        ([{"key": "http.status_code", "value": {"stringValue": "502"}}], "502"),
        # JSON-RPC's code is taken with Str(): a string as it is, an int as ""
        ([{"key": "rpc.jsonrpc.error_code", "value": {"stringValue": "-32601"}}], "-32601"),
        ([{"key": "rpc.jsonrpc.error_code", "value": {"intValue": "-32601"}}], ""),
        ([], ""),
    ],
)
def test_response_status_code_is_stored_as_the_collector_writes_it(attributes, stored):
    assert _stored_code(attributes) == stored
