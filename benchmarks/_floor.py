"""What the OpenTelemetry SDK alone spends on the telemetry tooltap hands it, per request.

``python -m benchmarks._floor "google generate_content_stream"`` runs the case with tooltap
over the SDK's providers and takes a census of one request's telemetry in the steady
state (the mean over several requests after a warm-up): the spans they started (name
and the attributes they ended with; a call's span may end in the next request) and the
histogram points they recorded (attributes; tooltap's counters are tallied
and observed only at collection, no per-request work of the SDK's). Then, under valgrind,
a process that imports no tooltap starts and ends those spans (every attribute given at
the start, the SDK's cheapest way) and records those points, over the same providers the
benchmark uses (``BatchSpanProcessor`` to a dropping exporter, an ``InMemoryMetricReader``),
and the bare case's requests are counted as ``benchmarks._instructions --loop`` counts them
(recorded responses, one event per read, hash seed 0). The SDK's count over the bare
count is a floor of the ratio for any code that emits this telemetry through the SDK:
its own work comes on top.
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _instructions

__all__ = ["Census", "census", "main"]

#: Requests a census averages over, after one warm-up request.
CENSUS_REQUESTS = 4


@dataclass(frozen=True)
class Census:
    """One request's telemetry: spans as (name, attributes), histogram points as attributes."""

    spans: list[tuple[str, dict[str, Any]]]
    points: list[dict[str, Any]]
    requests: int

    @property
    def attributes(self) -> int:
        """Attributes over all the spans."""
        return sum(len(attributes) for _, attributes in self.spans)


def _histogram_counts(reader: Any) -> dict[tuple[str, str], tuple[int, dict[str, Any]]]:
    """Each histogram series' count of points so far, by (metric, attributes)."""
    counts: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    if hasattr(point, "bucket_counts"):
                        attributes = dict(point.attributes or {})
                        key = (metric.name, json.dumps(attributes, sort_keys=True, default=str))
                        counts[key] = (point.count, attributes)
    return counts


def census(name: str, url: str, requests: int = CENSUS_REQUESTS) -> Census:
    """The telemetry tooltap emits for the case ``name`` over the simulator at ``url``,
    summed over ``requests`` requests after one (``Census.requests``)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import tooltap

    from ._cases import close_client

    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[reader])
    case = _instructions._case(name)
    client = case.make(url)
    tooltap.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            case.run(client)
            before, start = _histogram_counts(reader), time.time_ns()
            for _ in range(requests):
                case.run(client)
            after, end = _histogram_counts(reader), time.time_ns()
            case.run(client)  # a call's span may end in the next request
    finally:
        tooltap.uninstrument()
        close_client(case, client)
    spans = [
        (s.name, dict(s.attributes or {}))
        for s in exporter.get_finished_spans()
        if s.start_time is not None and start <= s.start_time < end
    ]
    points = []
    for key, (count, attributes) in after.items():
        points += [attributes] * (count - before.get(key, (0, {}))[0])
    tracer_provider.shutdown()
    meter_provider.shutdown()
    return Census(spans, points, requests)


def _child(path: str, count: int) -> None:
    """Emit the census's telemetry ``count`` times through the SDK (``--loop``'s toggle)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from ._otel import _Discard

    found = json.loads(Path(path).read_text())
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(_Discard()))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    tracer = tracer_provider.get_tracer("floor")
    histogram = meter_provider.get_meter("floor").create_histogram("floor")

    def one(_: Any, __: Any) -> None:
        for name, attributes in found["spans"]:
            tracer.start_span(name, attributes=attributes).end()
        for attributes in found["points"]:
            histogram.record(1.0, attributes)

    one(None, None)  # warm-up: the series and the SDK's caches
    functools.reduce(one, range(count), None)  # counted, as ``--loop`` counts requests
    tracer_provider.shutdown()
    meter_provider.shutdown()


def _count_sdk(path: Path, count: int) -> int:
    """Instructions of emitting the census's telemetry ``count`` times."""
    tool = ["--tool=callgrind", f"--toggle-collect={_instructions._LOOP}"]
    tool += ["--callgrind-out-file=/dev/null"]
    argv = ["benchmarks._floor", "--child", str(path), str(count)]
    return _instructions.collected(_instructions.under_valgrind(tool, argv, {}).stderr)


def main(argv: list[str] | None = None) -> None:
    """Print the floor of one case: the bare count, and the SDK's on tooltap's telemetry."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks._floor")
    parser.add_argument("case", nargs="?", help="the start of a case name")
    parser.add_argument("--requests", type=int, default=4, help="requests counted")
    parser.add_argument("--child", nargs=2, help="internal")
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return
    if shutil.which("valgrind") is None or not args.case:
        parser.error("needs valgrind installed, and a case")
    from .__main__ import WORKLOAD
    from ._replay import record
    from ._sim import SimProcess

    name = _instructions._case(args.case).name
    with SimProcess(**WORKLOAD) as sim, tempfile.TemporaryDirectory() as tmp:
        found = census(name, sim.url)
        emitted = Path(tmp) / "census.json"
        emitted.write_text(json.dumps(found.__dict__, default=str))
        recorded = Path(tmp) / "responses.pickle"
        record(_instructions._case(name), sim.url, recorded)
        with ThreadPoolExecutor(2) as pool:
            sdk = pool.submit(_count_sdk, emitted, args.requests)
            bare = _instructions._instructions(
                name, "bare", args.requests, sim.url, recorded, 0, True, loop=True
            )
        telemetry = sdk.result() / (args.requests * found.requests)
    bare /= args.requests
    each = found.requests
    print(f"{name}: instructions per request ({args.requests} requests, replayed, hash seed 0)")
    print(f"bare: {bare / 1e6:.2f} M")
    print(
        f"tooltap's telemetry, a request's: {len(found.spans) / each:g} spans "
        f"({found.attributes / each:g} attributes), {len(found.points) / each:g} histogram points"
    )
    print(
        f"the OpenTelemetry SDK on it alone: {telemetry / 1e6:.3f} M, "
        f"{telemetry / bare:.1%} of bare (a ratio of at least {1 + telemetry / bare:.3f})"
    )


if __name__ == "__main__":
    main()
