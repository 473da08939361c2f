"""What the framework tests share: one instrumented run's in-memory providers and checks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tooltap


class Run:
    """One instrumented run's providers, and what it recorded."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.events: list[Any] = []

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def call_ids(self) -> list[str]:
        """The call ids tooltap received (usable or broken)."""
        ids = [e.call.call_id for e in self.events if isinstance(e, tooltap.ToolCallReceived)]
        ids += [e.problem.call_id for e in self.events if isinstance(e, tooltap.ToolCallProblem)]
        return [i for i in ids if i is not None]

    def tool_spans(self, call_id: str) -> list[ReadableSpan]:
        """The ``execute_tool`` spans of ``call_id`` in the trace, whoever made them."""
        return [
            s
            for s in self.spans()
            if (s.attributes or {}).get("gen_ai.operation.name") == "execute_tool"
            and (s.attributes or {}).get("gen_ai.tool.call.id") == call_id
        ]

    def tooltap_metrics(self) -> Counter[tuple[str, tuple[tuple[str, Any], ...]]]:
        """tooltap's metric points (name, attributes) -> sum or number of recordings."""
        found: Counter[tuple[str, tuple[tuple[str, Any], ...]]] = Counter()
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                if scope.scope.name != "tooltap":
                    continue
                for metric in scope.metrics:
                    for point in metric.data.data_points:
                        value = getattr(point, "value", None)
                        key = (metric.name, tuple(sorted((point.attributes or {}).items())))
                        found[key] += point.count if value is None else value
        return found


@contextmanager
def instrumented(**options: Any) -> Iterator[Run]:
    run = Run()
    tooltap.instrument(
        tracer_provider=run.tracer_provider,
        meter_provider=run.meter_provider,
        listeners=[run.events.append],
        **options,
    )
    try:
        yield run
    finally:
        tooltap.flush()
        tooltap.uninstrument()
        run.tracer_provider.shutdown()
        run.meter_provider.shutdown()


def one_span_per_call(run: Run) -> list[ReadableSpan]:
    ids = run.call_ids()
    assert len(ids) == 2
    spans = [run.tool_spans(call_id) for call_id in ids]
    assert [len(s) for s in spans] == [1, 1], [[x.name for x in s] for s in spans]
    return [s[0] for s in spans]


def result_events(run: Run) -> list[dict[str, Any]]:
    return [
        dict(e.attributes or {})
        for s in run.spans()
        for e in s.events
        if e.name == "tooltap.tool_result"
    ]
