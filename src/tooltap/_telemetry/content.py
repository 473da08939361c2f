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
from .._core.sse import SSEParser
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


def _definition(name: Any, description: Any, parameters: Any) -> dict[str, Any] | None:
    if not isinstance(name, str):
        return None
    out: dict[str, Any] = {"type": "function", "name": name}
    if isinstance(description, str):
        out["description"] = description
    if parameters is not None:
        out["parameters"] = parameters
    return out


_GOOGLE_SCHEMA_KEYS = ("parametersJsonSchema", "parameters_json_schema", "parameters")


def tool_definitions(dialect: str, body: Any) -> list[dict[str, Any]]:
    """The function tools a request declares, as ``gen_ai.tool.definitions`` lists them."""
    tools = body.get("tools") if isinstance(body, Mapping) else None
    found: list[dict[str, Any] | None] = []
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, Mapping):
            continue
        if dialect == "openai.chat":
            fn = tool.get("function")
            if tool.get("type") == "function" and isinstance(fn, Mapping):
                found.append(_definition(fn.get("name"), fn.get("description"),
                                         fn.get("parameters")))  # fmt: skip
        elif dialect == "openai.responses":
            if tool.get("type") == "function":
                found.append(_definition(tool.get("name"), tool.get("description"),
                                         tool.get("parameters")))  # fmt: skip
        elif dialect == "anthropic.messages":
            if tool.get("type") in (None, "custom"):
                found.append(_definition(tool.get("name"), tool.get("description"),
                                         tool.get("input_schema")))  # fmt: skip
        else:
            for fn in tool.get("functionDeclarations") or tool.get("function_declarations") or ():
                if isinstance(fn, Mapping):
                    schema = next(
                        (fn[k] for k in _GOOGLE_SCHEMA_KEYS if fn.get(k) is not None), None
                    )
                    found.append(_definition(fn.get("name"), fn.get("description"), schema))
    return [d for d in found if d is not None]


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


def _event_data(raw: bytes) -> list[Mapping[str, Any]]:
    """The JSON objects a whole SSE body carries, in order (others skipped)."""
    parser = SSEParser(len(raw) + 1)
    out: list[Mapping[str, Any]] = []
    for event in [*parser.feed(raw), *parser.close()]:
        try:
            data = json.loads(event.data)
        except ValueError:
            continue
        if isinstance(data, Mapping):
            out.append(data)
    return out


def streamed_body(dialect: str, raw: bytes) -> Any:
    """A streamed response's text, as the whole body of that dialect would carry it."""
    events = _event_data(raw)
    if dialect == "google.genai":  # each event a GenerateContentResponse: join their texts
        parts: list[dict[str, Any]] = []
        for data in events:
            candidates = data.get("candidates") or [{}]
            first = candidates[0] if isinstance(candidates[0], Mapping) else {}
            for part in (first.get("content") or {}).get("parts") or ():
                if not isinstance(part, Mapping) or not isinstance(part.get("text"), str):
                    continue
                thought = bool(part.get("thought"))
                if parts and parts[-1]["thought"] == thought:
                    parts[-1]["text"] += part["text"]
                else:
                    parts.append({"text": part["text"], "thought": thought})
        return {"candidates": [{"content": {"parts": parts}}]} if parts else None
    pieces: list[str] = []
    for data in events:
        piece: Any = None
        if dialect == "openai.chat":
            choices = data.get("choices") or [{}]
            first = choices[0] if isinstance(choices[0], Mapping) else {}
            if first.get("index", 0) == 0:
                delta = first.get("delta") or {}
                piece = delta.get("content") if isinstance(delta, Mapping) else None
        elif dialect == "openai.responses":
            piece = data.get("delta") if data.get("type") == "response.output_text.delta" else None
        else:
            delta = data.get("delta") or {}
            text = isinstance(delta, Mapping) and delta.get("type") == "text_delta"
            piece = delta.get("text") if text and isinstance(delta, Mapping) else None
        if isinstance(piece, str):
            pieces.append(piece)
    if not pieces:
        return None
    text = "".join(pieces)
    if dialect == "openai.chat":
        return {"choices": [{"message": {"content": text}}]}
    if dialect == "openai.responses":
        return {"output": [{"type": "message", "content": [{"type": "output_text", "text": text}]}]}
    return {"content": [{"type": "text", "text": text}]}


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
