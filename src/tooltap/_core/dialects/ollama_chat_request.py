"""Ollama's native chat API, request side: read a request, answer calls, declare tools.

Tools are OpenAI-shaped (``{"type": "function", "function": {name, parameters}}``). Calls
have no ids: a result is ``{"role": "tool", "content": str, "tool_name"}`` (a message),
and the k-th result naming a tool answers the k-th call of that tool in the model turn.
An error result is the JSON text ``{"error": <output>}`` (Ollama has no error flag).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..model import ToolCall
from . import ollama_chat
from ._base import Dialect, always, any_body, no_retrieve, unchanged
from ._content import (
    Message,
    Part,
    function_definitions,
    json_arguments,
    text_parts,
)
from ._openai_request import result_is_error, result_output
from ._request import (
    Call,
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

#: Ollama checks no tool name: any name without control characters, up to 256.
TOOL_NAME_RULE: Final = re.compile(r"[^\x00-\x1f\x7f]{1,256}")
#: ``gen_ai.request.<suffix>`` -> where the body keeps it (``options``, Ollama's names).
REQUEST_PARAMS: Final = {
    "max_tokens": (("options", "num_predict"),),
    "temperature": (("options", "temperature"),),
    "top_p": (("options", "top_p"),),
    "top_k": (("options", "top_k"),),
    "seed": (("options", "seed"),),
    "stop_sequences": (("options", "stop"),),
}


def read_request(r: Reader, body: Mapping[str, Any]) -> None:
    """Declared ``tools`` and the ``tool`` messages after the last assistant message."""
    for i, tool in enumerate(items(body.get("tools"), r, "tools")):
        spec = tool.get("function")
        if is_map(spec):
            r.tool(spec.get("name"), spec.get("parameters"), f"tools[{i}]")
        else:
            r.problem(f"tools[{i}]: no 'function' object")
    calls: list[tuple[Any, Any]] = []  # (name, arguments) of the latest model turn, in order
    turn: int | None = None
    seen: dict[str, int] = {}
    for at, msg, model in r.history(body.get("messages"), "messages", assistant):
        if model:
            calls = []
            for tc in items(msg.get("tool_calls"), r, "tool_calls"):
                fn = tc.get("function")
                if is_map(fn):
                    calls.append((fn.get("name"), fn.get("arguments")))
            r.model_turn(at, [(None, name, args) for name, args in calls], msg.get("content"))
            turn, seen = at, {}
            continue
        if msg.get("role") != "tool":
            continue
        name = msg.get("tool_name") or msg.get("name")
        content = msg.get("content")
        k = seen.get(str(name), 0)
        seen[str(name)] = k + 1
        answered: Call | None = None
        same = [(p, c) for p, c in enumerate(calls) if c[0] == name]
        if k < len(same):
            position, (call_name, args) = same[k]
            answered = (position, call_name, args)
        r.result(None, result_is_error(content), content, answered, name, at=at, turn=turn)


def provider_name(host: str | None, path: str | None) -> str:
    """``gen_ai.provider.name``, whatever the host."""
    return "ollama"


def result_message(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    """The ``tool`` message answering ``call`` (named: Ollama's calls have no ids)."""
    return {"role": "tool", "content": result_output(output, is_error), "tool_name": call.name}


def input_messages(body: Mapping[str, Any]) -> list[Message]:
    """``messages`` as semconv messages: text, thinking, tool calls, tool results."""
    out: list[Message] = []
    for msg in body.get("messages") or ():
        if not is_map(msg):
            continue
        role = str(msg.get("role", "user"))
        if role == "tool":
            part = {"type": "tool_call_response", "id": None, "response": msg.get("content")}
            out.append({"role": "tool", "parts": [part]})
            continue
        out.append({"role": role, "parts": _parts(msg)})
    return out


def _parts(msg: Mapping[str, Any]) -> list[Part]:
    parts: list[Part] = []
    if isinstance(msg.get("thinking"), str) and msg["thinking"]:
        parts.append({"type": "reasoning", "content": msg["thinking"]})
    content = msg.get("content")
    if isinstance(content, str) and content:
        parts += text_parts(content)
    for call in msg.get("tool_calls") or ():
        fn = call.get("function") if is_map(call) else None
        if is_map(fn):
            parts.append(
                {
                    "type": "tool_call",
                    "id": None,
                    "name": fn.get("name"),
                    "arguments": json_arguments(fn.get("arguments")),
                }
            )
    return parts


def output_text(body: Mapping[str, Any]) -> list[Part]:
    """The text and thinking of ``message``."""
    message = body.get("message")
    if not is_map(message):
        return []
    return [p for p in _parts(message) if p["type"] in ("text", "reasoning")]


def streamed_body(events: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A stream's text (each line's ``message.content``) as a whole body would carry it."""
    text: list[str] = []
    thinking: list[str] = []
    for data in events:
        message = data.get("message")
        if not is_map(message):
            continue
        if isinstance(message.get("content"), str):
            text.append(message["content"])
        if isinstance(message.get("thinking"), str):
            thinking.append(message["thinking"])
    if not any(text) and not any(thinking):
        return None
    return {"message": {"content": "".join(text), "thinking": "".join(thinking)}}


#: The Ollama chat entry of the dialect table.
ENTRY: Final = Dialect(
    name=ollama_chat.DIALECT,
    provider=ollama_chat.PROVIDER,
    path_suffixes=("/api/chat",),
    claims_path=always,
    claims_body=any_body,
    body_keys=((b'"messages"',), (b'"model"',)),
    body_streams=True,
    from_path=unchanged,
    retrieves=no_retrieve,
    reducer=ollama_chat.Reducer,
    parse_body=ollama_chat.parse_body,
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
    finish_reasons={"stop": "stop", "length": "length"},
    error_tokens={},  # its error bodies hold a message only: the status classes them
    retry_count_header=None,
)
