"""An app whose garbage collection runs inside the OpenTelemetry SDK's histogram lock.

``python collection_app.py LIB`` instruments over real SDK providers whose duration
histogram's view builds a new exemplar reservoir by first collecting garbage: the
collector then runs where the SDK holds that histogram's lock, as it does in any app
when an allocation there starts a collection. A streamed body is dropped mid-read inside
a reference cycle, so only the collector frees it; a later request's duration point (a
new attribute set: a new aggregation, under the lock) sets the collection off. Prints
one JSON object: whether the collection freed the body, and the inference (CLIENT) spans
ended before and after ``flush``.
The test runs it in a subprocess with a timeout: a hang there is a deadlock.
"""

from __future__ import annotations

import gc
import json
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics._internal.view import _default_reservoir_factory
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.metrics.view import View
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tooltap

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
SSE = (CORPUS / "anthropic" / "stream_text_plus_2_tool_use.body").read_bytes()
CHUNKS = [block + b"\n\n" for block in SSE.split(b"\n\n") if block.strip()]
URL = "https://api.anthropic.com/v1/messages"
REQUEST = {"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True,
           "messages": [{"role": "user", "content": "weather?"}]}  # fmt: skip
DURATION = "gen_ai.client.operation.duration"  # what settling the dropped body records
armed: list[bool] = []
collected: list[int] = []


def _collecting_factory(aggregation: Any) -> Any:
    build = _default_reservoir_factory(aggregation)

    def reservoir(**kwargs: Any) -> Any:
        if armed and not collected:  # once: the first new aggregation after the drop
            collected.append(gc.collect())
        return build(**kwargs)

    return reservoir


def main(lib_name: str) -> None:
    lib = {"httpx": httpx, "httpx2": httpx2}[lib_name]
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    view = View(instrument_name=DURATION, exemplar_reservoir_factory=_collecting_factory)
    meter_provider = MeterProvider(metric_readers=[reader], views=[view])
    tooltap.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)

    class Body(lib.SyncByteStream):  # type: ignore[misc]
        def __iter__(self) -> Iterator[bytes]:
            return iter(CHUNKS)

    def handler(request: Any) -> Any:
        return lib.Response(200, headers={"content-type": "text/event-stream"}, stream=Body())

    client = lib.Client(transport=lib.MockTransport(handler))
    with client.stream("POST", URL, json={**REQUEST, "model": "claude-haiku-4-5"}) as first:
        first.read()  # the duration histogram's storage exists from here
    gc.collect()
    gc.disable()  # from here only the reservoir's collection frees cycles
    response = client.send(client.build_request("POST", URL, json=REQUEST), stream=True)
    chunks = response.iter_raw()
    next(chunks)
    cycle: list[Any] = [response, chunks]
    cycle.append(cycle)
    body = weakref.ref(response)
    del response, chunks, cycle
    armed.append(True)
    other = {**REQUEST, "model": "claude-opus-4-1"}  # another model: new metric attributes
    with client.stream("POST", URL, json=other) as second:
        second.read()
    ended_before_flush = sum(s.kind.name == "CLIENT" for s in spans.get_finished_spans())
    tooltap.flush()
    finished = [s for s in spans.get_finished_spans() if s.kind.name == "CLIENT"]
    print(json.dumps({
        "collected": collected and collected[0] > 0,
        "body_freed": body() is None,
        "ended_before_flush": ended_before_flush,
        "ended_after_flush": len(finished),
        "closed_early": sorted(bool((s.attributes or {}).get("tooltap.stream.closed_early"))
                               for s in finished),
    }))  # fmt: skip
    client.close()


if __name__ == "__main__":
    main(sys.argv[1])
