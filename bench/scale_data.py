"""A synthetic OTLP/JSON file at any scale, for `bench/scale.py`: the errors of 8 services on 4 runtimes
(Python, Java, Node.js, Go), as the OpenTelemetry Collector's file exporter writes them.

    write_otlp(path, records=100_000, bugs=2_000, end=datetime.now(UTC))

Each bug belongs to one service and is reported one way: an exception span event with its stack trace
(`exception.*`), an ERROR log record carrying the exception, or a span whose status is ERROR; a quarter of
the bugs carry an `error.code`. Every bug is seen at least once, the rest of the records go to bugs drawn
with a skew (a few bugs are most of the traffic). Messages vary per occurrence the way real ones do (ids,
amounts, durations, now and then an e-mail address or a credential), Go's goroutine dumps vary by goroutine
and pointer, the other runtimes' traces are the same for every occurrence of a bug. One line holds a batch
of one service's records; a few OK spans and INFO logs are mixed in, which rounds must skip. The same
arguments give the same file, except for the times, which end at `end`.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

RUNTIMES = ("python", "java", "node", "go")
SERVICES = ("checkout", "payments", "inventory", "search", "accounts", "shipping", "gateway", "notify")
#: records in one export request (one line)
BATCH = 40
#: the time the records are spread over, ending at `end`
SPREAD = timedelta(minutes=30)
_WORDS = (
    "order", "cart", "item", "price", "stock", "user", "account", "session", "invoice", "refund", "ship",
    "label", "route", "quote", "tax", "coupon", "address", "payment", "card", "ledger", "batch", "report",
    "export", "import", "queue", "worker", "cache", "index", "search", "token", "limit",
)  # fmt: skip
_VERBS = (
    "load", "save", "parse", "validate", "charge", "reserve", "release", "render", "fetch", "sync",
    "resolve", "apply",
)  # fmt: skip
_TYPES = {
    "python": ("ValueError", "KeyError", "TimeoutError", "RuntimeError", "PermissionError", "LookupError"),
    "java": (
        "java.lang.IllegalStateException",
        "java.lang.NullPointerException",
        "java.util.concurrent.TimeoutException",
        "java.io.IOException",
        "java.lang.IllegalArgumentException",
    ),
    "node": ("TypeError", "RangeError", "Error", "SyntaxError", "FetchError"),
    "go": ("*errors.errorString", "*net.OpError", "*json.SyntaxError", "runtime.Error", "*url.Error"),
}
_MESSAGES = (
    "{verb} {noun} {id} failed: {noun2} not found",
    "timeout after {ms}ms while trying to {verb} {noun} for {noun2} {id}",
    "invalid {noun} '{word}' in {noun2} {id}",
    "cannot {verb} {noun}: {noun2} limit {n} exceeded (requested {m})",
    "{noun} {id} is in state {word}, expected {word2} before {verb}",
)


@dataclass(frozen=True)
class Bug:
    number: int
    service: int
    runtime: str
    kind: str  # "exception", "log" or "span_error"
    error_type: str
    template: str
    frames: tuple[str, ...]
    error_code: str | None


def bug(number: int) -> Bug:
    rng = random.Random(number * 7919 + 17)
    service = number % len(SERVICES)
    runtime = RUNTIMES[service % len(RUNTIMES)]
    kind = rng.choices(("exception", "log", "span_error"), (6, 3, 1))[0]
    noun, noun2 = f"{rng.choice(_WORDS)}{number}", rng.choice(_WORDS)
    template = (
        rng.choice(_MESSAGES)
        .replace("{noun}", noun, 1)
        .replace("{noun2}", noun2, 1)
        .replace("{verb}", rng.choice(_VERBS), 1)
    )
    depth = rng.randint(6, 16)
    frames = tuple(_frame(runtime, SERVICES[service], number, rng, depth - i) for i in range(depth))
    return Bug(
        number=number,
        service=service,
        runtime=runtime,
        kind=kind,
        error_type=rng.choice(_TYPES[runtime]),
        template=template,
        frames=frames,
        error_code=f"{SERVICES[service][:3].upper()}-{number:05d}" if number % 4 == 0 else None,
    )


def _frame(runtime: str, service: str, number: int, rng: random.Random, level: int) -> str:
    module, function = rng.choice(_WORDS), f"{rng.choice(_VERBS)}_{rng.choice(_WORDS)}_{number}_{level}"
    line = rng.randint(10, 900)
    if runtime == "python":
        return (
            f'  File "/srv/{service}/app/{module}.py", line {line}, in {function}\n    return {function}(ctx)'
        )
    if runtime == "java":
        camel = function.title().replace("_", "")
        return f"\tat com.shop.{service}.{module}.{camel[0].upper()}{camel[1:]}.run({camel}.java:{line})"
    if runtime == "node":
        return f"    at {function} (/app/{service}/src/{module}.js:{line}:{rng.randint(3, 60)})"
    call = f"main.{function}(0x{{ptr}}, 0x{rng.randint(1, 99):x})"
    return f"{call}\n\t/go/src/{service}/{module}.go:{line} +0x{rng.randint(16, 900):x}"


def stack_trace(one: Bug, rng: random.Random, message: str) -> str:
    if one.runtime == "python":
        return f"Traceback (most recent call last):\n{chr(10).join(one.frames)}\n{one.error_type}: {message}"
    if one.runtime == "java":
        return f"{one.error_type}: {message}\n" + "\n".join(one.frames)
    if one.runtime == "node":
        return f"{one.error_type}: {message}\n" + "\n".join(one.frames)
    body = "\n".join(frame.replace("{ptr}", f"c{rng.getrandbits(36):09x}") for frame in one.frames)
    return f"panic: {message}\n\ngoroutine {rng.randint(1, 90_000)} [running]:\n{body}"


def message(one: Bug, rng: random.Random) -> str:
    text = one.template.format(
        id=rng.randint(1, 10**7),
        ms=rng.randint(100, 30_000),
        n=rng.randint(10, 1000),
        m=rng.randint(1000, 9999),
        word=rng.choice(_WORDS),
        word2=rng.choice(_WORDS),
    )
    roll = rng.random()
    if roll < 0.03:
        text += f" (user {rng.choice(_WORDS)}.{rng.randint(1, 999)}@example.com)"
    elif roll < 0.04:
        text += " token=ghp_" + "".join(rng.choices("abcdefghijklmnopqrstuvwxyzABCDEF0123456789", k=36))
    return text


def _string(key: str, value: str) -> dict[str, object]:
    return {"key": key, "value": {"stringValue": value}}


def _resource(service: int) -> dict[str, object]:
    return {
        "attributes": [
            _string("service.name", SERVICES[service]),
            _string("service.version", f"1.{service}.0"),
            _string("deployment.environment.name", "production"),
            _string("telemetry.sdk.language", RUNTIMES[service % len(RUNTIMES)]),
        ]
    }


def _ids(rng: random.Random) -> tuple[str, str]:
    return f"{rng.getrandbits(128):032x}", f"{rng.getrandbits(64):016x}"


def _span(one: Bug, rng: random.Random, nanos: int) -> dict[str, object]:
    trace_id, span_id = _ids(rng)
    text = message(one, rng)
    attributes = [_string("http.route", f"/api/{one.number % 50}"), _string("http.request.method", "POST")]
    if one.error_code:
        attributes.append(_string("error.code", one.error_code))
    span: dict[str, object] = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": f"POST /api/{one.number % 50}",
        "startTimeUnixNano": str(nanos - 5_000_000),
        "endTimeUnixNano": str(nanos),
        "attributes": attributes,
        "status": {"code": 2, "message": text if one.kind == "span_error" else ""},
    }
    if one.kind == "exception":
        span["events"] = [
            {
                "timeUnixNano": str(nanos - 1000),
                "name": "exception",
                "attributes": [
                    _string("exception.type", one.error_type),
                    _string("exception.message", text),
                    _string("exception.stacktrace", stack_trace(one, rng, text)),
                ],
            }
        ]
    return span


def _log(one: Bug, rng: random.Random, nanos: int) -> dict[str, object]:
    trace_id, span_id = _ids(rng)
    text = message(one, rng)
    attributes = [
        _string("exception.type", one.error_type),
        _string("exception.message", text),
        _string("exception.stacktrace", stack_trace(one, rng, text)),
    ]
    if one.error_code:
        attributes.append(_string("error.code", one.error_code))
    return {
        "timeUnixNano": str(nanos),
        "observedTimeUnixNano": str(nanos + 1_000_000),
        "severityNumber": 17,
        "severityText": "ERROR",
        "body": {"stringValue": f"request failed: {text}"},
        "attributes": attributes,
        "traceId": trace_id,
        "spanId": span_id,
    }


def _ok_span(rng: random.Random, nanos: int) -> dict[str, object]:
    trace_id, span_id = _ids(rng)
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "name": "GET /health",
        "startTimeUnixNano": str(nanos - 1_000_000),
        "endTimeUnixNano": str(nanos),
        "status": {"code": 1},
    }


def _info_log(rng: random.Random, nanos: int) -> dict[str, object]:
    return {
        "timeUnixNano": str(nanos),
        "severityNumber": 9,
        "severityText": "INFO",
        "body": {"stringValue": f"handled request {rng.randint(1, 10**9)}"},
    }


def lines(records: int, bugs: int, end: datetime, seed: int = 26) -> Iterator[bytes]:
    """The file's lines: `records` error records of `bugs` bugs, `BATCH` records of one service a line."""
    rng = random.Random(seed)
    known = [bug(n) for n in range(bugs)]
    by_service: list[list[Bug]] = [[b for b in known if b.service == s] for s in range(len(SERVICES))]
    unseen = [[b for b in pool] for pool in by_service]
    for pool in unseen:
        rng.shuffle(pool)
    first = int((end - SPREAD).timestamp() * 1e9)
    step = int(SPREAD.total_seconds() * 1e9) // max(records, 1)
    written = 0
    while written < records:
        service = rng.randrange(len(SERVICES))
        pool = by_service[service]
        chosen: list[Bug] = []
        while pool and len(chosen) < min(BATCH, records - written):
            if unseen[service]:
                chosen.append(unseen[service].pop())
            else:  # skewed: a few bugs are most of the traffic
                chosen.append(pool[int(len(pool) * rng.random() ** 3)])
        if not chosen:
            continue
        spans, logs = [], []
        for one in chosen:
            nanos = first + written * step
            written += 1
            (logs if one.kind == "log" else spans).append(
                (_log if one.kind == "log" else _span)(one, rng, nanos)
            )
        nanos = first + written * step
        spans.append(_ok_span(rng, nanos))
        logs.append(_info_log(rng, nanos))
        scope = {"name": f"{SERVICES[service]}.instrumentation", "version": "1.0"}
        yield orjson.dumps(
            {
                "resourceSpans": [
                    {"resource": _resource(service), "scopeSpans": [{"scope": scope, "spans": spans}]}
                ]
            }
        )
        yield orjson.dumps(
            {
                "resourceLogs": [
                    {"resource": _resource(service), "scopeLogs": [{"scope": scope, "logRecords": logs}]}
                ]
            }
        )


def write_otlp(path: Path, records: int, bugs: int, end: datetime | None = None) -> Path:
    """Writes the file; returns `path`."""
    end = end or datetime.now(UTC) - timedelta(minutes=1)
    with path.open("wb") as handle:
        for line in lines(records, bugs, end):
            handle.write(line + b"\n")
    return path


def file_arguments(description: str | None) -> argparse.ArgumentParser:
    """The arguments of a bench over a first round's file: this module's synthetic file (`--records`,
    `--bugs`) or one given (`--file`); a bench adds its own."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--bugs", type=int, default=2_000)
    parser.add_argument("--file", type=Path, help="an OTLP/JSON file to read instead of a synthetic one")
    return parser
