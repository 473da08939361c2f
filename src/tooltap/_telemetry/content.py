"""Opt-in content: messages in the GenAI "parts" format, tool arguments and results.

Nothing here runs unless ``Config.capture_any``
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` opts in). Input messages come
from the request body; output messages from ``Parsed`` (tool calls, finish reason) plus
the text of a whole JSON body when there is one — streamed text is not kept by the core,
so streamed output carries tool calls only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._core.model import Parsed
from .semconv import finish_reason

__all__ = ["input_messages", "output_messages", "to_json"]

Message = dict[str, Any]
Part = dict[str, Any]


def to_json(value: Any) -> str:
    """Compact JSON (non-ASCII kept); strings pass through as they are."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _args(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _text_parts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    parts: list[Part] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
            parts.append({"type": "text", "content": block["text"]})
        elif kind in ("thinking", "reasoning") and isinstance(block.get(str(kind)), str):
            parts.append({"type": "reasoning", "content": block[str(kind)]})
    return parts


def _chat(body: Mapping[str, Any]) -> list[Message]:
    out: list[Message] = []
    for msg in body.get("messages") or ():
        if not isinstance(msg, Mapping):
            continue
        role = str(msg.get("role", "user"))
        if role == "tool":
            part = {
                "type": "tool_call_response",
                "id": msg.get("tool_call_id"),
                "response": msg.get("content"),
            }
            out.append({"role": "tool", "parts": [part]})
            continue
        parts = _text_parts(msg.get("content"))
        for call in msg.get("tool_calls") or ():
            fn = call.get("function") or {} if isinstance(call, Mapping) else {}
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": fn.get("name"),
                    "arguments": _args(fn.get("arguments")),
                }
            )
        out.append({"role": role, "parts": parts})
    return out


def _responses(body: Mapping[str, Any]) -> list[Message]:
    items = body.get("input")
    if isinstance(items, str):
        return [{"role": "user", "parts": [{"type": "text", "content": items}]}]
    out: list[Message] = []
    for item in items or ():
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        if kind == "function_call":
            part = {
                "type": "tool_call",
                "id": item.get("call_id"),
                "name": item.get("name"),
                "arguments": _args(item.get("arguments")),
            }
            out.append({"role": "assistant", "parts": [part]})
        elif kind == "function_call_output":
            part = {
                "type": "tool_call_response",
                "id": item.get("call_id"),
                "response": item.get("output"),
            }
            out.append({"role": "tool", "parts": [part]})
        elif "role" in item:
            out.append({"role": str(item["role"]), "parts": _text_parts(item.get("content"))})
    return out


def _anthropic(body: Mapping[str, Any]) -> list[Message]:
    out: list[Message] = []
    for msg in body.get("messages") or ():
        if not isinstance(msg, Mapping):
            continue
        content = msg.get("content")
        parts = _text_parts(content)
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool_use":
                parts.append(
                    {
                        "type": "tool_call",
                        "id": block.get("id"),
                        "name": block.get("name"),
                        "arguments": block.get("input"),
                    }
                )
            elif block.get("type") == "tool_result":
                parts.append(
                    {
                        "type": "tool_call_response",
                        "id": block.get("tool_use_id"),
                        "response": block.get("content"),
                    }
                )
        out.append({"role": str(msg.get("role", "user")), "parts": parts})
    return out


def _google_parts(parts: Any) -> list[Part]:
    out: list[Part] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, Mapping):
            continue
        call = part.get("functionCall") or part.get("function_call")
        answer = part.get("functionResponse") or part.get("function_response")
        if isinstance(part.get("text"), str):
            kind = "reasoning" if part.get("thought") else "text"
            out.append({"type": kind, "content": part["text"]})
        elif isinstance(call, Mapping):
            out.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": call.get("name"),
                    "arguments": call.get("args"),
                }
            )
        elif isinstance(answer, Mapping):
            out.append(
                {
                    "type": "tool_call_response",
                    "id": answer.get("id"),
                    "response": answer.get("response"),
                }
            )
    return out


def _google(body: Mapping[str, Any]) -> list[Message]:
    out: list[Message] = []
    for content in body.get("contents") or ():
        if isinstance(content, Mapping):
            out.append(
                {
                    "role": str(content.get("role", "user")),
                    "parts": _google_parts(content.get("parts")),
                }
            )
    return out


_INPUT = {
    "openai.chat": _chat,
    "openai.responses": _responses,
    "anthropic.messages": _anthropic,
    "google.genai": _google,
}


def input_messages(dialect: str, body: Any) -> list[Message]:
    """The request's messages as ``[{role, parts}]``; [] when the body is not a JSON object."""
    if not isinstance(body, Mapping):
        return []
    return _INPUT[dialect](body)


def _output_text(dialect: str, body: Any) -> list[Part]:
    if isinstance(body, list):  # Google streamGenerateContent without alt=sse
        return [p for chunk in body for p in _output_text(dialect, chunk)]
    if not isinstance(body, Mapping):
        return []
    if dialect == "openai.chat":
        choices = body.get("choices") or [{}]
        message = choices[0].get("message") or {} if isinstance(choices[0], Mapping) else {}
        return _text_parts(message.get("content"))
    if dialect == "openai.responses":
        return [
            p
            for item in body.get("output") or ()
            if isinstance(item, Mapping) and item.get("type") == "message"
            for p in _text_parts(item.get("content"))
        ]
    if dialect == "anthropic.messages":
        return _text_parts(body.get("content"))
    candidates = body.get("candidates") or [{}]
    first = candidates[0] if isinstance(candidates[0], Mapping) else {}
    parts = _google_parts((first.get("content") or {}).get("parts"))
    return [p for p in parts if p["type"] in ("text", "reasoning")]


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
