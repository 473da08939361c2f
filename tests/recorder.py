"""The one OpenTelemetry recorder of the suite: in-memory SDK providers and what tooltap
emitted into them (spans, metrics, log records, listener events), with a span ledger.

``tests/conftest.py`` makes it the ``recorder`` fixture (not instrumented) and its
instrumented twins; every test folder uses those.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tooltap

__all__ = ["INFERENCE_OPERATIONS", "Recorder", "SpanLedger", "attrs"]

INFERENCE_OPERATIONS = ("chat", "generate_content")


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


class SpanLedger(SpanProcessor):
    """Counts every span start and end by span id (an end without a start shows too), and
    keeps each span's attributes as they were when it started (what samplers see)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: Counter[int] = Counter()
        self.ended: Counter[int] = Counter()
        self.names: dict[int, str] = {}
        self.at_start: dict[int, dict[str, Any]] = {}

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        with self.lock:
            self.started[span.context.span_id] += 1
            self.names[span.context.span_id] = span.name
            self.at_start[span.context.span_id] = dict(span.attributes or {})

    def on_end(self, span: ReadableSpan) -> None:
        with self.lock:
            self.ended[span.context.span_id] += 1

    def clear(self) -> None:
        with self.lock:
            self.started.clear()
            self.ended.clear()
            self.names.clear()
            self.at_start.clear()

    def open_spans(self, *, tools: bool = True) -> list[str]:
        """Names of the spans started and not (yet) ended (``tools=False``: inference only)."""
        with self.lock:
            names = [self.names[s] for s in self.started if s not in self.ended]
        return [n for n in names if tools or not n.startswith("execute_tool")]

    def anomalies(self) -> dict[str, list[int]]:
        """Spans started or ended more than once, or ended without a start."""
        with self.lock:
            return {
                "started_twice": [s for s, n in self.started.items() if n > 1],
                "ended_twice": [s for s, n in self.ended.items() if n > 1],
                "ended_unstarted": [s for s in self.ended if s not in self.started],
            }


@dataclass
class Recorder:
    """In-memory providers and everything one test emitted; ``instrument`` turns tooltap on
    into them."""

    exporter: InMemorySpanExporter = field(default_factory=InMemorySpanExporter)
    reader: InMemoryMetricReader = field(default_factory=InMemoryMetricReader)
    logs: InMemoryLogRecordExporter = field(default_factory=InMemoryLogRecordExporter)
    ledger: SpanLedger = field(default_factory=SpanLedger)
    events: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(self.ledger)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.logger_provider = LoggerProvider()
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.logs))

    def instrument(self, *listeners: Any, **options: Any) -> None:
        """``tooltap.instrument`` into these providers; events also go to ``listeners``."""
        tooltap.instrument(
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            logger_provider=self.logger_provider,
            listeners=[self.events.append, *listeners],
            **options,
        )

    def shutdown(self) -> None:
        tooltap.uninstrument()
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()
        self.logger_provider.shutdown()

    def clear(self) -> None:
        """Forget every span, event and count recorded so far (metrics stay)."""
        self.exporter.clear()
        self.events.clear()
        self.ledger.clear()

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def inference(self) -> list[ReadableSpan]:
        """The ended inference spans (``chat``, ``generate_content``), tooltap's or adopted."""
        return [
            s for s in self.spans() if attrs(s).get("gen_ai.operation.name") in INFERENCE_OPERATIONS
        ]

    def tools(self) -> list[ReadableSpan]:
        return [s for s in self.spans() if attrs(s).get("gen_ai.operation.name") == "execute_tool"]

    def at_start(self, span: ReadableSpan) -> dict[str, Any]:
        """``span``'s attributes when it started."""
        return self.ledger.at_start[span.context.span_id]

    def points(self, name: str) -> list[tuple[dict[str, Any], float]]:
        """``(attributes, value)`` per data point of ``name`` (counter value or histogram count)."""
        out: list[tuple[dict[str, Any], float]] = []
        data = self.reader.get_metrics_data()
        for rm in data.resource_metrics if data else ():
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    if metric.name == name:
                        for dp in metric.data.data_points:
                            value = getattr(dp, "value", None)
                            out.append(
                                (dict(dp.attributes or {}), dp.count if value is None else value)
                            )
        return out

    def total(self, name: str, **match: Any) -> float:
        """Sum of ``name`` over the points whose attributes include ``match`` (dots as ``__``)."""
        want = {k.replace("__", "."): v for k, v in match.items()}
        return sum(v for a, v in self.points(name) if all(a.get(k) == x for k, x in want.items()))

    def of(self, kind: type) -> list[Any]:
        """The listener events of type ``kind``."""
        return [e for e in self.events if isinstance(e, kind)]

    def received(self) -> list[tooltap.ToolCall]:
        """The call of every ``ToolCallReceived`` so far."""
        return [e.call for e in self.of(tooltap.ToolCallReceived)]

    def calls(self) -> list[tuple[str | None, str, dict[str, Any]]]:
        """``(call_id, name, args)`` of every ``ToolCallReceived`` so far."""
        return [(c.call_id, c.name, c.args) for c in self.received()]
