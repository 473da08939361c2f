"""Adopting a framework's tool span as THE ``execute_tool`` span of a call tooltap has open.

The patch layer calls ``framework_span`` for each span a hooked framework starts, and
``adopt`` when it starts its span for a tool run, with the call id (and name) the
framework has in scope. The span is adopted when all hold:
adoption is not off (``Config.adopt_tool_spans``, ``$TOOLTAP_ADOPT_TOOL_SPANS``), the span
records, it belongs to the tracer provider tooltap records into (same span processor:
a framework exporting elsewhere keeps its span and tooltap keeps its own), and tooltap
has an open call of that id (or, when the framework knows no id yet, of that name and
those arguments) in the current conversation whose span is still pending.
Otherwise nothing changes. Never raises.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import Span, Tracer

from .._quietly import report
from . import semconv as sc
from .callids import call_key
from .conversation import current_conversation
from .pending_span import PendingToolSpan
from .telemetry import get_telemetry

__all__ = ["adopt", "framework_span"]


def framework_span(span: Span) -> None:
    """A hooked framework started ``span``: while it records into tooltap's provider, calls
    received get pending spans (``adoption``). Never raises."""
    try:
        tel = get_telemetry()
        if tel is not None and span.is_recording() and _records_into(span, tel.tracer):
            tel.lifecycle.adoption.framework_span(span)
    except Exception as exc:  # noqa: BLE001
        report(exc, "foreign_tool_span")


def adopt(
    span: Span, call_id: object, name: object = None, args: object = None
) -> PendingToolSpan | None:
    """Make ``span`` (a framework's, for call ``call_id``) the call's tool span, if it may be."""
    try:
        return _adopt(span, call_id, name, args)
    except Exception as exc:  # noqa: BLE001
        report(exc, "foreign_tool_span")
        return None


def _adopt(span: Span, call_id: object, name: object, args: object) -> PendingToolSpan | None:
    tel = get_telemetry()
    if tel is None or not tel.lifecycle.adoption.adopts or not span.is_recording():
        return None
    known_id = call_id if isinstance(call_id, str) and call_id else None
    key = call_key(name, args) if isinstance(name, str) and isinstance(args, dict) else None
    if (known_id is None and key is None) or not _records_into(span, tel.tracer):
        return None
    conversation = current_conversation.get()
    entry = tel.lifecycle.open_call(known_id, key, conversation)
    if entry is None and key is not None and known_id is not None:
        entry = tel.lifecycle.open_call(known_id, None, conversation)
    if entry is None or (isinstance(name, str) and name and entry.name != name):
        return None
    pending = entry.span
    if not isinstance(pending, PendingToolSpan) or not pending.adopt(span):
        return None
    entry.handled = True  # the framework runs it: an identical call finds the next one
    span.set_attribute(sc.TOOLTAP_TOOL_SPAN, sc.TOOL_SPAN_ADOPTED)
    return pending


def _records_into(span: Span, tracer: Tracer) -> bool:
    """Whether ``span`` goes to the same span processor as spans of ``tracer`` (the SDK's)."""
    real: Any = getattr(tracer, "_tracer", tracer)  # a ProxyTracer's resolved tracer
    processor = getattr(real, "span_processor", None)
    return processor is not None and getattr(span, "_span_processor", None) is processor
