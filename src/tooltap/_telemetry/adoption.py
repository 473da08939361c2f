"""Whether a call's tool span waits for an agent framework's (``pending_span``).

``Config.adopt_tool_spans`` (``$TOOLTAP_ADOPT_TOOL_SPANS``) chooses:

- None (``auto``, the default): the span is pending while a hooked framework has a span
  of its own in progress (an agent run, a chain, a model request) that records into the
  tracer provider tooltap records into. Only then can the framework's tool span for the
  call come and be adopted; otherwise tooltap's span is made at receipt, as without a
  framework.
- True: pending whenever a framework hook is in place, whatever its tracing does.
- False: never; a framework's tool span is never adopted.

The framework hooks report each span they see start (``framework_span``); the spans are
held weakly and count only while they record.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, Final, Literal

from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Tracer

from .pending_span import PendingToolSpan

__all__ = ["AUTO", "OFF", "ON", "Adoption", "Mode", "set_framework_probe", "start_tool_span"]

Mode = Literal["auto", "on", "off"]
AUTO: Final = "auto"
ON: Final = "on"
OFF: Final = "off"

#: Whether a framework whose tool spans tooltap adopts is hooked (set by the patch layer).
_probe: Callable[[], bool] = lambda: False  # noqa: E731


def set_framework_probe(probe: Callable[[], bool]) -> None:
    """Tell ``Adoption.pending`` how to know that a framework hook is in place."""
    global _probe
    _probe = probe


class Adoption:
    """One telemetry's adoption mode and the framework spans in progress seen by its hooks."""

    def __init__(self, setting: bool | None) -> None:
        self.mode: Mode = AUTO if setting is None else (ON if setting else OFF)
        self._live: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lock = threading.Lock()

    @property
    def adopts(self) -> bool:
        """Whether a framework's tool span may be adopted at all."""
        return self.mode != OFF

    def framework_span(self, span: Span) -> None:
        """A hooked framework started ``span``, recording into tooltap's provider."""
        with self._lock:
            self._live.add(span)

    def pending(self) -> bool:
        """Whether a call received now gets a pending span."""
        if self.mode == OFF or not _probe():
            return False
        if self.mode == ON:
            return True
        with self._lock:
            ended = [s for s in self._live if not s.is_recording()]
            for span in ended:
                self._live.discard(span)
            return bool(self._live)


def start_tool_span(
    tracer: Tracer,
    name: str,
    context: Context | None,
    attributes: dict[str, Any],
    *,
    pending: bool,
) -> Span:
    """A call's ``execute_tool`` span: a ``PendingToolSpan`` if ``pending``, else started now."""
    if pending:
        return PendingToolSpan(tracer, name, context, attributes)
    return tracer.start_span(name, context=context, kind=SpanKind.INTERNAL, attributes=attributes)
