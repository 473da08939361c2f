"""What the content mappings of every dialect share: semconv message and part shapes.

A mapping turns a request body into ``[{role, parts}]`` messages, or a whole response
body into text parts, in the GenAI "parts" format; all of them are pure functions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["Message", "Part", "json_arguments", "text_parts"]

Message = dict[str, Any]
Part = dict[str, Any]


def json_arguments(raw: Any) -> Any:
    """Arguments sent as JSON text, decoded; anything else as it is."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
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
