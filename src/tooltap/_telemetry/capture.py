"""Opt-in content capture for an operation: the request's messages and tool definitions, the
response's messages; on the span (``content_on_span``) and as inference-details events.

Nothing here records unless ``Config.capture_any``; ``content.py`` maps the bodies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._core.model import Parsed
from . import semconv as sc
from .content import input_messages, output_messages, tool_definitions
from .inference_span import InferenceSpan
from .sanitize import Sanitizer
from .telemetry import Telemetry

__all__ = ["capture_request", "capture_response"]


def capture_request(
    tel: Telemetry,
    out: InferenceSpan,
    attributes: Mapping[str, Any],
    dialect: str,
    body: Any,
) -> None:
    """The request's input messages and tool definitions (``body``: decoded JSON, or None)."""
    if not tel.config.capture_any or body is None:
        return
    _record(tel, out, attributes, sc.GEN_AI_INPUT_MESSAGES, input_messages(dialect, body))
    definitions = tool_definitions(dialect, body)
    if definitions and tel.config.content_on_span:
        clean = Sanitizer()
        out.set(sc.GEN_AI_TOOL_DEFINITIONS, clean.json(definitions))
        out.truncated(clean.truncated)


def capture_response(
    tel: Telemetry,
    out: InferenceSpan,
    attributes: Mapping[str, Any],
    parsed: Parsed,
    body: Any,
) -> None:
    """The response's output messages (``body``: the whole body decoded, or None)."""
    if tel.config.capture_any:
        _record(tel, out, attributes, sc.GEN_AI_OUTPUT_MESSAGES, output_messages(parsed, body))


def _record(
    tel: Telemetry,
    out: InferenceSpan,
    attributes: Mapping[str, Any],
    key: str,
    messages: list[dict[str, Any]],
) -> None:
    clean = Sanitizer()
    value = clean.json(messages)
    if tel.config.content_on_span and out.owns(key):
        out.set(key, value)
        out.truncated(clean.truncated)
    events = tel.events
    if events is not None:
        events.emit(
            event_name=sc.EVENT_INFERENCE_DETAILS,
            attributes=clean.count({**attributes, key: value}),
            context=out.context(),
        )
