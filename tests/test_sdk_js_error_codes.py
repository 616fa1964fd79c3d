"""opentelemetry-js writes an error's `code` as its `exception.type` when it has one
(packages/opentelemetry-sdk-trace-base/src/Span.ts, `recordException`: `exception.code.toString()`, else
`exception.name`), while its `exception.stacktrace`, `err.stack`, begins with `err.name` (`Error: ...`). A
grpc-js `ServiceError` carries the numeric gRPC status as its code (14 UNAVAILABLE, 5 NOT_FOUND), raised by
the same library frame (`callErrorFromStatus`): two statuses of one call are two problems."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from rounds_bot.tracker.dryrun import DryRunTracker

END = 1_795_707_000 * 10**9
FRAMES = (
    "\n    at callErrorFromStatus (/app/node_modules/@grpc/grpc-js/build/src/call.js:31:19)"
    "\n    at Object.onReceiveStatus (/app/node_modules/@grpc/grpc-js/build/src/client.js:193:76)"
)


def _failed_call(n: int, code: str, message: str) -> dict[str, Any]:
    """A client span whose `recordException(err)` wrote the grpc-js error as the JS SDK writes it."""
    attributes = {
        "exception.type": code,
        "exception.message": message,
        "exception.stacktrace": f"Error: {message}{FRAMES}",
    }
    pairs = [{"key": key, "value": {"stringValue": value}} for key, value in attributes.items()]
    return {
        "traceId": f"{n:032x}",
        "spanId": f"{n:016x}",
        "name": "grpc.users.Users/Get",
        "kind": 3,
        "startTimeUnixNano": str(END - 10**6),
        "endTimeUnixNano": str(END),
        "status": {"code": 2, "message": message},
        "events": [{"name": "exception", "timeUnixNano": str(END), "attributes": pairs}],
    }


@pytest.mark.xfail(
    strict=True,
    reason="grouping keys the two by what they share, the stack's `Error` and its frames, not by the SDK's "
    "`exception.type` (the gRPC code) that tells them apart: one problem (rounds_bot/grouping)",
)
def test_two_grpc_statuses_of_one_call_are_two_problems(tmp_path: Path) -> None:
    unavailable = "14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 10.0.0.{}:5"
    spans = [
        _failed_call(1, "14", unavailable.format(1)),
        _failed_call(2, "14", unavailable.format(2)),
        _failed_call(3, "5", "5 NOT_FOUND: user not found"),
    ]
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "web"}}]}
    scope_spans = [{"scope": {"name": "grpc"}, "spans": spans}]
    line = {"resourceSpans": [{"resource": resource, "scopeSpans": scope_spans}]}
    path = tmp_path / "telemetry.jsonl"
    path.write_text(json.dumps(line) + "\n")
    store = Store.memory()
    now = datetime.fromtimestamp(END / 10**9, UTC) + timedelta(minutes=1)
    run_round(load_settings(), OtlpFileSource(path), DryRunTracker(tmp_path / "d"), store, now=now)
    assert sorted(s.total_count for s in store.signatures()) == [1, 2]
