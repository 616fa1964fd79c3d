"""rounds' own spans: a no-op without the endpoint variable, attributes when exporting."""

from __future__ import annotations

import json
from pathlib import Path

from diagnosis_samples import good_answer, make_checkout, sample_request
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from rounds_bot import telemetry
from rounds_bot.diagnosis.claude_cli import ClaudeCli
from rounds_bot.diagnosis.claude_code import ClaudeCodeDiagnoser


def test_span_is_a_no_op_without_the_endpoint_variable():
    with telemetry.span("x", environ={}, a=1) as handle:
        handle.set(b=2)  # accepted and dropped


def test_each_model_call_exports_one_span_with_model_turns_tokens_and_cost(tmp_path: Path, monkeypatch):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.use_tracer(provider.get_tracer("test"))
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    result = {
        "type": "result", "subtype": "success", "is_error": False, "num_turns": 4,
        "total_cost_usd": 0.042, "structured_output": good_answer(),
        "usage": {"input_tokens": 900, "output_tokens": 80, "cache_read_input_tokens": 5000},
    }  # fmt: skip
    fake = tmp_path / "claude"
    fake.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(result)}\nEOF\n")
    fake.chmod(0o755)
    try:
        diagnoser = ClaudeCodeDiagnoser(
            ClaudeCli(binary=fake, model="sonnet", credentials={}, timeout_seconds=20)
        )
        diagnoser.diagnose(sample_request(make_checkout(tmp_path / "repo")))
    finally:
        telemetry.use_tracer(None)
    [span] = exporter.get_finished_spans()
    attributes = dict(span.attributes)
    assert span.name == "rounds.diagnose"
    assert attributes["gen_ai.request.model"] == "sonnet"
    assert attributes["rounds.turns"] == 4
    assert attributes["gen_ai.usage.input_tokens"] == 900
    assert attributes["rounds.cache_read_tokens"] == 5000
    assert attributes["rounds.cost_usd"] == 0.042
    assert attributes["rounds.status"] == "ok"
