"""Counters are tallied by tooltap and observed at collection: same series as SDK counters."""

from __future__ import annotations

import threading
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, Sum

from tooltap._telemetry import semconv as sc
from tooltap._telemetry.instruments import Instruments


def _sums(reader: InMemoryMetricReader, name: str) -> dict[frozenset[tuple[str, Any]], int]:
    data = reader.get_metrics_data()
    out: dict[frozenset[tuple[str, Any]], int] = {}
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    assert isinstance(metric.data, Sum) and metric.data.is_monotonic
                    for point in metric.data.data_points:
                        out[frozenset(point.attributes.items())] = int(point.value)
    return out


def test_tallies_export_monotonic_sums_per_attribute_set() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("t")
    tally = Instruments(meter).tool_calls
    tally.add(2, {"a": "x", "b": "y"})
    tally.add(1, {"b": "y", "a": "x"})  # same set, other order: one series
    tally.add(1, {"a": "z"})
    assert _sums(reader, sc.TOOL_CALLS) == {
        frozenset({("a", "x"), ("b", "y")}): 3,
        frozenset({("a", "z")}): 1,
    }


def test_a_second_instruments_over_the_same_meter_continues_the_totals() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("t")
    Instruments(meter).tool_results.add(2, {"r": "ok"})
    assert _sums(reader, sc.TOOL_RESULTS) == {frozenset({("r", "ok")}): 2}
    Instruments(meter).tool_results.add(1, {"r": "ok"})  # re-instrumented: cumulative goes on
    assert _sums(reader, sc.TOOL_RESULTS) == {frozenset({("r", "ok")}): 3}


def test_concurrent_adds_lose_no_count() -> None:
    reader = InMemoryMetricReader()
    tally = Instruments(MeterProvider(metric_readers=[reader]).get_meter("t")).retries
    barrier = threading.Barrier(8)

    def work() -> None:
        barrier.wait()
        for _ in range(5000):
            tally.add(1, {"k": "v"})

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _sums(reader, sc.RETRIES) == {frozenset({("k", "v")}): 40_000}
