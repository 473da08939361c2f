"""Build the provider-native item that returns a tool's output to the model.

Each dialect builds its own (``Dialect.result_message``; its ``_request`` module says
the shape): an OpenAI message or item, an Anthropic content BLOCK, a Google PART.
``result_messages`` puts them in the messages to append (Anthropic and Google: one user
message or content holding every result of the turn).

Outputs that are not strings are JSON-encoded (``ensure_ascii=False``) where the API
takes text. OpenAI has no error flag, so an error result is sent as the JSON text
``{"error": <output>}``, the same convention Google documents for ``response``;
``parse_request`` reads exactly that shape back as ``is_error``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .dialects import TABLE
from .model import ToolCall

__all__ = ["result_message", "result_messages"]


def result_message(call: ToolCall, output: Any, *, is_error: bool = False) -> dict[str, Any]:
    """The item that answers ``call`` with ``output``, in the call's own dialect."""
    entry = TABLE.get(call.dialect)
    if entry is None:
        raise ValueError(f"call.dialect is {call.dialect!r}: cannot build a result for it")
    return entry.result_message(call, output, is_error)


def result_messages(
    results: Iterable[tuple[ToolCall, Any] | tuple[ToolCall, Any, bool]],
) -> list[dict[str, Any]]:
    """Messages to append to the conversation for ``(call, output[, is_error])`` items.

    OpenAI: one message/item per result. Anthropic: ONE user message holding every
    ``tool_result`` block. Google: ONE ``{"role": "user", "parts": [...]}`` content.
    All calls must share one dialect (ValueError otherwise).
    """
    items: list[dict[str, Any]] = []
    dialects: set[str] = set()
    for entry in results:
        call, output = entry[0], entry[1]
        is_error = bool(entry[2]) if len(entry) > 2 else False
        dialects.add(call.dialect)
        items.append(result_message(call, output, is_error=is_error))
    if len(dialects) > 1:
        raise ValueError(f"results from several dialects: {sorted(dialects)}")
    if not items:
        return []
    return TABLE[dialects.pop()].result_messages(items)
