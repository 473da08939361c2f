"""Listener events for harness authors, and their contained dispatch.

A listener is a callable taking one event, or an object with ``on_event(event)``.
A listener that raises is the app's bug, not tooltap's: it is contained, logged at
debug and counted in ``tooltap.internal_errors{tooltap.component="listener"}``, and
the other listeners still run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

from opentelemetry.trace import Span, SpanContext

from .._core.model import Problem, ToolCall

__all__ = [
    "Listener",
    "ListenerEvent",
    "Listeners",
    "ToolCallProblem",
    "ToolCallReceived",
    "ToolResultSent",
]

_log = logging.getLogger("tooltap")


@dataclass(frozen=True, slots=True)
class ToolCallReceived:
    """A tool call was fully received; ``span_context`` is its ``execute_tool`` span.

    ``span``: the span, or its context. A span still waiting for a framework's (see
    ``docs/FRAMEWORKS.md``) is decided when ``span_context`` is first read: read at once,
    it is tooltap's own; read after the framework's span started, it is that span.
    """

    call: ToolCall
    span: Span | SpanContext | None

    @property
    def span_context(self) -> SpanContext | None:
        span = self.span
        return span.get_span_context() if isinstance(span, Span) else span


@dataclass(frozen=True, slots=True)
class ToolCallProblem:
    """A problem in a response (a broken call, or the response itself); inference span."""

    problem: Problem
    dialect: str
    span_context: SpanContext | None


@dataclass(frozen=True, slots=True)
class ToolResultSent:
    """A request carried a tool result. ``outcome``: ok, error, duplicate or unknown_call.

    ``duration`` is seconds from the call received to its result sent (None when the
    call was never seen).
    """

    call_id: str | None
    name: str | None
    is_error: bool
    duration: float | None
    outcome: str


ListenerEvent: TypeAlias = ToolCallReceived | ToolCallProblem | ToolResultSent


class _HasOnEvent(Protocol):
    def on_event(self, event: Any, /) -> Any: ...


Listener: TypeAlias = Callable[[Any], Any] | _HasOnEvent


class Listeners:
    """The registered listeners; ``emit`` never raises."""

    __slots__ = ("_on_error", "_targets")

    def __init__(self, listeners: Iterable[Listener], on_error: Callable[[str], None]) -> None:
        targets: list[Callable[[Any], Any]] = []
        for listener in listeners:
            method = getattr(listener, "on_event", None)
            if callable(method):
                targets.append(method)
            elif callable(listener):
                targets.append(listener)
            else:
                _log.warning("tooltap: ignoring listener %r (not callable, no on_event)", listener)
        self._targets = tuple(targets)
        self._on_error = on_error

    def __bool__(self) -> bool:
        return bool(self._targets)

    def emit(self, event: ListenerEvent) -> None:
        """Deliver ``event`` to every listener; each failure is contained."""
        for target in self._targets:
            try:
                target(event)
            except Exception:  # noqa: BLE001 - a listener must never break the app
                _log.debug("tooltap: listener %r raised", target, exc_info=True)
                self._on_error("listener")
