"""rounds' own traces: one span per model call, exported only when asked for.

`span(name, **attributes)` is a context manager. Without `OTEL_EXPORTER_OTLP_ENDPOINT` in the
environment, or without the OpenTelemetry SDK and OTLP/HTTP exporter installed (the `otel` extra),
it does nothing and costs nothing. With both, the first span sets up a tracer provider that
exports over OTLP/HTTP to that endpoint (the exporter reads the standard `OTEL_*` variables
itself). The yielded object takes more attributes once they are known, e.g. a run's cost.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_ENDPOINT"
SERVICE_NAME = "rounds"

AttributeValue = str | bool | int | float


class SpanHandle(Protocol):
    def set(self, **attributes: AttributeValue | None) -> None: ...


class _NoSpan:
    def set(self, **attributes: AttributeValue | None) -> None:
        """Attributes are dropped when nothing is exported."""


class _OtelSpan:
    def __init__(self, span: Any) -> None:
        self._span = span

    def set(self, **attributes: AttributeValue | None) -> None:
        for key, value in attributes.items():
            if value is not None:
                self._span.set_attribute(key, value)


_tracer: Any = None


def _get_tracer(environ: Mapping[str, str]) -> Any:
    """The exporting tracer, set up on first use; None when export is off or impossible."""
    global _tracer
    if not environ.get(ENDPOINT_VARIABLE):
        return None
    if _tracer is not None:
        return _tracer
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        return None
    from rounds_bot import __version__

    resource = Resource.create({"service.name": SERVICE_NAME, "service.version": __version__})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    _tracer = provider.get_tracer("rounds_bot", __version__)
    return _tracer


def use_tracer(tracer: Any) -> None:
    """Export through `tracer` (e.g. one with an in-memory exporter) instead of setting one up."""
    global _tracer
    _tracer = tracer


@contextmanager
def span(
    name: str, *, environ: Mapping[str, str] | None = None, **attributes: AttributeValue | None
) -> Iterator[SpanHandle]:
    """A span named `name` with `attributes` (None values are left out), or a no-op."""
    tracer = _get_tracer(os.environ if environ is None else environ)
    if tracer is None:
        yield _NoSpan()
        return
    with tracer.start_as_current_span(name) as otel_span:
        handle = _OtelSpan(otel_span)
        handle.set(**attributes)
        yield handle
