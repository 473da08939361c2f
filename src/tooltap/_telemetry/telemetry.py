"""The live instrumentation state: providers, tracer, instruments, config, lifecycle, listeners.

One ``Telemetry`` exists while tooltap is instrumented (``get_telemetry()``); wrappers
capture nothing else, so uninstrumenting makes every wrapper a pass-through at once, and
``retire`` then drains the old one: nothing recorded into it afterwards stays open.

``flush`` ends spans and force-flushes the providers in a worker thread and waits for it
until its deadline: a span processor that exports synchronously, or a lock held by the
thread that calls (a signal handler interrupting tooltap's own recording), never holds
the caller past its timeout. It leaves alone what is still running: a send, an SDK call,
a body being read, and the tool calls of those responses.
"""

from __future__ import annotations

import importlib.metadata
import logging
import threading
import time
import weakref
from collections.abc import Iterable
from functools import partial
from typing import Any, Protocol

from opentelemetry import trace
from opentelemetry._logs import Logger, LoggerProvider, NoOpLoggerProvider, get_logger
from opentelemetry._logs import get_logger_provider as _global_logger_provider
from opentelemetry.metrics import get_meter, get_meter_provider
from opentelemetry.trace import Span

from .._forks import holding_lock, in_child
from .._quietly import quietly, run_deferred, set_error_sink
from . import conversation, nowhere
from . import semconv as sc
from .config import Config
from .correlate import OpenCall
from .export import bounded
from .flight import FlightRecorder, flight_settings
from .instruments import Instruments, ToolNames
from .lifecycle import Lifecycle
from .listeners import Listener, Listeners

__all__ = ["Telemetry", "get_telemetry", "set_telemetry"]

_log = logging.getLogger("tooltap")

_current: Telemetry | None = None


def get_telemetry() -> Telemetry | None:
    """The active telemetry, or None when tooltap is not instrumented (then do nothing)."""
    return _current


def set_telemetry(tel: Telemetry | None) -> None:
    """Activate ``tel`` (or deactivate with None); wires the internal-error counter and the
    tracer of conversation root spans."""
    global _current
    _current = tel
    set_error_sink(tel.internal_error if tel is not None else None)
    conversation.use_tracer(tel.tracer if tel is not None else None)


@in_child
def _forget_parent_operations() -> None:
    """A forked child never ends its parent's inference spans (a parent thread may have
    held one's lock at the fork): it starts with no open operations."""
    tel = _current
    if tel is not None:
        tel.open_operations = weakref.WeakSet()


def _logs_go_nowhere(logger_provider: LoggerProvider | None) -> bool:
    """No logger provider given, and no global one set (a proxy or a no-op one)."""
    if logger_provider is not None:
        return False
    provider = _global_logger_provider()
    return isinstance(provider, NoOpLoggerProvider) or type(provider).__name__ == (
        "ProxyLoggerProvider"
    )


def _version() -> str:
    try:
        return importlib.metadata.version("tooltap")
    except importlib.metadata.PackageNotFoundError:
        return ""


class _Open(Protocol):
    """An operation not ended yet (``operation.Operation``)."""

    span: Span

    def abandon(self) -> None: ...
    def abandonable(self, caller: threading.Thread) -> bool: ...
    def keeps(self, entry: OpenCall) -> bool: ...


class Telemetry:
    """Everything the wrappers record through, built once per ``instrument()``."""

    def __init__(
        self,
        *,
        config: Config,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        logger_provider: Any = None,
        listeners: Iterable[Listener] = (),
    ) -> None:
        version = _version()
        self.config = config
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.logger_provider = logger_provider
        #: The listeners as given (to tell a later ``instrument()`` giving others).
        self.given_listeners = tuple(listeners)
        self.tracer = trace.get_tracer(
            sc.INSTRUMENTATION_NAME, version, tracer_provider, schema_url=sc.SCHEMA_URL
        )
        meter = get_meter(
            sc.INSTRUMENTATION_NAME, version, meter_provider, schema_url=sc.SCHEMA_URL
        )
        self.instruments = Instruments(meter)
        self.events: Logger | None = (
            get_logger(sc.INSTRUMENTATION_NAME, version, logger_provider, schema_url=sc.SCHEMA_URL)
            if config.content_in_events
            else None
        )
        if config.content_in_events and _logs_go_nowhere(logger_provider):
            _log.warning(
                "tooltap: capture_content=%s records content as log events, but no "
                "LoggerProvider is set (logger_provider= or a global one): they go nowhere",
                config.capture_content,
            )
        self.tool_names = ToolNames(config.tool_name_cap)
        self.listeners = Listeners(self.given_listeners, self.internal_error)
        self.lifecycle = Lifecycle(
            tracer=self.tracer,
            instruments=self.instruments,
            listeners=self.listeners,
            tool_names=self.tool_names,
            config=config,
        )
        #: Operations not ended yet, held weakly: the tap or SDK call that owns one keeps it.
        self.open_operations: weakref.WeakSet[_Open] = weakref.WeakSet()
        settings = flight_settings(config)
        #: The flight recorder, when one is configured.
        on_drop = partial(self.internal_error, "flight_recorder")
        self.flight = (
            FlightRecorder(settings, config, version, on_drop) if settings is not None else None
        )
        #: Whether the first operation has checked that its telemetry goes somewhere.
        self.export_checked = False

    def check_export(self) -> None:
        """At the first operation: warn once if neither traces nor metrics will export."""
        self.export_checked = True
        quietly(nowhere.check, self.tracer_provider, self.meter_provider)

    def internal_error(self, component: str) -> None:
        """Count one contained failure of ``component``."""
        self.instruments.internal_error(component)

    def end_open(
        self, caller: threading.Thread | None = None, deadline: float | None = None
    ) -> None:
        """End open spans: inference spans whose body was never finished (as closed early),
        then tool spans never answered (as orphaned).

        ``caller``: the thread that flushes; what is still running is left alone then (see
        the module docstring). None (exit, uninstrument): everything ends. ``deadline``:
        then wait until it at most for what other threads were ending meanwhile (calls taken
        out of the table, operations: ``Lifecycle.wait_ending``).
        """
        run_deferred()  # bodies a garbage collection left to settle settle first
        running: list[_Open] = []
        for op in list(self.open_operations):
            if caller is None or quietly(op.abandonable, caller, default=True):
                quietly(op.abandon)
            else:
                running.append(op)
        if not running:
            self.lifecycle.end_all()
        else:
            self.lifecycle.end_all(lambda entry: any(op.keeps(entry) for op in running))
        if deadline is not None:
            besides = {threading.get_ident(), None if caller is None else caller.ident}
            self.lifecycle.wait_ending(deadline, besides)

    def _flush(self, caller: threading.Thread, deadline: float) -> None:
        self.end_open(caller, deadline)
        tracer_provider = self.tracer_provider or trace.get_tracer_provider()
        meter_provider = self.meter_provider or get_meter_provider()
        for provider in (tracer_provider, meter_provider):
            force_flush = getattr(provider, "force_flush", None)
            left = int((deadline - time.monotonic()) * 1000)
            if callable(force_flush) and left > 0:
                quietly(force_flush, left)
        if self.flight is not None:
            self.flight.writer.drain(max(0.0, deadline - time.monotonic()))

    def flush(self, timeout_millis: int = 5000) -> None:
        """End open spans (``end_open``), then force-flush providers that can, all in a
        worker thread, waiting ``timeout_millis`` at most in total.

        Called inside this thread's own hold of one of tooltap's locks (a signal handler
        interrupting it), it waits for nothing: the worker finishes once that code lets go.
        """
        deadline = time.monotonic() + max(0, timeout_millis) / 1000
        work = partial(self._flush, threading.current_thread(), deadline)
        bounded(work, deadline, wait=not holding_lock())

    def retire(self) -> None:
        """No longer the active telemetry (uninstrumented): end everything open in it, and
        every call that still reaches it from now on."""
        self.lifecycle.retire()
        self.end_open()
