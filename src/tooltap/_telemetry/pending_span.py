"""A tool span started at receipt but created only when needed, so a framework's can replace it.

Agent frameworks (pydantic-ai with instrumentation on, OpenInference's LangChain
instrumentor) trace each tool run with a span of their own. While one may still run a
call, tooltap's ``execute_tool`` span for it is a ``PendingToolSpan``: it keeps the
receipt time and what tooltap records on it (attributes, events, status, in order).
Then exactly one of two things happens, once:

- ``adopt(span)``: the framework's span for the call started. tooltap's ``tooltap.*``
  attributes and its events go onto that span, and the ``gen_ai.*`` attributes the
  framework left out; its status, name and ``error.type`` stay the framework's. Later
  records go there too while it records; ``end()`` leaves it to the framework.
- the span is needed (its context asked for: a child span, a link, a listener; or its
  end): a real span is started, back-dated to the receipt time, with the initial
  attributes, and the later records are replayed on it (events keep their times).

Until then it settles as a real span would: its ``parent`` is the span it was received
under, so a flush keeps it open while that response is still being read. A tracer that
fails when the span is made is reported and leaves a non-recording span. Thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any, Final

from opentelemetry.context import Context, get_current
from opentelemetry.trace import (
    INVALID_SPAN,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    Tracer,
    get_current_span,
)
from opentelemetry.util.types import Attributes, AttributeValue

from .._quietly import report
from . import semconv as sc
from .sanitize import Sanitizer

__all__ = ["PendingToolSpan", "adopted_result", "context_of"]

_GEN_AI: Final = "gen_ai."


class PendingToolSpan(Span):
    """tooltap's span of one call until a framework's span is adopted or a real one is made."""

    def __init__(
        self, tracer: Tracer, name: str, context: Context | None, attributes: dict[str, Any]
    ) -> None:
        self._tracer = tracer
        self._name = name
        self._context = context if context is not None else get_current()  # as at receipt
        self._start = time.time_ns()
        self._initial = dict(attributes)
        self._later: list[tuple[str, Any, Any, Any]] = []
        self._real: Span | None = None
        self._adopted: Span | None = None
        self._ended = False
        self._lock = threading.Lock()

    @property
    def parent(self) -> SpanContext | None:
        """The context of the span the call was received under (a real span's ``parent``)."""
        context = get_current_span(self._context).get_span_context()
        return context if context.is_valid else None

    @property
    def adopted(self) -> Span | None:
        """The framework's span this one became, if any."""
        return self._adopted

    def adopt(self, span: Span) -> bool:
        """Become the framework's ``span`` (still recording); False if already decided."""
        with self._lock:
            if self._real is not None or self._adopted is not None or self._ended:
                return False
            self._adopted = span
            present = getattr(span, "attributes", None) or {}
            for key, value in self._initial.items():
                _put(span, key, value, present)
            for op in self._later:
                self._apply_adopted(span, op, present)
        return True

    def _materialize(self) -> Span:
        """The real span (started at receipt, with what was recorded), made once.

        A tracer that fails leaves a non-recording span (the failure is reported): the
        call's lifecycle and metrics go on, as they do when anything else fails.
        """
        with self._lock:
            if self._real is None:
                try:
                    real = self._tracer.start_span(
                        self._name,
                        context=self._context,
                        kind=SpanKind.INTERNAL,
                        attributes=self._initial,
                        start_time=self._start,
                    )
                except Exception as exc:  # noqa: BLE001 - contained like every tooltap fault
                    report(exc, "pending_span")
                    real = INVALID_SPAN
                for op in self._later:
                    _replay(real, op)
                self._later.clear()
                self._real = real
            return self._real

    def _record(self, op: tuple[str, Any, Any, Any]) -> None:
        with self._lock:
            real, adopted = self._real, self._adopted
            if real is None and adopted is None:
                self._later.append(op)
                return
        if real is not None:
            _replay(real, op)
        elif adopted is not None and adopted.is_recording():
            self._apply_adopted(adopted, op, getattr(adopted, "attributes", None) or {})

    @staticmethod
    def _apply_adopted(
        span: Span, op: tuple[str, Any, Any, Any], present: Mapping[str, Any]
    ) -> None:
        kind, a, b, c = op
        if kind == "attribute":
            _put(span, a, b, present)
        elif kind == "event":
            span.add_event(a, b, c)

    # --- the Span interface -------------------------------------------------------------

    def get_span_context(self) -> SpanContext:
        adopted = self._adopted
        if adopted is not None:
            return adopted.get_span_context()
        return self._materialize().get_span_context()

    def is_recording(self) -> bool:
        real = self._real
        return real.is_recording() if real is not None else not self._ended

    def set_attributes(self, attributes: Mapping[str, AttributeValue]) -> None:
        for key, value in attributes.items():
            self.set_attribute(key, value)

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        self._record(("attribute", key, value, None))

    def add_event(
        self, name: str, attributes: Attributes = None, timestamp: int | None = None
    ) -> None:
        stamp = time.time_ns() if timestamp is None else timestamp
        self._record(("event", name, dict(attributes or {}), stamp))

    def add_link(self, context: SpanContext, attributes: Attributes = None) -> None:
        if self._adopted is None:
            self._materialize().add_link(context, attributes)

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if not isinstance(status, Status):
            status = Status(status, description)
        self._record(("status", status, None, None))

    def update_name(self, name: str) -> None:
        self._record(("name", name, None, None))

    def record_exception(
        self,
        exception: BaseException,
        attributes: Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        if self._adopted is None:
            self._materialize().record_exception(exception, attributes, timestamp, escaped)

    def end(self, end_time: int | None = None) -> None:
        if self._adopted is not None:
            self._ended = True  # the framework ends its own span
            return
        real = self._materialize()
        self._ended = True
        real.end(end_time)


def _put(span: Span, key: str, value: Any, present: Mapping[str, Any]) -> None:
    """On an adopted span: tooltap's own attributes, and the ``gen_ai.*`` ones it lacks."""
    if key.startswith(sc.TOOLTAP_PREFIX) or (key.startswith(_GEN_AI) and key not in present):
        span.set_attribute(key, value)


def _replay(span: Span, op: tuple[str, Any, Any, Any]) -> None:
    kind, a, b, c = op
    if kind == "attribute":
        span.set_attribute(a, b)
    elif kind == "event":
        span.add_event(a, b, c)
    elif kind == "status":
        span.set_status(a)
    elif kind == "name":
        span.update_name(a)


def adopted_result(
    span: Span | None,
    inference_span: Span | None,
    call_id: str | None,
    name: str,
    result: str,
    duration: float,
) -> None:
    """A result answering a call whose span was adopted: an event on the request's span.

    The framework ended its span when the tool returned; what tooltap learns later (the
    result sent and the turnaround from receipt) goes on the inference span carrying it.
    """
    if not isinstance(span, PendingToolSpan) or span.adopted is None:
        return
    if inference_span is None or not inference_span.is_recording():
        return
    clean = Sanitizer()
    attributes: dict[str, Any] = {
        sc.GEN_AI_TOOL_NAME: clean.name(name),
        sc.TOOLTAP_RESULT: result,
        sc.TOOL_CALL_DURATION: duration,
    }
    if call_id is not None:
        attributes[sc.GEN_AI_TOOL_CALL_ID] = clean.id(call_id)
    inference_span.add_event(sc.EVENT_ADOPTED_RESULT, clean.count(attributes))


def context_of(span: Span | None) -> Span | SpanContext | None:
    """What a listener event holds of ``span``: a pending span itself (decided when its
    context is read), else its context."""
    if span is None or isinstance(span, PendingToolSpan):
        return span
    return span.get_span_context()
