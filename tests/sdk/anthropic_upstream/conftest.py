"""anthropic's test setup for its OpenTelemetry module, plus tooltap when TOOLTAP_UPSTREAM asks.

``TOOLTAP_UPSTREAM``: unset or ``off`` runs the module bare; ``on`` instruments tooltap
(its own in-memory providers, default no-content); ``content`` also captures content
(``SPAN_AND_EVENT``). anthropic's spans go to each test's own provider as before.
``TOOLTAP_UPSTREAM_REPORT`` names a file that gets, at the end, how many inference
operations tooltap recorded (its duration histogram's count), to show it took part.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from pytest_asyncio import is_async_test

_MODE = os.environ.get("TOOLTAP_UPSTREAM", "off")


def pytest_collection_modifyitems(items: list[pytest.Function]) -> None:
    # As anthropic's conftest: every async test on the session's loop.
    for item in items:
        if is_async_test(item):
            item.add_marker(pytest.mark.asyncio(loop_scope="session"), append=False)


@pytest.fixture(scope="session", autouse=True)
def without_ambient_environment() -> Iterator[None]:
    """As anthropic's conftest: no ``ANTHROPIC_*`` or ``AWS_*`` variable of this machine."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        for name in list(os.environ):
            if name.startswith(("ANTHROPIC_", "AWS_")):
                monkeypatch.delenv(name)
        yield


@pytest.fixture(scope="session", autouse=True)
def tooltap_instrumented(without_ambient_environment: None) -> Iterator[None]:
    """tooltap instrumented for the whole run, into providers of its own, when asked."""
    if _MODE == "off":
        yield
        return
    import tooltap  # imported only when asked: a bare run loads none of it

    tracer_provider = TracerProvider()
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    capture = "SPAN_AND_EVENT" if _MODE == "content" else "NO_CONTENT"
    tooltap.instrument(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture,
    )
    try:
        yield
    finally:
        tooltap.uninstrument()
        report = os.environ.get("TOOLTAP_UPSTREAM_REPORT")
        if report:
            with open(report, "w", encoding="utf-8") as out:
                json.dump({"operations": _operations(reader)}, out)
        tracer_provider.shutdown()
        meter_provider.shutdown()


def _operations(reader: InMemoryMetricReader) -> int:
    data = reader.get_metrics_data()
    return sum(
        point.count
        for resource in (data.resource_metrics if data else ())
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "gen_ai.client.operation.duration"
        for point in metric.data.data_points
    )
