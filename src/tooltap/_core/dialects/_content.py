"""What the content mappings of every dialect share: semconv message and part shapes.

A mapping turns a request body into ``[{role, parts}]`` messages, or a whole response
body into text parts, in the GenAI "parts" format; all of them are pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._json import loads_str

__all__ = [
    "Message",
    "Part",
    "definition",
    "function_definitions",
    "json_arguments",
    "text_parts",
    "tools_of",
]

Message = dict[str, Any]
Part = dict[str, Any]


def json_arguments(raw: Any) -> Any:
    """Arguments sent as JSON text, decoded; anything else as it is."""
    if isinstance(raw, str):
        try:
            return loads_str(raw)
        except ValueError:
            return raw
    return raw


def text_parts(content: Any) -> list[Part]:
    """A text, or the text and reasoning blocks of a content list, as parts."""
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


def tools_of(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The object items of a request's ``tools`` list."""
    tools = body.get("tools")
    return [t for t in tools if isinstance(t, Mapping)] if isinstance(tools, list) else []


def definition(name: Any, description: Any, parameters: Any) -> dict[str, Any] | None:
    """One function tool as ``gen_ai.tool.definitions`` lists it (None without a name)."""
    if not isinstance(name, str):
        return None
    out: dict[str, Any] = {"type": "function", "name": name}
    if isinstance(description, str):
        out["description"] = description
    if parameters is not None:
        out["parameters"] = parameters
    return out


def function_definitions(body: Mapping[str, Any]) -> list[dict[str, Any] | None]:
    """``tool_definitions`` of OpenAI-shaped ``tools`` (``{"function": {name, description,
    parameters}}``; Cohere and Ollama need no ``"type": "function"``)."""
    return [
        definition(fn.get("name"), fn.get("description"), fn.get("parameters"))
        for tool in tools_of(body)
        if isinstance(fn := tool.get("function"), Mapping)
    ]
