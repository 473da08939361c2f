"""OpenAI Responses, request side: read a request, answer calls, declare tools.

``GET .../responses/{id}`` reads a stored response back (``retrieves``): a background
response polled, or its stream resumed (``?stream=true&starting_after=N``). Only ids
that are OpenAI's (``resp_``) are taken, so that another API's ``/responses/42`` is not.

A result is ``{"type": "function_call_output", "call_id", "output": str}``; an error
result is the JSON text ``{"error": <output>}`` (Responses has no error flag).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..model import RequestInfo, ToolCall
from . import openai_responses
from ._base import STAINLESS_RETRY_COUNT, Dialect, always, any_body
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
from ._request import DeclaredTool, Reader, described, items

__all__ = [
    "ENTRY",
    "REQUEST_PARAMS",
    "declarations",
    "input_messages",
    "output_text",
    "read_request",
    "result_message",
    "result_messages",
    "retrieves",
    "streamed_body",
    "tool_definitions",
]

#: ``gen_ai.request.<suffix>`` -> where the body keeps it (first found).
REQUEST_PARAMS: Final = {
    "max_tokens": (("max_output_tokens",),),
    "temperature": (("temperature",),),
    "top_p": (("top_p",),),
}
#: Input items that declare tools beside the top-level ``tools``.
_TOOL_ITEMS: Final = frozenset({"additional_tools", "tool_search_output"})
#: Input items the model produced (a model turn), as opposed to the app's.
_OUTPUT_ITEMS: Final = frozenset(
    {"function_call", "custom_tool_call", "reasoning", "web_search_call", "file_search_call",
     "computer_call", "code_interpreter_call", "image_generation_call", "mcp_call",
     "local_shell_call"}
)  # fmt: skip


def _tools(r: Reader, tools: Any, where: str) -> None:
    """Function and custom tools of a tools list, those grouped in a ``namespace`` included
    (a call names the tool itself, and carries the namespace beside it)."""
    for i, tool in enumerate(items(tools, r, where)):
        kind = tool.get("type")
        if kind == "function":
            r.tool(tool.get("name"), tool.get("parameters"), f"{where}[{i}]")
        elif kind == "custom":
            r.tool(tool.get("name"), None, f"{where}[{i}]")
        elif kind == "namespace":
            _tools(r, tool.get("tools"), f"{where}[{i}].tools")


def read_request(r: Reader, body: Mapping[str, Any]) -> None:
    """Declared ``tools`` (also mid-input), ``tool_choice``, new ``*_output`` items."""
    _tools(r, body.get("tools"), "tools")
    r.tool_choice = openai_choice(body.get("tool_choice"))
    values = body.get("input")
    system = body.get("instructions")
    if isinstance(values, str):
        r.history([{"role": "user", "content": values}], "input", _model_output, system)
        return
    if isinstance(values, list):
        for i, item in enumerate(values):  # tools declared mid-input: a cheap look at each
            if (type(item) is dict or isinstance(item, Mapping)) and item.get(
                "type"
            ) in _TOOL_ITEMS:
                _tools(r, item.get("tools"), f"input[{i}].tools")
    run: list[tuple[Any, Any, Any]] = []
    said: list[Any] = []
    start = -1
    for at, item, model in r.history(values, "input", _model_output, system, runs=True):
        if model:  # a model turn: a run of output items
            if start < 0:
                start = at
            if item.get("type") in ("function_call", "custom_tool_call"):
                run.append((item.get("call_id"), item.get("name"),
                            item.get("arguments", item.get("input"))))  # fmt: skip
            else:
                said.append(item.get("content"))
            continue
        if start >= 0:
            r.model_turn(start, run, said)
            run, said, start = [], [], -1
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            cid = item.get("call_id")
            output = item.get("output")
            turn, call = r.answered(cid)
            r.result(cid, result_is_error(output), output, call, at=at, turn=turn)
    if start >= 0:
        r.model_turn(start, run, said)


def _model_output(item: Mapping[str, Any]) -> bool:
    kind = item.get("type")
    return kind in _OUTPUT_ITEMS or (kind in (None, "message") and item.get("role") == "assistant")


def result_message(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    """The ``function_call_output`` item answering ``call``."""
    return {
        "type": "function_call_output",
        "call_id": call.call_id,
        "output": result_output(output, is_error),
    }


def result_messages(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One input item per result."""
    return results


def declarations(tools: Sequence[DeclaredTool]) -> list[dict[str, Any]]:
    """``tools``: one ``{"type": "function", ...}`` per tool, not strict."""
    return [
        {"type": "function", **described(t, parameters=t.schema), "strict": False} for t in tools
    ]


def input_messages(body: Mapping[str, Any]) -> list[Message]:
    """``input`` as semconv messages: text, function calls, function call outputs."""
    values = body.get("input")
    if isinstance(values, str):
        return [{"role": "user", "parts": [{"type": "text", "content": values}]}]
    out: list[Message] = []
    for item in values or ():
        if not (type(item) is dict or isinstance(item, Mapping)):
            continue
        kind = item.get("type")
        if kind == "function_call":
            part = {
                "type": "tool_call",
                "id": item.get("call_id"),
                "name": item.get("name"),
                "arguments": json_arguments(item.get("arguments")),
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
            out.append({"role": str(item["role"]), "parts": text_parts(item.get("content"))})
    return out


def output_text(body: Mapping[str, Any]) -> list[Part]:
    """The text of the ``message`` output items."""
    return [
        p
        for item in body.get("output") or ()
        if (type(item) is dict or isinstance(item, Mapping)) and item.get("type") == "message"
        for p in text_parts(item.get("content"))
    ]


def streamed_body(events: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A stream's text (its ``output_text`` deltas) as a whole body would carry it."""
    pieces = [
        d["delta"]
        for d in events
        if d.get("type") == "response.output_text.delta" and isinstance(d.get("delta"), str)
    ]
    if not pieces:
        return None
    text = {"type": "output_text", "text": "".join(pieces)}
    return {"output": [{"type": "message", "content": [text]}]}


def tool_definitions(body: Mapping[str, Any]) -> list[dict[str, Any] | None]:
    """The function tools the request declares (``gen_ai.tool.definitions``)."""
    return [
        definition(tool.get("name"), tool.get("description"), tool.get("parameters"))
        for tool in tools_of(body)
        if tool.get("type") == "function"
    ]


def retrieves(path: str) -> str | None:
    """The response id of ``GET .../responses/{id}`` (query removed), or None."""
    _, sep, response_id = path.rstrip("/").rpartition("/responses/")
    if not sep or not response_id.startswith("resp_") or "/" in response_id:
        return None
    return response_id


def from_path(info: RequestInfo, path: str) -> RequestInfo:
    """A ``GET`` of a stored response: which one it reads back."""
    if not path.endswith("/responses") and (response_id := retrieves(path)) is not None:
        return dataclasses.replace(info, retrieved=response_id)
    return info


#: The Responses entry of the dialect table.
ENTRY: Final = Dialect(
    name=openai_responses.DIALECT,
    provider=PROVIDER,
    path_suffixes=("/responses",),
    claims_path=always,
    claims_body=any_body,
    body_keys=((b'"model"', b'"input"'),),
    body_streams=True,
    from_path=from_path,
    retrieves=retrieves,
    reducer=openai_responses.Reducer,
    parse_body=openai_responses.parse_body,
    read_request=read_request,
    result_message=result_message,
    result_messages=result_messages,
    declarations=declarations,
    input_messages=input_messages,
    output_text=output_text,
    streamed_body=streamed_body,
    tool_definitions=tool_definitions,
    request_params=REQUEST_PARAMS,
    provider_name=openai_provider,
    provider_untold=None,
    operation_name="chat",
    tool_name_rule=TOOL_NAME_RULE,
    # ``status`` and ``incomplete_details.reason`` of a response
    finish_reasons={
        "completed": "stop",
        "incomplete": "length",
        "max_output_tokens": "length",
        "failed": "error",
    },
    error_tokens=ERROR_TOKENS,
    retry_count_header=STAINLESS_RETRY_COUNT,
)
