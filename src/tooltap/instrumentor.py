"""Wiring: ``TooltapInstrumentor`` (the ``opentelemetry_instrumentor`` entry point) and the
``instrument`` / ``uninstrument`` / ``flush`` functions.

``instrument`` builds one ``Telemetry`` (providers from ``_telemetry.export`` when that
module is present, else the given or global ones), then installs the transport tap
and the SDK-layer patches lazily (post-import hooks: nothing is imported here).
Setup never raises: ``opentelemetry-instrument`` re-raises any non-ImportError from an
instrumentor, so a failure is logged and tooltap stays off.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
from collections.abc import Collection, Iterable
from types import ModuleType
from typing import Any, Final

from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)

from ._patch import httpx_tap, tap_stream
from ._patch.quietly import quietly, report
from ._telemetry.config import Config
from ._telemetry.listeners import Listener
from ._telemetry.telemetry import Telemetry, get_telemetry, set_telemetry

__all__ = ["TooltapInstrumentor", "flush", "instrument", "uninstrument"]

_log = logging.getLogger("tooltap")

ENTRY_POINT_NAME: Final = "tooltap"
DISABLED_ENV: Final = "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"
#: SDK-layer patch modules (each with ``install(tel)`` / ``uninstall()``), imported if present.
_SDK_PATCHES: Final = ("sdk_openai", "sdk_anthropic", "sdk_google", "aiohttp_tap")
_atexit_registered = False


def _disabled_by_env() -> bool:
    names = {n.strip() for n in os.environ.get(DISABLED_ENV, "").split(",")}
    return ENTRY_POINT_NAME in names or "*" in names


def _sdk_patches() -> list[ModuleType]:
    modules = []
    for name in _SDK_PATCHES:
        try:
            modules.append(importlib.import_module(f"{__package__}._patch.{name}"))
        except ImportError:
            _log.debug("tooltap: patch module %s not available", name)
        except Exception as exc:  # noqa: BLE001 - one broken patch must not disable the rest
            report(exc, "instrumentor")
    return modules


def _providers(
    tracer_provider: Any, meter_provider: Any, options: dict[str, Any]
) -> tuple[Any, Any]:
    try:
        export = importlib.import_module(f"{__package__}._telemetry.export")
    except ImportError:
        return tracer_provider, meter_provider
    providers: tuple[Any, Any] = export.ensure_providers(tracer_provider, meter_provider, **options)
    return providers


def _at_exit() -> None:
    tel = get_telemetry()
    if tel is not None:
        quietly(tel.lifecycle.end_all)


def _install(
    tracer_provider: Any = None,
    meter_provider: Any = None,
    listeners: Iterable[Listener] = (),
    **options: Any,
) -> None:
    global _atexit_registered
    logger_provider = options.pop("logger_provider", None)
    tracer_provider, meter_provider = _providers(tracer_provider, meter_provider, options)
    tel = Telemetry(
        config=Config.from_options(options),
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        logger_provider=logger_provider,
        listeners=listeners,
    )
    set_telemetry(tel)
    httpx_tap.install()
    for module in _sdk_patches():
        install = getattr(module, "install", None)
        if callable(install):
            quietly(install, tel)
    if not _atexit_registered:
        atexit.register(_at_exit)
        _atexit_registered = True


def _uninstall() -> None:
    tel = get_telemetry()
    quietly(tap_stream.settle_all)  # bodies in flight record nothing more
    if tel is not None:
        quietly(tel.lifecycle.end_all)
    httpx_tap.uninstall()
    for module in _sdk_patches():
        uninstall = getattr(module, "uninstall", None)
        if callable(uninstall):
            quietly(uninstall)
    set_telemetry(None)


class TooltapInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """OpenTelemetry instrumentor for LLM tool calls over httpx/httpx2 and the provider SDKs.

    ``instrument(tracer_provider=None, meter_provider=None, listeners=(), **options)``;
    options: ``capture_content``, ``orphan_timeout``, ``tool_name_cap``, ``limits``,
    ``logger_provider``, plus whatever the exporter setup accepts (``prometheus_port``).
    """

    def instrumentation_dependencies(self) -> Collection[str]:
        """None required: every library tooltap patches is optional."""
        return ()

    def _instrument(self, **kwargs: Any) -> None:
        if _disabled_by_env():
            _log.info("tooltap: disabled by %s", DISABLED_ENV)
            return
        try:
            _install(**kwargs)
        except Exception:  # noqa: BLE001 - instrumenting must never break the app
            _log.warning("tooltap: instrumentation failed; tooltap stays off", exc_info=True)
            quietly(_uninstall)

    def _uninstrument(self, **kwargs: Any) -> None:
        quietly(_uninstall)


def instrument(
    tracer_provider: Any = None,
    meter_provider: Any = None,
    listeners: Iterable[Listener] = (),
    **options: Any,
) -> None:
    """Instrument httpx/httpx2 and the provider SDKs (idempotent: a second call warns)."""
    TooltapInstrumentor().instrument(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        listeners=tuple(listeners),
        **options,
    )


def uninstrument() -> None:
    """Remove tooltap's wrappers and end its open tool spans as orphaned (idempotent)."""
    TooltapInstrumentor().uninstrument()


def flush(timeout_millis: int = 5000) -> None:
    """End every open tool span as ``orphaned`` and force-flush the providers."""
    tel = get_telemetry()
    if tel is not None:
        quietly(tel.flush, timeout_millis)
