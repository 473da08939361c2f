"""Fixtures for the SDK-layer tests: in-memory OpenTelemetry, tooltap instrumented, the
simulator."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

import tooltap
from tooltap.simulator import Simulator

INFERENCE_OPERATIONS = ("chat", "generate_content")

#: anthropic's own test module runs in subprocesses of its own (test_anthropic_upstream.py).
collect_ignore = ["anthropic_upstream"]


class StartedAttributes(SpanProcessor):
    """Keeps each span's attributes as they were when it started (what samplers see)."""

    def __init__(self) -> None:
        self.by_span: dict[int, dict[str, Any]] = {}

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.by_span[span.context.span_id] = dict(span.attributes or {})


@dataclass
class Recorder:
    """What one instrumented test emitted: spans, metrics and listener events."""

    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    started: StartedAttributes
    events: list[Any] = field(default_factory=list)

    def at_start(self, span: ReadableSpan) -> dict[str, Any]:
        """``span``'s attributes when it started."""
        return self.started.by_span[span.context.span_id]

    def instrument(self) -> None:
        """``tooltap.instrument`` into this recorder's providers and listener."""
        tooltap.instrument(
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            listeners=[self.events.append],
        )

    def spans(self) -> tuple[ReadableSpan, ...]:
        return tuple(self.exporter.get_finished_spans())

    def inference_spans(self) -> list[ReadableSpan]:
        return [
            s
            for s in self.spans()
            if s.kind is SpanKind.CLIENT
            and (s.attributes or {}).get("gen_ai.operation.name") in INFERENCE_OPERATIONS
        ]

    def tool_spans(self) -> list[ReadableSpan]:
        return [
            s
            for s in self.spans()
            if (s.attributes or {}).get("gen_ai.operation.name") == "execute_tool"
        ]

    def received(self) -> list[tuple[str | None, str, dict[str, Any]]]:
        """``(call_id, name, args)`` of every ``ToolCallReceived`` so far."""
        return [
            (e.call.call_id, e.call.name, e.call.args)
            for e in self.events
            if isinstance(e, tooltap.ToolCallReceived)
        ]

    def points(self, name: str) -> list[tuple[dict[str, Any], float]]:
        """``(attributes, value)`` of each data point of metric ``name`` (sum or count)."""
        data = self.reader.get_metrics_data()
        found: list[tuple[dict[str, Any], float]] = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name != name:
                        continue
                    for point in metric.data.data_points:
                        value = getattr(point, "value", None)
                        if value is None:
                            value = point.count  # histogram: number of recordings
                        found.append((dict(point.attributes or {}), float(value)))
        return found

    def total(self, name: str, **attributes: Any) -> float:
        """Sum of metric ``name`` over the points whose attributes include ``attributes``."""
        wanted = {k.replace("__", "."): v for k, v in attributes.items()}
        return sum(
            value
            for attrs, value in self.points(name)
            if all(attrs.get(k) == v for k, v in wanted.items())
        )


@pytest.fixture
def otel() -> Iterator[Recorder]:
    """tooltap instrumented into in-memory providers; uninstrumented afterwards."""
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    started = StartedAttributes()
    tracer_provider.add_span_processor(started)
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    recorder = Recorder(exporter, reader, tracer_provider, meter_provider, started)
    recorder.instrument()
    try:
        yield recorder
    finally:
        tooltap.uninstrument()
        tracer_provider.shutdown()
        meter_provider.shutdown()


@pytest.fixture
def double_end(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Fails the test if any span is ended twice (the OpenTelemetry SDK logs a warning)."""
    caplog.set_level(logging.WARNING, logger="opentelemetry.sdk.trace")
    yield
    assert "ended span" not in caplog.text


@pytest.fixture(scope="session")
def _simulator() -> Iterator[Simulator]:
    with Simulator() as sim:
        yield sim


@pytest.fixture
def sim(_simulator: Simulator) -> Simulator:
    """The shared simulator, with faults, recorded requests and conversation state cleared."""
    _simulator.reset()
    return _simulator
