"""tooltap's own export, only when asked: private SDK providers built from ``OTEL_*``.

By default tooltap builds nothing: it records through the providers it is given, else
through the global ones (``opentelemetry-instrument`` and the app's own set-up set
those; the global proxies forward to providers set after ``instrument()``). With
``instrument(export=True)`` or ``TOOLTAP_EXPORT=1`` it builds PRIVATE providers, used
by tooltap alone and never set globally: OTLP traces/metrics when an endpoint is set
(``OTEL_EXPORTER_OTLP_[TRACES_|METRICS_]ENDPOINT``, ``..._PROTOCOL`` ``http/protobuf``
or ``grpc``; the exporters and ``Resource.create()`` read headers, timeouts, service
name and resource attributes themselves), plus an opt-in Prometheus ``/metrics``
endpoint. Export runs in background threads (batch span processor, periodic metric
reader), so a down or slow backend never blocks the app; exit flushes with a bound.
The SDK and exporters are optional extras (``otlp``, ``prometheus``).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from .._forks import new_lock
from . import exporter_hints

__all__ = [
    "EXPORT_ENV",
    "PROMETHEUS_HOST_ENV",
    "PROMETHEUS_PORT_ENV",
    "SHUTDOWN_TIMEOUT",
    "bounded",
    "check_endpoints",
    "exit_deadline",
    "export_requested",
    "private_providers",
    "prometheus_address",
    "shutdown",
]

_log = logging.getLogger("tooltap")

EXPORT_ENV: Final = "TOOLTAP_EXPORT"
PROMETHEUS_PORT_ENV: Final = "TOOLTAP_PROMETHEUS_PORT"
PROMETHEUS_HOST_ENV: Final = "TOOLTAP_PROMETHEUS_HOST"
SHUTDOWN_TIMEOUT: Final = 5.0
"""Seconds that everything tooltap does at exit may take in total, whatever the backends
and span processors do (ending open spans, then flushing what tooltap built)."""

_GRPC: Final = "grpc"
_HTTP: Final = "http/protobuf"
_EXPORTER_MODULES: Final = {
    (_HTTP, "traces"): "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    (_HTTP, "metrics"): "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    (_GRPC, "traces"): "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
    (_GRPC, "metrics"): "opentelemetry.exporter.otlp.proto.grpc.metric_exporter",
}
_EXPORTER_CLASSES: Final = {"traces": "OTLPSpanExporter", "metrics": "OTLPMetricExporter"}
#: The OTLP port each protocol listens on by convention (a mismatch is warned about).
_CONVENTIONAL_PORTS: Final = {4317: _GRPC, 4318: _HTTP}
_EXTRA_HINT: Final = (
    'pip install "tooltap[otlp,prometheus]" (from a checkout: pip install ".[otlp,prometheus]")'
)


@dataclass(slots=True)
class _Owned:
    """What tooltap built itself, and therefore flushes and stops."""

    providers: list[Any] = field(default_factory=list)
    servers: list[Any] = field(default_factory=list)
    prometheus: tuple[str, int] | None = None
    atexit_registered: bool = False
    warned: set[str] = field(default_factory=set)


_lock = new_lock()
_owned = _Owned()


def export_requested(option: object, environ: Mapping[str, str] | None = None) -> bool:
    """``instrument(export=...)`` when given, else ``TOOLTAP_EXPORT`` (``1``/``true``/``yes``)."""
    if option is not None:
        return bool(option)
    env = os.environ if environ is None else environ
    return env.get(EXPORT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def private_providers(
    *,
    prometheus_port: int | None = None,
    prometheus_host: str | None = None,
    environ: Mapping[str, str] | None = None,
    readers: Sequence[Any] = (),
) -> tuple[Any | None, Any | None]:
    """SDK providers for tooltap alone, from ``OTEL_*``; never set globally, never raises.

    ``(tracer_provider, meter_provider)``, None for a signal with nothing to export to.
    ``prometheus_port`` (else env ``TOOLTAP_PROMETHEUS_PORT``; 0 picks a free port) opens
    ``/metrics`` on ``prometheus_host`` (else env ``TOOLTAP_PROMETHEUS_HOST``, else
    127.0.0.1; ``0.0.0.0`` to be scraped from another host or container). ``readers``:
    metric readers of the caller's (the demo's in-memory one) beside the exporters.
    """
    env = os.environ if environ is None else environ
    try:
        with _lock:
            if _sdk_disabled(env):
                _log.info("tooltap: OTEL_SDK_DISABLED is set; no exporters configured")
                return None, None
            port = _prometheus_port(prometheus_port, env)
            host = prometheus_host or env.get(PROMETHEUS_HOST_ENV) or "127.0.0.1"
            return _build_tracer_provider(env), _build_meter_provider(env, port, host, readers)
    except Exception:  # noqa: BLE001 - never break the host app
        _log.warning("tooltap: could not set up exporters", exc_info=True)
        return None, None


def check_endpoints(environ: Mapping[str, str] | None = None) -> list[str]:
    """Warn (once per message) when an OTLP endpoint's port and protocol disagree.

    An exporter sends what its protocol says, whatever the port: gRPC to the HTTP port
    4318, or HTTP to the gRPC port 4317, fails with nothing but an exporter log line.
    Returns the warnings (for tests).
    """
    env = os.environ if environ is None else environ
    exporter_hints.install()  # and what the exporters' own errors mean, once they log them
    found: list[str] = []
    for signal in ("traces", "metrics"):
        upper = signal.upper()
        endpoint = env.get(f"OTEL_EXPORTER_OTLP_{upper}_ENDPOINT") or env.get(
            "OTEL_EXPORTER_OTLP_ENDPOINT"
        )
        if not endpoint:
            continue
        protocol = _protocol(env, signal)
        try:
            port = urlsplit(endpoint if "//" in endpoint else f"//{endpoint}").port
        except ValueError:
            continue
        expected = _CONVENTIONAL_PORTS.get(port or -1)
        if expected is None or expected == protocol:
            continue
        message = (
            f"tooltap: OTLP {signal} endpoint {endpoint} is the {expected} port but the "
            f"protocol is {protocol}; set OTEL_EXPORTER_OTLP_PROTOCOL={expected} (or use "
            f"port {4317 if protocol == _GRPC else 4318})"
        )
        found.append(message)
        if message not in _owned.warned:
            _owned.warned.add(message)
            _log.warning("%s", message)
    return found


def prometheus_address() -> tuple[str, int] | None:
    """``(host, port)`` of the ``/metrics`` endpoint tooltap started, if any."""
    return _owned.prometheus


def shutdown(timeout: float = SHUTDOWN_TIMEOUT) -> None:
    """Flush and stop what tooltap built, waiting ``timeout`` seconds at most in total."""
    with _lock:
        providers, servers = list(_owned.providers), list(_owned.servers)
        _owned.providers.clear()
        _owned.servers.clear()
        _owned.prometheus = None
    deadline = time.monotonic() + max(0.0, timeout)
    for server in servers:
        bounded(_stop_server(server), deadline)
    for provider in providers:
        bounded(provider.shutdown, deadline)


_exit_deadline: float | None = None


def exit_deadline() -> float:
    """The one deadline of every exit hook of tooltap: ``SHUTDOWN_TIMEOUT`` from the first."""
    global _exit_deadline
    if _exit_deadline is None:
        _exit_deadline = time.monotonic() + SHUTDOWN_TIMEOUT
    return _exit_deadline


def _shutdown_at_exit() -> None:
    shutdown(max(0.0, exit_deadline() - time.monotonic()))


def bounded(action: Callable[[], object], deadline: float, *, wait: bool = True) -> None:
    """Run ``action`` in a daemon thread; give up waiting at ``deadline`` (``wait=False``:
    do not wait at all)."""

    def run() -> None:
        try:
            action()
        except Exception:  # noqa: BLE001 - exporters must not break exit
            _log.debug("tooltap: error while flushing telemetry", exc_info=True)

    worker = threading.Thread(target=run, name="tooltap-flush", daemon=True)
    worker.start()
    if not wait:
        return
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive():
        _log.warning("tooltap: telemetry flush timed out; some data may be lost")


def _stop_server(server: Any) -> Callable[[], None]:
    def stop() -> None:
        server.shutdown()
        server.server_close()

    return stop


def _sdk_disabled(env: Mapping[str, str]) -> bool:
    return env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


def _prometheus_port(option: int | None, env: Mapping[str, str]) -> int | None:
    raw: object = option if option is not None else env.get(PROMETHEUS_PORT_ENV)
    if raw is None or raw == "":
        return None
    try:
        port = int(str(raw))
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        _log.warning("tooltap: invalid Prometheus port %r; no endpoint started", raw)
        return None
    return port


def _otlp_wanted(env: Mapping[str, str], signal: str) -> bool:
    """An OTLP endpoint is configured for ``signal`` and ``OTEL_<SIGNAL>_EXPORTER`` allows it."""
    upper = signal.upper()
    if not (
        env.get(f"OTEL_EXPORTER_OTLP_{upper}_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    ):
        return False
    chosen = [s.strip().lower() for s in env.get(f"OTEL_{upper}_EXPORTER", "otlp").split(",")]
    if "otlp" not in chosen:
        _log.info("tooltap: OTEL_%s_EXPORTER=%s; no OTLP %s", upper, ",".join(chosen), signal)
        return False
    return True


def _protocol(env: Mapping[str, str], signal: str) -> str:
    raw = env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL") or env.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", _HTTP
    )
    protocol = raw.strip().lower()
    if protocol in (_HTTP, _GRPC):
        return protocol
    _log.warning("tooltap: OTLP protocol %r is not supported; using http/protobuf", raw)
    return _HTTP


def _otlp_exporter(env: Mapping[str, str], signal: str) -> Any | None:
    """The OTLP exporter for ``signal``; it reads endpoint, headers and timeout from env."""
    protocol = _protocol(env, signal)
    module_name = _EXPORTER_MODULES[(protocol, signal)]
    try:
        module = __import__(module_name, fromlist=[_EXPORTER_CLASSES[signal]])
    except ImportError:
        _log.warning("tooltap: OTLP %s export needs: %s; not exporting", signal, _EXTRA_HINT)
        return None
    return getattr(module, _EXPORTER_CLASSES[signal])()


def _resource() -> Any:
    from opentelemetry.sdk.resources import Resource

    return Resource.create()


def _register_exit() -> None:
    if not _owned.atexit_registered:
        atexit.register(_shutdown_at_exit)
        _owned.atexit_registered = True


def _build_tracer_provider(env: Mapping[str, str]) -> Any | None:
    if not _otlp_wanted(env, "traces"):
        return None
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        _log.warning("tooltap: OTLP export needs the OpenTelemetry SDK: %s", _EXTRA_HINT)
        return None
    exporter = _otlp_exporter(env, "traces")
    if exporter is None:
        return None
    provider = TracerProvider(resource=_resource(), shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    _owned.providers.append(provider)
    _register_exit()
    return provider


def _build_meter_provider(
    env: Mapping[str, str], port: int | None, host: str, extra: Sequence[Any]
) -> Any | None:
    want_otlp = _otlp_wanted(env, "metrics")
    if not want_otlp and port is None and not extra:
        return None
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
    except ImportError:
        _log.warning("tooltap: metric export needs the OpenTelemetry SDK: %s", _EXTRA_HINT)
        return None
    readers: list[MetricReader] = list(extra)
    exporter = _otlp_exporter(env, "metrics") if want_otlp else None
    if exporter is not None:
        readers.append(PeriodicExportingMetricReader(exporter))
    if port is not None:
        reader = _prometheus_reader(port, host)
        if reader is not None:
            readers.append(reader)
    if not readers:
        return None
    provider = MeterProvider(metric_readers=readers, resource=_resource(), shutdown_on_exit=False)
    _owned.providers.append(provider)
    _register_exit()
    return provider


def _prometheus_reader(port: int, host: str) -> Any | None:
    """A reader on its own registry, served at ``http://host:port/metrics``; None on failure."""
    try:
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from prometheus_client import CollectorRegistry, start_http_server
    except ImportError:
        _log.warning("tooltap: the Prometheus endpoint needs: %s", _EXTRA_HINT)
        return None
    registry = CollectorRegistry(auto_describe=True)
    try:
        server, _thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        _log.warning("tooltap: Prometheus endpoint on %s:%d not started: %s", host, port, exc)
        return None
    _owned.servers.append(server)
    _owned.prometheus = (host, int(server.server_address[1]))
    _log.info("tooltap: Prometheus metrics at http://%s:%d/metrics", *_owned.prometheus)

    class PullReader(PrometheusMetricReader):
        """Collects on scrape only: a pull reader has nothing to push on ``force_flush``.

        The stock reader collects on ``force_flush`` too and queues that collection for
        the next scrape, which then repeats every metric family (a second TYPE line,
        which Prometheus rejects).
        """

        def force_flush(self, timeout_millis: float = 10_000) -> bool:
            return True

    return PullReader(registry=registry)
