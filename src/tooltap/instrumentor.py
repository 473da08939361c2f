"""Wiring: ``TooltapInstrumentor`` (the ``opentelemetry_instrumentor`` entry point) and the
``instrument`` / ``uninstrument`` / ``flush`` functions.

``instrument`` checks its options (``tooltap.Config``) and builds one ``Telemetry`` on the
given providers, else the global ones (never setting any); only with ``export=True`` /
``TOOLTAP_EXPORT=1`` on private providers of its own (``_telemetry.export``). It then
installs every ``PatchSet`` of ``PATCH_SETS``, the transport taps and the SDK-layer
patches, lazily (post-import hooks: no library is imported here). Setup never raises:
``opentelemetry-instrument`` re-raises any non-ImportError from an instrumentor, so a
failure is logged and tooltap stays off.
The one exception is strict mode (``TOOLTAP_STRICT_CONFIG=1`` or ``strict=True``), where
an unknown or invalid option raises ``ConfigError`` and nothing is installed.

``instrument`` and ``uninstrument`` run one at a time, from any thread. Uninstrumenting
deactivates the telemetry first, then retires it (``Telemetry.retire``): a response
tapped in between records into a telemetry that ends everything at once. The exit hook
ends every open span within ``SHUTDOWN_TIMEOUT`` in total, whatever the span processor does.
"""

from __future__ import annotations

import atexit
import logging
import os
from collections.abc import Collection, Iterable
from functools import partial
from typing import Any, Final

from opentelemetry.instrumentation.dependencies import get_dependency_conflicts
from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)

from ._forks import holding_lock, new_rlock
from ._patch import (
    aiohttp_tap,
    frameworks,
    httpx_tap,
    sdk_anthropic,
    sdk_botocore,
    sdk_cohere,
    sdk_google,
    sdk_openai,
    tap_stream,
)
from ._patch.patchset import PatchSet
from ._quietly import quietly
from ._telemetry import export
from ._telemetry.config import (
    OPTION_NAMES,
    Config,
    ConfigError,
    changes,
    check_names,
    reject,
    strict_mode,
    variables,
)
from ._telemetry.listeners import Listener
from ._telemetry.telemetry import Telemetry, get_telemetry, set_telemetry

__all__ = ["TooltapInstrumentor", "flush", "instrument", "uninstrument"]

_log = logging.getLogger("tooltap")

ENTRY_POINT_NAME: Final = "tooltap"
DISABLED_ENV: Final = "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"
#: Keyword arguments of ``instrument()`` besides the ``Config`` fields.
_OTHER_OPTIONS: Final = frozenset(
    {
        "tracer_provider",
        "meter_provider",
        "logger_provider",
        "listeners",
        "config",
        "strict",
    }
)
#: Every patch tooltap installs: the transport taps, then the SDK layer. Adding a patch
#: target is one ``Patch`` in its module's set; a new patch module, one entry here.
PATCH_SETS: Final[tuple[PatchSet, ...]] = (
    httpx_tap.PATCHES,
    sdk_openai.PATCHES,
    sdk_anthropic.PATCHES,
    sdk_google.PATCHES,
    sdk_botocore.PATCHES,
    sdk_cohere.PATCHES,
    aiohttp_tap.PATCHES,
    frameworks.PATCHES,
)
#: The SDK ranges whose retry funnels the SDK-layer patches know (the oldest ones are
#: tested in a venv of their own: ``scripts/test-old-sdks``).
SUPPORTED_SDKS: Final = tuple(p.requirement for p in PATCH_SETS if p.requirement)
_atexit_registered = False
#: One instrument()/uninstrument() at a time (reentrant: a signal handler may call one).
_switch = new_rlock()


def _disabled_by_env() -> bool:
    names = {n.strip() for n in os.environ.get(DISABLED_ENV, "").split(",")}
    return ENTRY_POINT_NAME in names or "*" in names


def _providers(tracer_provider: Any, meter_provider: Any, config: Config) -> tuple[Any, Any]:
    """The given providers; with ``export``, tooltap's private ones for the signals not given."""
    export.check_endpoints()
    if not config.export:
        if config.prometheus_port is not None or os.environ.get(export.PROMETHEUS_PORT_ENV):
            _log.warning(
                "tooltap: a Prometheus port is set but export is off; pass export=True or "
                "set %s=1 (or add a PrometheusMetricReader to your own MeterProvider)",
                export.EXPORT_ENV,
            )
        return tracer_provider, meter_provider
    if tracer_provider is not None and meter_provider is not None:
        return tracer_provider, meter_provider
    own_tp, own_mp = export.private_providers(
        prometheus_port=config.prometheus_port, prometheus_host=config.prometheus_host
    )
    return tracer_provider or own_tp, meter_provider or own_mp


def _at_exit() -> None:
    tel = get_telemetry()
    if tel is not None:
        deadline = export.exit_deadline()
        export.bounded(partial(tel.end_open, None, deadline), deadline, wait=not holding_lock())


def _config(options: dict[str, Any]) -> Config:
    """The options' ``Config`` (popping ``config`` and ``strict``); warns or, strictly, raises."""
    base = options.pop("config", None)
    with strict_mode(options.pop("strict", None)):
        check_names(options, OPTION_NAMES | _OTHER_OPTIONS)
        if base is not None and not isinstance(base, Config):
            reject(f"tooltap: config must be a tooltap.Config, got {base!r}; using the defaults")
            base = None
        return Config.from_options(options, base=base)


def _install(
    tracer_provider: Any = None,
    meter_provider: Any = None,
    listeners: Iterable[Listener] = (),
    *,
    config: Config,
    **options: Any,
) -> None:
    global _atexit_registered
    logger_provider = options.pop("logger_provider", None)
    tracer_provider, meter_provider = _providers(tracer_provider, meter_provider, config)
    tel = Telemetry(
        config=config,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        logger_provider=logger_provider,
        listeners=listeners,
    )
    set_telemetry(tel)
    for patches in PATCH_SETS:
        quietly(patches.install)  # one broken patch must not disable the rest
    if not _atexit_registered:
        atexit.register(_at_exit)
        _atexit_registered = True


def _uninstall() -> None:
    tel = get_telemetry()
    set_telemetry(None)  # every wrapper passes through from here on
    quietly(tap_stream.settle_all)  # bodies in flight record nothing more
    for patches in PATCH_SETS:
        quietly(patches.uninstall)
    if tel is not None:
        quietly(tel.retire)


class TooltapInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """OpenTelemetry instrumentor for LLM tool calls over httpx/httpx2 and the provider SDKs.

    ``instrument(tracer_provider=None, meter_provider=None, listeners=(), **options)``;
    options: ``config`` (a ``tooltap.Config``) and each ``Config`` field as a keyword
    (overriding ``config``: ``export``, ``prometheus_port``, ``prometheus_host``...),
    ``strict`` and ``logger_provider``.
    """

    def instrumentation_dependencies(self) -> Collection[str]:
        """The SDK majors whose call funnels tooltap patches (each one optional)."""
        return SUPPORTED_SDKS

    def _check_dependency_conflicts(self) -> None:
        """None is required (httpx traffic is observed without any SDK): an installed SDK
        outside its range is a WARNING, and its calls are seen by the transport taps."""
        for requirement in SUPPORTED_SDKS:
            conflict = quietly(get_dependency_conflicts, [requirement])
            if conflict is not None and getattr(conflict, "found", None):
                found = conflict.found
                _log.warning("tooltap: %s is not supported (wanted %s)", found, requirement)

    def _instrument(self, **kwargs: Any) -> None:
        if _disabled_by_env():
            _log.info("tooltap: disabled by %s", DISABLED_ENV)
            return
        try:
            config = _config(kwargs)
            _install(config=config, **kwargs)
        except ConfigError:
            raise  # strict mode asked for it
        except Exception:  # noqa: BLE001 - instrumenting must never break the app
            _log.warning("tooltap: instrumentation failed; tooltap stays off", exc_info=True)
            quietly(_uninstall)

    def _uninstrument(self, **kwargs: Any) -> None:
        quietly(_uninstall)

    def instrument(self, **kwargs: Any) -> None:
        """``BaseInstrumentor.instrument``, one call at a time (``opentelemetry-instrument``
        calls it with no options). Instrumented already, nothing changes: each option that
        would differ is named in a warning (strict mode: ``ConfigError``), in place of
        OpenTelemetry's generic message."""
        with _switch:
            if self._is_instrumented_by_opentelemetry:
                _already_instrumented(kwargs)
                return
            super().instrument(**kwargs)

    def uninstrument(self, **kwargs: Any) -> None:
        """``BaseInstrumentor.uninstrument``, one call at a time."""
        with _switch:
            super().uninstrument(**kwargs)


#: Keywords ``BaseInstrumentor.instrument`` takes for itself.
_BASE_OPTIONS: Final = ("skip_dep_check", "raise_exception_on_conflict")


def _already_instrumented(kwargs: dict[str, Any]) -> None:
    """Name what a second ``instrument()`` would change; it is not applied."""
    tel = get_telemetry()
    options = {k: v for k, v in kwargs.items() if k not in _BASE_OPTIONS}
    if tel is None:  # instrumented, but off (disabled, or setup failed)
        return
    try:
        wanted = _config(options)
    except ConfigError:
        raise
    except Exception:  # noqa: BLE001 - instrumenting must never break the app
        _log.debug("tooltap: could not compare the options", exc_info=True)
        return
    changed = changes(tel.config, wanted)
    dropped = list(changed.values())
    given = {"tracer_provider": tel.tracer_provider, "meter_provider": tel.meter_provider,
             "logger_provider": tel.logger_provider}  # fmt: skip
    dropped += [k for k, active in given.items() if options.get(k) not in (None, active)]
    listeners = tuple(options.get("listeners") or ())
    if listeners and listeners != tel.given_listeners:
        dropped.append("listeners")
    if not dropped:
        _log.debug("tooltap: already instrumented with these options")
        return
    hint = ", ".join(variables(changed)) or "the TOOLTAP_* variables"
    with strict_mode(kwargs.get("strict")):
        reject(
            "tooltap: already instrumented, these options were not applied: "
            + ", ".join(dropped)
            + "; call tooltap.uninstrument() first, or set them where tooltap is first "
            f"instrumented (under opentelemetry-instrument: {hint})"
        )


def instrument(
    tracer_provider: Any = None,
    meter_provider: Any = None,
    listeners: Iterable[Listener] = (),
    *,
    config: Config | None = None,
    strict: bool | None = None,
    **options: Any,
) -> None:
    """Instrument httpx/httpx2 and the provider SDKs (idempotent: a second call warns).

    ``config`` holds the options; each ``Config`` field may also be given as a keyword
    (it overrides ``config``). ``logger_provider`` takes the content events;
    ``export=True`` records on tooltap's own private providers built from ``OTEL_*``
    (``prometheus_port`` / ``prometheus_host`` then open a ``/metrics`` endpoint). Unknown
    or invalid options warn, or raise ``ConfigError`` when ``strict`` (None:
    ``$TOOLTAP_STRICT_CONFIG``).
    """
    TooltapInstrumentor().instrument(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        listeners=tuple(listeners),
        config=config,
        strict=strict,
        **options,
    )


def uninstrument() -> None:
    """Remove tooltap's wrappers and end its open tool spans as orphaned (idempotent)."""
    TooltapInstrumentor().uninstrument()


def flush(timeout_millis: int = 5000) -> None:
    """End the open spans (unanswered tool calls as ``orphaned``) and force-flush, within
    ``timeout_millis`` in total; a request, SDK call or body still running stays open.
    Safe from a signal handler and from a listener."""
    tel = get_telemetry()
    if tel is not None:
        quietly(tel.flush, timeout_millis)
