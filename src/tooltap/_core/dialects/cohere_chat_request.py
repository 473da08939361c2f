"""Cohere v2 Chat, request side: read a request, answer calls, declare tools.

Tools are OpenAI-shaped (``{"type": "function", "function": {name, parameters}}``). A
result is ``{"role": "tool", "tool_call_id", "content": [content blocks]}`` (a message);
an error result is the JSON text ``{"error": <output>}`` (Cohere has no error flag).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..model import ToolCall
from . import cohere_chat
from ._base import Dialect, always, any_body, no_retrieve, unchanged
from ._content import Message, Part, function_definitions, json_arguments
from ._openai_request import result_is_error, result_output
from ._request import (
    Reader,
    assistant,
    function_declarations,
    is_map,
    items,
    one_message_each,
)

__all__ = [
    "ENTRY",
    "REQUEST_PARAMS",
    "TOOL_NAME_RULE",
    "input_messages",
    "output_text",
    "provider_name",
    "read_request",
    "result_message",
    "streamed_body",
]

#: Cohere's tool names: letters, digits and underscores (its tool-use docs).
TOOL_NAME_RULE: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
REQUEST_PARAMS: Final = {
    "max_tokens": (("max_tokens",),),
    "temperature": (("temperature",),),
    "top_p": (("p",),),
    "top_k": (("k",),),
    "seed": (("seed",),),
    "stop_sequences": (("stop_sequences",),),
}
_CHOICES: Final = {"REQUIRED": "any", "NONE": "none"}


def read_request(r: Reader, body: Mapping[str, Any]) -> None:
    """Declared ``tools``, ``tool_choice``, and the ``tool`` messages after the last model turn."""
    for i, tool in enumerate(items(body.get("tools"), r, "tools")):
        spec = tool.get("function")
        if is_map(spec):
            r.tool(spec.get("name"), spec.get("parameters"), f"tools[{i}]")
        else:
            r.problem(f"tools[{i}]: no 'function' object")
    choice = body.get("tool_choice")
    r.tool_choice = _CHOICES.get(choice) if isinstance(choice, str) else None
    for at, msg, model in r.history(body.get("messages"), "messages", assistant):
        if model:
            found = []
            for tc in items(msg.get("tool_calls"), r, "tool_calls"):
                fn = tc.get("function")
                if is_map(fn):
                    found.append((tc.get("id"), fn.get("name"), fn.get("arguments")))
            r.model_turn(at, found, msg.get("content"))
            continue
        if msg.get("role") != "tool":
            continue
        cid = msg.get("tool_call_id")
        content = msg.get("content")
        turn, call = r.answered(cid)
        r.result(cid, result_is_error(_text(content)), content, call, at=at, turn=turn)


def _text(content: Any) -> Any:
    """A result's content as the text ``result_is_error`` reads (document data joined)."""
    if not isinstance(content, list):
        return content
    pieces: list[str] = []
    for block in content:
        if not is_map(block):
            continue
        if isinstance(block.get("text"), str):
            pieces.append(block["text"])
        document = block.get("document")
        if is_map(document) and isinstance(document.get("data"), str):
            pieces.append(document["data"])
    return "".join(pieces)


def provider_name(host: str | None, path: str | None) -> str:
    """``gen_ai.provider.name``, whatever the host."""
    return "cohere"


def result_message(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    """The ``tool`` message answering ``call``: one ``document`` block holding the output."""
    data = result_output(output, is_error)
    return {
        "role": "tool",
        "tool_call_id": call.call_id,
        "content": [{"type": "document", "document": {"data": data}}],
    }


def _content_parts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [{"type": "text", "content": content}] if content else []
    parts: list[Part] = []
    for block in content if isinstance(content, list) else ():
        if is_map(block) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append({"type": "text", "content": block["text"]})
        elif is_map(block) and block.get("type") == "thinking":
            thinking = block.get("thinking")
            if isinstance(thinking, str):
                parts.append({"type": "reasoning", "content": thinking})
    return parts


def input_messages(body: Mapping[str, Any]) -> list[Message]:
    """``messages`` as semconv messages: text, tool plans, tool calls and results."""
    out: list[Message] = []
    for msg in body.get("messages") or ():
        if not is_map(msg):
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
        parts = _content_parts(msg.get("content"))
        if isinstance(msg.get("tool_plan"), str) and msg["tool_plan"]:
            parts.append({"type": "reasoning", "content": msg["tool_plan"]})
        for call in msg.get("tool_calls") or ():
            fn = call.get("function") if is_map(call) else None
            if is_map(fn) and is_map(call):
                parts.append(
                    {
                        "type": "tool_call",
                        "id": call.get("id"),
                        "name": fn.get("name"),
                        "arguments": json_arguments(fn.get("arguments")),
                    }
                )
        out.append({"role": role, "parts": parts})
    return out


def output_text(body: Mapping[str, Any]) -> list[Part]:
    """The text and thinking blocks of ``message.content``, and the tool plan."""
    message = body.get("message")
    if not is_map(message):
        return []
    parts = _content_parts(message.get("content"))
    if isinstance(message.get("tool_plan"), str) and message["tool_plan"]:
        parts.append({"type": "reasoning", "content": message["tool_plan"]})
    return parts


def streamed_body(events: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A stream's text (``content-delta`` events) and tool plan, as a whole body."""
    text: list[str] = []
    plan: list[str] = []
    for data in events:
        delta = data.get("delta")
        message = delta.get("message") if is_map(delta) else None
        if not is_map(message):
            continue
        content = message.get("content")
        if (
            data.get("type") == "content-delta"
            and is_map(content)
            and isinstance(content.get("text"), str)
        ):
            text.append(content["text"])
        if data.get("type") == "tool-plan-delta" and isinstance(message.get("tool_plan"), str):
            plan.append(message["tool_plan"])
    if not text and not plan:
        return None
    message_body: dict[str, Any] = {"content": [{"type": "text", "text": "".join(text)}]}
    if plan:
        message_body["tool_plan"] = "".join(plan)
    return {"message": message_body}


#: The Cohere v2 chat entry of the dialect table.
ENTRY: Final = Dialect(
    name=cohere_chat.DIALECT,
    provider=cohere_chat.PROVIDER,
    path_suffixes=("/v2/chat",),
    claims_path=always,
    claims_body=any_body,
    body_keys=((b'"messages"',), (b'"model"',)),
    body_streams=True,
    from_path=unchanged,
    retrieves=no_retrieve,
    reducer=cohere_chat.Reducer,
    parse_body=cohere_chat.parse_body,
    read_request=read_request,
    result_message=result_message,
    result_messages=one_message_each,
    declarations=function_declarations,
    input_messages=input_messages,
    output_text=output_text,
    streamed_body=streamed_body,
    tool_definitions=function_definitions,
    request_params=REQUEST_PARAMS,
    provider_name=provider_name,
    provider_untold=None,
    operation_name="chat",
    tool_name_rule=TOOL_NAME_RULE,
    finish_reasons={
        "complete": "stop",
        "stop_sequence": "stop",
        "max_tokens": "length",
        "tool_call": "tool_call",
        "error": "error",
    },
    error_tokens={},  # its error bodies hold a message only: the status classes them
    retry_count_header=None,
)
