"""OpenAI Chat Completions, request side: read a request, answer calls, declare tools.

A result is ``{"role": "tool", "tool_call_id", "content": str}`` (a message); an error
result is the JSON text ``{"error": <output>}`` (Chat has no error flag).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..model import ToolCall
from . import openai_chat
from ._base import STAINLESS_RETRY_COUNT, Dialect, always, any_body, no_retrieve, unchanged
from ._content import Message, Part, definition, json_arguments, text_parts, tools_of
from ._openai import PROVIDER
from ._openai_request import (
    ERROR_TOKENS,
    TOOL_NAME_RULE,
    openai_choice,
    openai_provider,
    result_is_error,
    result_output,
)
from ._request import (
    Call,
    Reader,
    assistant,
    function_declarations,
    items,
    one_message_each,
)

__all__ = [
    "ENTRY",
    "REQUEST_PARAMS",
    "input_messages",
    "output_text",
    "read_request",
    "result_message",
    "streamed_body",
    "tool_definitions",
]

#: ``gen_ai.request.<suffix>`` -> where the body keeps it (first found).
REQUEST_PARAMS: Final = {
    "max_tokens": (("max_completion_tokens",), ("max_tokens",)),
    "temperature": (("temperature",),),
    "top_p": (("top_p",),),
    "stop_sequences": (("stop",),),
    "seed": (("seed",),),
}


def read_request(r: Reader, body: Mapping[str, Any]) -> None:
    """Declared ``tools`` (and legacy ``functions``), ``tool_choice``, new ``tool`` messages."""
    for i, tool in enumerate(items(body.get("tools"), r, "tools")):
        kind = tool.get("type", "function")
        spec = tool.get(kind)
        if kind in ("function", "custom") and (type(spec) is dict or isinstance(spec, Mapping)):
            schema = spec.get("parameters") if kind == "function" else None
            r.tool(spec.get("name"), schema, f"tools[{i}]")
        elif kind in ("function", "custom"):
            r.problem(f"tools[{i}]: no {kind!r} object")
    for i, fn in enumerate(items(body.get("functions"), r, "functions")):
        r.tool(fn.get("name"), fn.get("parameters"), f"functions[{i}]")
    choice = body.get("tool_choice", body.get("function_call"))
    r.tool_choice = openai_choice(choice)
    legacy: Call | None = None
    legacy_turn: int | None = None
    for at, msg, model in r.history(body.get("messages"), "messages", assistant):
        if model:
            found = []
            for tc in items(msg.get("tool_calls"), r, "tool_calls"):
                spec = tc.get("function") or tc.get("custom")
                if type(spec) is dict or isinstance(spec, Mapping):
                    found.append((tc.get("id"), spec.get("name"), spec.get("arguments")))
            r.model_turn(at, found, msg.get("content"))
            legacy_call = msg.get("function_call")
            if type(legacy_call) is dict or isinstance(legacy_call, Mapping):
                legacy = (0, legacy_call.get("name"), legacy_call.get("arguments"))
                legacy_turn = at
            continue
        role = msg.get("role")
        content = msg.get("content")
        if role == "tool":
            cid = msg.get("tool_call_id")
            turn, call = r.answered(cid)
            r.result(cid, result_is_error(content), content, call, msg.get("name"),
                     at=at, turn=turn)  # fmt: skip
        elif role == "function":  # legacy function-calling result
            r.result(None, result_is_error(content), content, legacy, msg.get("name"),
                     at=at, turn=legacy_turn)  # fmt: skip


def result_message(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    """The ``tool`` message answering ``call``."""
    return {
        "role": "tool",
        "tool_call_id": call.call_id,
        "content": result_output(output, is_error),
    }


def input_messages(body: Mapping[str, Any]) -> list[Message]:
    """``messages`` as semconv messages: text, tool calls, tool results."""
    out: list[Message] = []
    for msg in body.get("messages") or ():
        if not (type(msg) is dict or isinstance(msg, Mapping)):
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
        parts = text_parts(msg.get("content"))
        for call in msg.get("tool_calls") or ():
            fn = (
                call.get("function") or {}
                if (type(call) is dict or isinstance(call, Mapping))
                else {}
            )
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
    """The text of the first choice's message."""
    choices = body.get("choices") or [{}]
    message = (
        choices[0].get("message") or {}
        if (type(choices[0]) is dict or isinstance(choices[0], Mapping))
        else {}
    )
    return text_parts(message.get("content"))


def streamed_body(events: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A stream's text (choice 0's content deltas) as a whole body would carry it."""
    pieces: list[str] = []
    for data in events:
        choices = data.get("choices") or [{}]
        first = choices[0] if (type(choices[0]) is dict or isinstance(choices[0], Mapping)) else {}
        delta = first.get("delta") if first.get("index", 0) == 0 else None
        piece = (
            delta.get("content") if (type(delta) is dict or isinstance(delta, Mapping)) else None
        )
        if isinstance(piece, str):
            pieces.append(piece)
    return {"choices": [{"message": {"content": "".join(pieces)}}]} if pieces else None


def tool_definitions(body: Mapping[str, Any]) -> list[dict[str, Any] | None]:
    """The function tools the request declares (``gen_ai.tool.definitions``)."""
    return [
        definition(fn.get("name"), fn.get("description"), fn.get("parameters"))
        for tool in tools_of(body)
        if tool.get("type") == "function" and isinstance(fn := tool.get("function"), Mapping)
    ]


#: The Chat Completions entry of the dialect table.
ENTRY: Final = Dialect(
    name=openai_chat.DIALECT,
    provider=PROVIDER,
    path_suffixes=("/chat/completions",),
    claims_path=always,
    claims_body=any_body,
    body_keys=((b'"messages"',),),
    body_streams=True,
    from_path=unchanged,
    retrieves=no_retrieve,
    reducer=openai_chat.Reducer,
    parse_body=openai_chat.parse_body,
    read_request=read_request,
    result_message=result_message,
    result_messages=one_message_each,
    declarations=function_declarations,
    input_messages=input_messages,
    output_text=output_text,
    streamed_body=streamed_body,
    tool_definitions=tool_definitions,
    request_params=REQUEST_PARAMS,
    provider_name=openai_provider,
    provider_untold=None,
    operation_name="chat",
    tool_name_rule=TOOL_NAME_RULE,
    finish_reasons={"tool_calls": "tool_call", "function_call": "tool_call"},
    error_tokens=ERROR_TOKENS,
    retry_count_header=STAINLESS_RETRY_COUNT,
)
