"""Write the demo telemetry with the real OpenTelemetry Python SDK.

The generator is a maintainer tool: it lives in `tools/` of a source checkout and is not installed
with rounds. Regenerate the data (needs the `demo` extra: `pip install -e '.[demo]'`) from the root
of the checkout with

    python -m tools.demo.generate

which rewrites `rounds_bot/data/demo.otlp.jsonl` (the file `rounds run --demo` reads) and
`tests/fixtures/demo_truth.json` (event id -> demo bug id, for tests of grouping purity).
`--output` and `--truth` write elsewhere. The output is byte-for-byte the same on every run:
the random choices come from one fixed seed, span and trace ids from a seeded id generator,
and every timestamp is planned from 2026-11-01T10:00:00Z rather than read from the clock.

How it works: the scenarios (`tools.demo.scenarios`) plan each bug's occurrences
(`DEMO_BUGS` says how many) and the ordinary traffic around them; the plans are replayed in
time order through the SDK's TracerProvider and LoggerProvider into in-memory exporters;
every thirty simulated minutes the finished spans and log records are encoded by the SDK's own
OTLP encoders (opentelemetry-exporter-otlp-proto-common) and written as one
ExportTraceServiceRequest line and one ExportLogsServiceRequest line in OTLP/JSON, as the
Collector's file exporter writes them: lowerCamelCase names, enums as integers, 64-bit
integers as strings, trace and span ids in hex. Finally the file is read back through
`OtlpFileSource` and checked: each bug yields exactly its expected number of error events and
the ordinary traffic yields none.
"""

from __future__ import annotations

import base64
import json
import os
import random
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import Status

from rounds_bot.demo import DEMO_BUGS, DEMO_DATA_FILE
from rounds_bot.errors import RoundsError
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from tools.demo.plan import NS_PER_S, Instance, LogPlan, Occurrence, SpanPlan
from tools.demo.scenarios import SCENARIOS, TRAFFIC

SEED = 20261101
#: one export request per signal per this many simulated seconds (a collector flushes far more
#: often; fewer, larger requests keep the file small without changing what it says)
BATCH_SECONDS = 1800
_ID_FIELDS = frozenset({"traceId", "spanId", "parentSpanId"})

#: (service, microsecond) for a log record, (trace id, span id) for a span: how a read-back
#: error event is traced to the occurrence that produced it.
TruthKey = tuple[str, Any]


class DemoGenerationError(RoundsError):
    """The generated file does not hold what the demo manifest promises."""


class SeededIdGenerator(IdGenerator):
    """Trace and span ids from a seeded generator, so every run produces the same ids."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def generate_span_id(self) -> int:
        return self._random.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        return self._random.getrandbits(128) or 1


# --- planning ---------------------------------------------------------------------------------


def plan_occurrences(rng: random.Random) -> list[Occurrence]:
    """Every bug occurrence the manifest asks for and the ordinary traffic, in time order."""
    missing = {bug.id for bug in DEMO_BUGS} ^ set(SCENARIOS)
    if missing:
        raise DemoGenerationError(f"demo bugs and scenarios do not match: {sorted(missing)}")
    occurrences: list[Occurrence] = []
    for bug in DEMO_BUGS:
        scenario = SCENARIOS[bug.id]
        for _ in range(bug.expected_count):
            occurrence = scenario.build(rng, scenario.when(rng))
            occurrence.bug_id = bug.id
            occurrences.append(occurrence)
    for traffic in TRAFFIC:
        occurrences.extend(traffic.build(rng, traffic.when(rng)) for _ in range(traffic.count))
    occurrences.sort(key=lambda occurrence: occurrence.time_ns)
    return occurrences


# --- recording through the SDK ----------------------------------------------------------------


class Recorder:
    """The SDK pipeline: one TracerProvider and LoggerProvider per service instance (the
    resource is per provider), all exporting to one in-memory exporter per signal."""

    def __init__(self, seed: int) -> None:
        self.span_exporter = InMemorySpanExporter()
        self.log_exporter = InMemoryLogRecordExporter()
        self._id_generator = SeededIdGenerator(seed)
        self._providers: dict[tuple[str, str, str, str], tuple[TracerProvider, LoggerProvider]] = {}
        #: where each bug occurrence's error landed
        self.truth: dict[TruthKey, str] = {}

    def record(self, occurrence: Occurrence) -> None:
        tracer_provider, logger_provider = self._providers_for(occurrence.instance)
        if occurrence.root is not None:
            self._record_span(occurrence, occurrence.root, Context(), tracer_provider, logger_provider)
        for log in occurrence.logs:
            self._record_log(occurrence, log, Context(), logger_provider)

    def export_lines(self) -> list[str]:
        """The finished spans and log records so far as OTLP/JSON lines; the exporters are emptied."""
        lines = []
        spans = self.span_exporter.get_finished_spans()
        if spans:
            lines.append(otlp_json_line(encode_spans(spans)))
        logs = self.log_exporter.get_finished_logs()
        if logs:
            lines.append(otlp_json_line(encode_logs(logs)))
        self.span_exporter.clear()
        self.log_exporter.clear()
        return lines

    def shutdown(self) -> None:
        for tracer_provider, logger_provider in self._providers.values():
            tracer_provider.shutdown()
            logger_provider.shutdown()

    def _providers_for(self, instance: Instance) -> tuple[TracerProvider, LoggerProvider]:
        key = (instance.service, instance.version, instance.environment, instance.host)
        if key not in self._providers:
            # Resource() rather than Resource.create(): no detectors, so nothing of this machine
            # (process id, host name, environment variables) leaks into the file.
            resource = Resource(instance.resource)
            tracer_provider = TracerProvider(
                sampler=ALWAYS_ON, resource=resource, shutdown_on_exit=False, id_generator=self._id_generator
            )
            tracer_provider.add_span_processor(SimpleSpanProcessor(self.span_exporter))
            logger_provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
            logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.log_exporter))
            self._providers[key] = (tracer_provider, logger_provider)
        return self._providers[key]

    def _record_span(
        self,
        occurrence: Occurrence,
        plan: SpanPlan,
        parent: Context,
        tracer_provider: TracerProvider,
        logger_provider: LoggerProvider,
    ) -> None:
        tracer = tracer_provider.get_tracer(plan.scope.name, plan.scope.version or None)
        span = tracer.start_span(
            plan.name, context=parent, kind=plan.kind, attributes=plan.attributes, start_time=plan.start_ns
        )
        inside = trace.set_span_in_context(span, parent)
        for child in plan.children:
            self._record_span(occurrence, child, inside, tracer_provider, logger_provider)
        for event in plan.events:
            span.add_event(event.name, event.attributes, timestamp=event.time_ns)
        for log in plan.logs:
            self._record_log(occurrence, log, inside, logger_provider)
        if plan.status is not None:
            span.set_status(Status(*plan.status))
        if plan.carries_error and occurrence.bug_id is not None:
            ids = span.get_span_context()
            self._remember(("span", (f"{ids.trace_id:032x}", f"{ids.span_id:016x}")), occurrence.bug_id)
        span.end(end_time=plan.end_ns)

    def _record_log(
        self, occurrence: Occurrence, plan: LogPlan, context: Context, provider: LoggerProvider
    ) -> None:
        logger = provider.get_logger(plan.scope.name, plan.scope.version or None)
        logger.emit(
            timestamp=plan.time_ns,
            observed_timestamp=plan.time_ns + plan.observed_delay_ns,
            context=context,
            severity_number=plan.severity,
            severity_text=plan.severity_text or plan.severity.name,
            body=plan.body,
            attributes=plan.attributes or None,
        )
        if occurrence.bug_id is not None:
            self._remember(("log", (occurrence.instance.service, plan.time_ns // 1_000)), occurrence.bug_id)

    def _remember(self, key: TruthKey, bug_id: str) -> None:
        if key in self.truth:
            raise DemoGenerationError(f"two demo errors share the key {key}: make their times differ")
        self.truth[key] = bug_id


def otlp_json_line(request: Message) -> str:
    """A protobuf export request in OTLP/JSON: the protobuf JSON mapping with enums as integers
    and, unlike protobuf's own printer, trace and span ids in hex instead of base64."""
    document = json_format.MessageToDict(request, use_integers_for_enums=True)
    return json.dumps(_hex_ids(document), separators=(",", ":"), ensure_ascii=False)


def _hex_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: base64.b64decode(item).hex() if key in _ID_FIELDS else _hex_ids(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    return value


@contextmanager
def _without_otel_environment() -> Iterator[None]:
    """OTEL_* variables (limits, sampler, SDK switch) would change what the SDK records."""
    saved = {name: value for name, value in os.environ.items() if name.startswith("OTEL_")}
    for name in saved:
        del os.environ[name]
    try:
        yield
    finally:
        os.environ.update(saved)


# --- the whole run ----------------------------------------------------------------------------


def render_demo(seed: int = SEED) -> tuple[list[str], dict[TruthKey, str]]:
    """The demo file's lines, and where each bug occurrence's error is."""
    rng = random.Random(seed)
    occurrences = plan_occurrences(rng)
    recorder = Recorder(seed + 1)
    lines: list[str] = []
    with _without_otel_environment():
        try:
            batch_end = None
            for occurrence in occurrences:
                if batch_end is not None and occurrence.time_ns >= batch_end:
                    lines.extend(recorder.export_lines())
                    batch_end = None
                if batch_end is None:
                    batch_end = _next_batch_end(occurrence.time_ns)
                recorder.record(occurrence)
            lines.extend(recorder.export_lines())
        finally:
            recorder.shutdown()
    return lines, recorder.truth


def _next_batch_end(time_ns: int) -> int:
    batch_ns = BATCH_SECONDS * NS_PER_S
    return (time_ns // batch_ns + 1) * batch_ns


def event_truth(data_file: Path, truth: dict[TruthKey, str]) -> dict[str, str]:
    """Read the file back as rounds will and map each error event id to its bug; check that the
    manifest's counts come out and that no ordinary traffic reads as an error."""
    window = Window(start=datetime(1970, 1, 1, tzinfo=UTC), end=datetime(9999, 1, 1, tzinfo=UTC))
    result = OtlpFileSource(data_file).poll(window, frozenset())
    if result.skipped:
        raise DemoGenerationError(f"the demo file has unreadable records: {result.skipped[:3]}")
    by_event: dict[str, str] = {}
    for event in result.events:
        if event.kind == "log":
            key: TruthKey = ("log", (event.service, _microseconds(event.timestamp)))
        else:
            key = ("span", (event.trace_id, event.span_id))
        if key not in truth:
            raise DemoGenerationError(
                f"ordinary traffic reads as an error: {event.kind} {event.message[:80]!r}"
            )
        by_event[event.event_id] = truth[key]
    counts = Counter(by_event.values())
    expected = {bug.id: bug.expected_count for bug in DEMO_BUGS}
    if counts != expected:
        wrong = {
            bug: (counts.get(bug, 0), want) for bug, want in expected.items() if counts.get(bug, 0) != want
        }
        raise DemoGenerationError(f"error events per bug (found, expected) differ from DEMO_BUGS: {wrong}")
    return by_event


def _microseconds(moment: datetime) -> int:
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def truth_document(by_event: dict[str, str]) -> str:
    document = {
        "about": "Which demo bug (rounds_bot.demo.DEMO_BUGS) each error event of the demo file "
        "belongs to. Written by `python -m tools.demo.generate`; for tests only.",
        "bugs": {bug.id: bug.expected_count for bug in DEMO_BUGS},
        "events": dict(sorted(by_event.items())),
    }
    return json.dumps(document, indent=1) + "\n"


def write_demo(output: Path, truth_output: Path | None = None, seed: int = SEED) -> dict[str, str]:
    """Write the demo file (and the truth file when asked); returns event id -> bug id."""
    lines, truth = render_demo(seed)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    by_event = event_truth(output, truth)
    if truth_output is not None:
        truth_output.parent.mkdir(parents=True, exist_ok=True)
        truth_output.write_text(truth_document(by_event), encoding="utf-8")
    return by_event


#: the source checkout this generator is part of (tools/demo/generate.py)
CHECKOUT = Path(__file__).resolve().parents[2]


def _default_output() -> Path:
    """The package's bundled demo file in this checkout: rounds_bot/data/demo.otlp.jsonl."""
    return CHECKOUT / "rounds_bot" / "data" / DEMO_DATA_FILE


def _default_truth() -> Path | None:
    """tests/fixtures/demo_truth.json of the checkout; None when its tests are not there."""
    tests = CHECKOUT / "tests"
    return tests / "fixtures" / "demo_truth.json" if tests.is_dir() else None


@click.command()
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Where to write the demo file (default: rounds_bot/data/demo.otlp.jsonl in this checkout).",
)
@click.option(
    "--truth",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Where to write event id -> bug id (default: tests/fixtures/demo_truth.json in a checkout).",
)
def main(output: Path | None, truth: Path | None) -> None:
    """Regenerate the demo telemetry (deterministic: the same bytes on every run)."""
    output = output or _default_output()
    truth = truth or _default_truth()
    by_event = write_demo(output, truth)
    size_kib = output.stat().st_size / 1024
    click.echo(f"wrote {output} ({size_kib:.0f} KiB, {len(by_event)} error events, {len(DEMO_BUGS)} bugs)")
    if truth is not None:
        click.echo(f"wrote {truth}")


if __name__ == "__main__":
    main()
