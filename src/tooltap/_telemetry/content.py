"""Opt-in content: messages in the GenAI "parts" format, tool arguments and results.

Each dialect maps its own bodies (``Dialect.input_messages`` and ``output_text``).

Nothing here runs unless ``Config.capture_any``
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` opts in). Input messages come from
the request body; output messages from ``Parsed`` (tool calls, finish reason) plus the
text of the body: a whole JSON body, or the text a stream's events carried
(``streamed_body``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._core._json import loads
from .._core.dialects import TABLE, Message, Part
from .._core.eventstream import EventStreamDecoder, looks_like_eventstream
from .._core.eventstream import events as eventstream_events
from .._core.model import Parsed
from .._core.ndjson import NDJSONParser
from .._core.sse import SSEParser
from .semconv import finish_reason

__all__ = ["input_messages", "output_messages"]


def input_messages(dialect: str, body: Any) -> list[Message]:
    """The request's messages as ``[{role, parts}]``; [] when the body is not a JSON object."""
    if not isinstance(body, Mapping):
        return []
    return TABLE[dialect].input_messages(body)


def tool_definitions(dialect: str, body: Any) -> list[dict[str, Any]]:
    """The function tools a request declares, as ``gen_ai.tool.definitions`` lists them."""
    if not isinstance(body, Mapping):
        return []
    return [d for d in TABLE[dialect].tool_definitions(body) if d is not None]


def _output_text(dialect: str, body: Any) -> list[Part]:
    if isinstance(body, list):  # Google streamGenerateContent without alt=sse
        return [p for chunk in body for p in _output_text(dialect, chunk)]
    if not isinstance(body, Mapping):
        return []
    return TABLE[dialect].output_text(body)


def _event_data(raw: bytes) -> list[Mapping[str, Any]]:
    """The JSON objects a whole SSE, AWS event-stream or NDJSON body carries, in order
    (others skipped)."""
    if looks_like_eventstream(raw):
        decoded = eventstream_events(EventStreamDecoder(len(raw) + 1).feed(raw))
    elif raw.lstrip()[:1] == b"{":  # one object a line (an SSE body starts with a field)
        lines = NDJSONParser(len(raw) + 1)
        decoded = [*lines.feed(raw), *lines.close()]
    else:
        parser = SSEParser(len(raw) + 1)
        decoded = [*parser.feed(raw), *parser.close()]
    out: list[Mapping[str, Any]] = []
    for event in decoded:
        try:
            data = loads(event.data)
        except ValueError:
            continue
        if isinstance(data, Mapping):
            out.append(data)
    return out


def streamed_body(dialect_name: str, raw: bytes) -> Any:
    """A streamed response's text, as the whole body of that dialect would carry it."""
    return TABLE[dialect_name].streamed_body(_event_data(raw))


def output_messages(parsed: Parsed, body: Any = None) -> list[Message]:
    """The response as one assistant message: text, then tool calls (``body``: the whole
    body decoded, or ``streamed_body`` of a stream)."""
    parts = _output_text(parsed.dialect, body)
    parts += [
        {"type": "tool_call", "id": c.call_id, "name": c.name, "arguments": c.args}
        for c in parsed.calls
    ]
    message: Message = {"role": "assistant", "parts": parts}
    if parsed.finish_reason:
        message["finish_reason"] = finish_reason(parsed.finish_reason, bool(parsed.calls))
    return [message]
