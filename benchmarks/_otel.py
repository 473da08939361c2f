"""Turning tooltap on and off in one process, over real OpenTelemetry SDK providers.

Spans go through a ``BatchSpanProcessor`` to an exporter that drops them (its thread's
CPU is part of the process CPU we measure), metrics to an ``InMemoryMetricReader``.
``noop()`` instruments over OpenTelemetry's no-op providers instead: tooltap's own work,
without what the SDK spends on the spans and metric points it is given.
``peer(p)`` instruments a peer instrumentation over the same providers instead
(``benchmarks._peers``). ``bare()`` uninstruments whichever is on and checks that no
wrapper is left on any class.
"""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import NoOpTracerProvider

import tooltap

from ._peers import Peer, Peers

__all__ = ["Toggle"]


class _Discard(SpanExporter):
    """Counts and drops spans."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS


class Toggle:
    """``instrumented()`` / ``noop()`` / ``peer(p)`` / ``bare()``; ``close()``
    uninstruments and shuts the providers."""

    def __init__(self) -> None:
        self.exporter = _Discard()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(BatchSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.peers = Peers(self.tracer_provider, self.meter_provider)
        self.on: str | None = None  # "sdk", "noop" or a peer's name when instrumented

    def instrumented(self) -> None:
        """Instrument over the SDK providers (nothing to do when already so)."""
        if self.on != "sdk":
            self.bare()
            tooltap.instrument(
                tracer_provider=self.tracer_provider, meter_provider=self.meter_provider
            )
            self.on = "sdk"

    def noop(self) -> None:
        """Instrument over OpenTelemetry's no-op providers."""
        if self.on != "noop":
            self.bare()
            tooltap.instrument(
                tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider()
            )
            self.on = "noop"

    def peer(self, peer: Peer) -> None:
        """Instrument ``peer`` over the SDK providers, tooltap off."""
        if self.on != peer.name:
            self.bare()
            self.peers.on(peer)
            self.on = peer.name

    def bare(self) -> None:
        """Uninstrument, and fail loudly if any tooltap (or peer) wrapper survived."""
        if self.on in ("sdk", "noop"):
            tooltap.uninstrument()
        elif self.on:
            self.peers.off()
        self.on = None
        left = wrapped_methods()
        if left:
            raise RuntimeError(f"tooltap wrappers left after uninstrument: {left}")

    def close(self) -> None:
        """Back to bare, then flush and shut down the providers."""
        self.bare()
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


def wrapped_methods() -> list[str]:
    """Every patched method of the SDKs and httpx/httpx2 that is still a wrapt wrapper."""
    import importlib

    import wrapt

    targets = {
        "httpx": ("Client.send", "AsyncClient.send"),
        "httpx2": ("Client.send", "AsyncClient.send"),
        "openai._base_client": ("SyncAPIClient.request", "AsyncAPIClient.request"),
        "anthropic._base_client": ("SyncAPIClient._request", "AsyncAPIClient._request"),
        "google.genai._api_client": ("BaseApiClient._request", "BaseApiClient._async_request"),
    }
    left = []
    for module_name, paths in targets.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for path in paths:
            owner_name, attr = path.split(".")
            owner = getattr(module, owner_name, None)
            value = vars(owner).get(attr) if owner is not None else None
            if isinstance(value, wrapt.FunctionWrapper):
                left.append(f"{module_name}.{path}")
    return left
