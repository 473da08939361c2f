"""Opt-in content: messages in the GenAI "parts" format, tool arguments and results.

Each dialect maps its own bodies (``Dialect.input_messages`` and ``output_text``).

Nothing here runs unless ``Config.capture_any``
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` opts in). Input messages come from
the request body; output messages from ``Parsed`` (tool calls, finish reason) plus the
text of a whole JSON body when there is one — streamed text is not kept by the core, so
streamed output carries tool calls only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._core.dialects import TABLE, Message, Part
from .._core.model import Parsed
from .semconv import finish_reason

__all__ = ["input_messages", "output_messages", "to_json"]


def to_json(value: Any) -> str:
    """Compact JSON (non-ASCII kept); strings pass through as they are."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def input_messages(dialect: str, body: Any) -> list[Message]:
    """The request's messages as ``[{role, parts}]``; [] when the body is not a JSON object."""
    if not isinstance(body, Mapping):
        return []
    return TABLE[dialect].input_messages(body)


def _output_text(dialect: str, body: Any) -> list[Part]:
    if isinstance(body, list):  # Google streamGenerateContent without alt=sse
        return [p for chunk in body for p in _output_text(dialect, chunk)]
    if not isinstance(body, Mapping):
        return []
    return TABLE[dialect].output_text(body)


def output_messages(parsed: Parsed, body: Any = None) -> list[Message]:
    """The response as one assistant message: text (whole bodies only), then tool calls."""
    parts = _output_text(parsed.dialect, body)
    parts += [
        {"type": "tool_call", "id": c.call_id, "name": c.name, "arguments": c.args}
        for c in parsed.calls
    ]
    message: Message = {"role": "assistant", "parts": parts}
    if parsed.finish_reason:
        message["finish_reason"] = finish_reason(parsed.finish_reason, bool(parsed.calls))
    return [message]
