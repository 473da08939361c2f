"""One WARNING when tooltap records into providers that will export nothing.

tooltap records through the providers it was given, else the global ones. Those are
no-op proxies until someone sets an SDK provider: ``opentelemetry-instrument`` does only
with ``opentelemetry-distro`` and the SDK installed, and ``pip install .`` brings
neither. Everything tooltap records would then vanish without a word, so the first
operation checks where its telemetry goes (not ``instrument()``: an app may set up its
SDK after that call) and warns once per process, naming the fixes.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Final

from opentelemetry import metrics, trace

from .._forks import new_lock

__all__ = ["FIXES", "check", "reset", "silent_signals"]

_log = logging.getLogger("tooltap")

FIXES: Final = (
    'install the SDK and the OTLP exporters (pip install ".[otlp]", which brings '
    "opentelemetry-distro for opentelemetry-instrument), or let tooltap export by itself "
    "(TOOLTAP_EXPORT=1 or instrument(export=True), with OTEL_EXPORTER_OTLP_ENDPOINT), or "
    "set up the OpenTelemetry SDK in the app (tracer_provider=/meter_provider=, or the "
    "global providers)"
)
_NO_OP_TYPES: Final = frozenset(
    {
        "NoOpTracerProvider",
        "ProxyTracerProvider",
        "NoOpMeterProvider",
        "_ProxyMeterProvider",
        "ProxyMeterProvider",
    }
)
_LAUNCHER: Final = "opentelemetry.instrumentation.auto_instrumentation"

_lock = new_lock()
_warned = False


def _exports_nothing(provider: Any) -> bool:
    """A no-op or proxy provider, or an SDK one with no span processor / metric reader."""
    if type(provider).__name__ in _NO_OP_TYPES:
        return True
    processors = getattr(getattr(provider, "_active_span_processor", None), "_span_processors", 1)
    readers = getattr(provider, "_metric_readers", (1,))
    return not processors or not readers


def silent_signals(tracer_provider: Any, meter_provider: Any) -> list[str]:
    """The signals (``traces``, ``metrics``) whose provider (None: the global) exports nothing."""
    tracer_provider = tracer_provider or trace.get_tracer_provider()
    meter_provider = meter_provider or metrics.get_meter_provider()
    pairs = (("traces", tracer_provider), ("metrics", meter_provider))
    return [signal for signal, provider in pairs if _exports_nothing(provider)]


def check(tracer_provider: Any, meter_provider: Any) -> str | None:
    """Warn once per process when neither traces nor metrics go anywhere; the message, if so."""
    global _warned
    if _warned:
        return None
    silent = silent_signals(tracer_provider, meter_provider)
    if len(silent) < 2:
        return None
    with _lock:
        if _warned:
            return None
        _warned = True
    where = (
        "opentelemetry-instrument configured no OpenTelemetry SDK (is opentelemetry-distro "
        "installed?)"
        if _LAUNCHER in sys.modules
        else "no OpenTelemetry SDK provider is set (the global ones are no-ops)"
    )
    message = f"tooltap: traces and metrics go nowhere: {where}. To see them, {FIXES}"
    _log.warning("%s", message)
    return message


def reset() -> None:
    """Warn again at the next check (for tests)."""
    global _warned
    _warned = False
