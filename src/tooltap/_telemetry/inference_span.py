"""The inference span as tooltap may write it: all of its own span, ``tooltap.*`` on an adopted one.

An adopted span (anthropic's own) keeps its owner's attributes and status, and is never
ended here; events and links go on either kind while the span records. A span is
adopted only when it records into the provider tooltap records into (:func:`adoptable`):
a span of another provider (the global one, when the app handed tooltap its own) would
take the call's inference span out of the app's traces.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanContext, Status, StatusCode, Tracer

from . import semconv as sc

__all__ = ["InferenceSpan", "adoptable"]


def adoptable(span: Span, tracer: Tracer) -> bool:
    """Whether tooltap may adopt ``span``: it records, into the provider ``tracer`` is of.

    The OpenTelemetry SDK's span keeps its provider's span processor, as its tracer does;
    a span or tracer of another implementation, which shows neither, is taken to match.
    """
    if not span.is_recording():
        return False
    resolved = getattr(tracer, "_tracer", tracer)  # a ProxyTracer's tracer, once it has one
    ours = getattr(resolved, "span_processor", None)
    theirs = getattr(span, "_span_processor", None)
    return ours is None or theirs is None or ours is theirs


class InferenceSpan:
    """One operation's span; ``content``: whether its owner's content mode allows content."""

    __slots__ = ("_context", "_truncated", "adopted", "content", "span")

    def __init__(self, span: Span, *, adopted: bool, content: bool) -> None:
        self.span = span
        self.adopted = adopted
        self.content = content
        self._context: Context | None = None
        self._truncated = 0

    def owns(self, key: str) -> bool:
        """Whether tooltap writes ``key``: any on its own span, ``tooltap.*`` on an adopted one."""
        return not self.adopted or key.startswith(sc.TOOLTAP_PREFIX)

    def set(self, key: str, value: Any) -> None:
        """Set an attribute tooltap owns, while the span records (an adopted span may end first)."""
        if self.owns(key) and self.span.is_recording():
            self.span.set_attribute(key, value)

    def truncated(self, count: int) -> None:
        """Count ``count`` more values cut to their limit (``tooltap.truncated``)."""
        if count:
            self._truncated += count
            self.set(sc.TOOLTAP_TRUNCATED, self._truncated)

    def set_own(self, attributes: dict[str, Any]) -> None:
        """Set ``attributes`` in one call (one lock, one validation pass), on tooltap's own span."""
        if attributes and not self.adopted and self.span.is_recording():
            self.span.set_attributes(attributes)

    def context(self) -> Context:
        """A context with the span current (for metric exemplars and tool spans), built once."""
        context = self._context
        if context is None:
            context = self._context = trace.set_span_in_context(self.span)
        return context

    def event(self, name: str, attributes: dict[str, Any]) -> None:
        if self.span.is_recording():
            self.span.add_event(name, attributes)

    def links(self, links: Iterable[SpanContext], attributes: dict[str, Any]) -> None:
        if self.span.is_recording():
            for link in links:
                self.span.add_link(link, attributes)

    def rename(self, name: str) -> None:
        if not self.adopted:
            self.span.update_name(name)

    def fail(self, error_type: str) -> None:
        """Mark tooltap's own span failed with ``error_type``."""
        if not self.adopted and self.span.is_recording():
            self.span.set_status(Status(StatusCode.ERROR, error_type))

    def end(self) -> None:
        """End tooltap's own span (an adopted one is its owner's to end)."""
        if not self.adopted:
            self.span.end()
