"""The real OTLP exporters' failures get one tooltap hint each, naming the fix."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.loopback_capture import QuietHandler, serving
from tooltap._telemetry import export, exporter_hints


class _TracesOnly(QuietHandler):
    """An HTTP/1.1 OTLP receiver that takes traces only (as Phoenix does)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200 if self.path == "/v1/traces" else 405)
        self.send_header("content-length", "0")
        self.end_headers()


@pytest.fixture
def hints(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    exporter_hints._filter.said.clear()
    caplog.set_level(logging.WARNING)
    export.check_endpoints({})  # installs the hints, as instrument() and the demo do
    yield caplog
    exporter_hints._filter.said.clear()


def _said(caplog: pytest.LogCaptureFixture, hint: str) -> int:
    return sum(1 for r in caplog.records if r.name == "tooltap" and r.getMessage() == hint)


def test_grpc_to_an_http_server_names_the_http_protocol(
    hints: pytest.LogCaptureFixture,
) -> None:
    with serving(QuietHandler) as url:  # HTTP/1.1, whatever it is asked
        provider = TracerProvider()
        exporter = GrpcSpans(endpoint=url, insecure=True, timeout=2)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        for _ in range(2):
            provider.get_tracer("t").start_span("s").end()
        provider.shutdown()
    raw = [r for r in hints.records if "Failed parsing HTTP/2" in r.getMessage()]
    assert raw, "the exporter's own error is still logged"
    assert _said(hints, exporter_hints.GRPC_TO_HTTP) == 1
    assert "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf" in exporter_hints.GRPC_TO_HTTP


def test_metrics_refused_by_a_traces_only_backend_name_the_metrics_switch(
    hints: pytest.LogCaptureFixture,
) -> None:
    with serving(_TracesOnly) as url:
        exporter = OTLPMetricExporter(endpoint=f"{url}/v1/metrics", timeout=2)
        reader = PeriodicExportingMetricReader(exporter, export_interval_millis=60_000)
        provider = MeterProvider(metric_readers=[reader])
        counter = provider.get_meter("m").create_counter("c")
        for _ in range(2):
            counter.add(1)
            provider.force_flush()
        provider.shutdown()
    assert [r for r in hints.records if "code: 405" in r.getMessage()]
    assert _said(hints, exporter_hints.METRICS_REFUSED) == 1
    assert "OTEL_METRICS_EXPORTER=none" in exporter_hints.METRICS_REFUSED
