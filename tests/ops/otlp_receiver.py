"""A minimal OTLP receiver on 127.0.0.1 (HTTP/protobuf and gRPC) that keeps what it decodes."""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2 as metrics_pb
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc as metrics_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as trace_pb
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc as trace_grpc


@dataclass
class Received:
    """Everything exported to the receiver, decoded."""

    metrics: list[metrics_pb.ExportMetricsServiceRequest] = field(default_factory=list)
    traces: list[trace_pb.ExportTraceServiceRequest] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def metric_names(self) -> set[str]:
        return {
            metric.name
            for request in self.metrics
            for rm in request.resource_metrics
            for sm in rm.scope_metrics
            for metric in sm.metrics
        }

    def metrics_named(self, name: str) -> list[Any]:
        return [
            metric
            for request in self.metrics
            for rm in request.resource_metrics
            for sm in rm.scope_metrics
            for metric in sm.metrics
            if metric.name == name
        ]

    def spans(self) -> list[Any]:
        return [
            span
            for request in self.traces
            for rs in request.resource_spans
            for ss in rs.scope_spans
            for span in ss.spans
        ]

    def resources(self) -> list[dict[str, Any]]:
        found = [rm.resource for r in self.metrics for rm in r.resource_metrics]
        found += [rs.resource for r in self.traces for rs in r.resource_spans]
        return [{a.key: value(a.value) for a in resource.attributes} for resource in found]


def value(any_value: Any) -> Any:
    """The Python value of an OTLP ``AnyValue``."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def attributes(item: Any) -> dict[str, Any]:
    return {a.key: value(a.value) for a in item.attributes}


def _decode(body: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding == "deflate":
        return zlib.decompress(body)
    return body


@contextmanager
def http_receiver() -> Iterator[tuple[str, Received]]:
    """Serve ``/v1/metrics`` and ``/v1/traces``; yields (base URL, Received)."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = _decode(self.rfile.read(length), self.headers.get("Content-Encoding", ""))
            with received.lock:
                received.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path == "/v1/metrics":
                    received.metrics.append(metrics_pb.ExportMetricsServiceRequest.FromString(body))
                    reply = metrics_pb.ExportMetricsServiceResponse().SerializeToString()
                elif self.path == "/v1/traces":
                    received.traces.append(trace_pb.ExportTraceServiceRequest.FromString(body))
                    reply = trace_pb.ExportTraceServiceResponse().SerializeToString()
                else:
                    self.send_error(404)
                    return
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def grpc_receiver() -> Iterator[tuple[str, Received]]:
    """Serve the OTLP gRPC metrics and trace services; yields (endpoint URL, Received)."""
    received = Received()

    def remember(request: Any, context: grpc.ServicerContext, kind: str) -> None:
        with received.lock:
            received.headers.append(dict(context.invocation_metadata()))
            getattr(received, kind).append(request)

    class Metrics(metrics_grpc.MetricsServiceServicer):  # type: ignore[misc]
        def Export(self, request: Any, context: grpc.ServicerContext) -> Any:
            remember(request, context, "metrics")
            return metrics_pb.ExportMetricsServiceResponse()

    class Traces(trace_grpc.TraceServiceServicer):  # type: ignore[misc]
        def Export(self, request: Any, context: grpc.ServicerContext) -> Any:
            remember(request, context, "traces")
            return trace_pb.ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    metrics_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
    trace_grpc.add_TraceServiceServicer_to_server(Traces(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"http://127.0.0.1:{port}", received
    finally:
        server.stop(grace=None).wait(5)
