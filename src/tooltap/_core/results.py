"""Build the provider-native item that returns a tool's output to the model.

Per dialect (``call.dialect``):

- ``openai.chat``: ``{"role": "tool", "tool_call_id", "content": str}`` (a message).
- ``openai.responses``: ``{"type": "function_call_output", "call_id", "output": str}``.
- ``anthropic.messages``: ``{"type": "tool_result", "tool_use_id", "content", "is_error"}``,
  a content BLOCK: put it in a ``role: "user"`` message (``result_messages`` does).
- ``google.genai``: ``{"functionResponse": {"name", "response", "id"?}}``, a PART: put it
  in a ``role: "user"`` content (``result_messages`` does). ``id`` only when the call had one.

Outputs that are not strings are JSON-encoded (``ensure_ascii=False``) where the API
takes text. OpenAI has no error flag, so an error result is sent as the JSON text
``{"error": <output>}``, the same convention Google documents for ``response``;
``parse_request`` reads exactly that shape back as ``is_error``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .model import ToolCall

__all__ = ["result_message", "result_messages"]


def result_message(call: ToolCall, output: Any, *, is_error: bool = False) -> dict[str, Any]:
    """The item that answers ``call`` with ``output``, in the call's own dialect."""
    dialect = call.dialect
    if dialect == "openai.chat":
        return {"role": "tool", "tool_call_id": call.call_id, "content": _openai(output, is_error)}
    if dialect == "openai.responses":
        return {
            "type": "function_call_output",
            "call_id": call.call_id,
            "output": _openai(output, is_error),
        }
    if dialect == "anthropic.messages":
        blocks = isinstance(output, list) and all(
            isinstance(b, dict) and "type" in b for b in output
        )
        return {
            "type": "tool_result",
            "tool_use_id": call.call_id,
            "content": output if blocks else _text(output),
            "is_error": is_error,
        }
    if dialect == "google.genai":
        if is_error:
            response = (
                output if isinstance(output, dict) and "error" in output else {"error": output}
            )
        else:
            response = output if isinstance(output, dict) else {"output": output}
        part: dict[str, Any] = {"name": call.name, "response": response}
        if call.call_id is not None:
            part["id"] = call.call_id
        return {"functionResponse": part}
    raise ValueError(f"call.dialect is {dialect!r}: cannot build a result for it")


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
    dialect = dialects.pop()
    if dialect == "anthropic.messages":
        return [{"role": "user", "content": items}]
    if dialect == "google.genai":
        return [{"role": "user", "parts": items}]
    return items


def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False, default=str)


def _openai(output: Any, is_error: bool) -> str:
    if is_error:
        return json.dumps({"error": output}, ensure_ascii=False, default=str)
    return _text(output)
