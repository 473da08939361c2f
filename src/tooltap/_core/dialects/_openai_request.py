"""What the request sides of the two OpenAI dialects share: tool_choice, result errors."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from .._json import loads_str
from ._request import result_text

__all__ = [
    "ERROR_TOKENS",
    "TOOL_NAME_RULE",
    "openai_choice",
    "openai_provider",
    "result_is_error",
    "result_output",
]

#: OpenAI (Chat and Responses): "a-z, A-Z, 0-9, underscores and dashes, max 64".
TOOL_NAME_RULE: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: OpenAI ``error.code`` / ``error.type`` (and Azure's ``innererror.code``) -> error_type.
ERROR_TOKENS: Final = {
    "rate_limit_exceeded": "rate_limited",
    "insufficient_quota": "insufficient_balance",
    "content_filter": "content_filter",
    "content_policy_violation": "content_filter",
    "responsibleaipolicyviolation": "content_filter",
    "invalid_api_key": "auth_error",
    "model_not_found": "not_found",
    "server_error": "server_error",
}


def openai_provider(host: str | None, path: str | None) -> str:
    """``gen_ai.provider.name`` of the OpenAI dialects, whatever the host."""
    return "openai"


def result_output(output: Any, is_error: bool) -> str:
    """OpenAI has no error flag: an error result is the JSON text ``{"error": <output>}``."""
    if is_error:
        return json.dumps({"error": output}, ensure_ascii=False, default=str)
    return result_text(output)


def result_is_error(content: Any) -> bool:
    """OpenAI results have no error flag: tooltap marks errors as ``{"error": ...}`` text."""
    if isinstance(content, list):  # content parts
        content = "".join(
            p.get("text", "")
            for p in content
            if (type(p) is dict or isinstance(p, Mapping))
            and p.get("type") in ("text", "input_text", "output_text")
        )
    if not isinstance(content, str) or not content.startswith('{"error"'):
        return False
    try:
        value = loads_str(content)
    except ValueError:
        return False
    return isinstance(value, dict) and list(value) == ["error"]


def openai_choice(choice: Any) -> str | None:
    """Chat and Responses ``tool_choice`` (and legacy ``function_call``), normalized."""
    if isinstance(choice, str):
        return {"auto": "auto", "none": "none", "required": "any"}.get(choice)
    if not (type(choice) is dict or isinstance(choice, Mapping)):
        return None
    kind = choice.get("type")
    if kind == "allowed_tools":
        inner = choice.get("allowed_tools", choice)
        mode = inner.get("mode") if (type(inner) is dict or isinstance(inner, Mapping)) else None
        tools = inner.get("tools") if (type(inner) is dict or isinstance(inner, Mapping)) else None
        if mode == "required" and isinstance(tools, list) and len(tools) == 1:
            only = tools[0]
            return (
                openai_choice(only) if (type(only) is dict or isinstance(only, Mapping)) else None
            ) or "any"
        return {"auto": "auto", "required": "any"}.get(str(mode))
    fn = choice.get(kind) if isinstance(kind, str) else None
    name = fn.get("name") if (type(fn) is dict or isinstance(fn, Mapping)) else choice.get("name")
    if isinstance(name, str):
        return f"tool:{name}"
    if isinstance(kind, str) and kind not in ("function", "custom"):
        return f"tool:{kind}"  # a forced hosted tool (web_search_preview...)
    return None
