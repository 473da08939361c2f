"""Anthropic Messages, request side: read a request, answer calls, declare tools.

A result is ``{"type": "tool_result", "tool_use_id", "content", "is_error"}``, a content
BLOCK: the results of one turn go in ONE ``role: "user"`` message (``result_messages``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Final
from urllib.parse import unquote

from ..model import RequestInfo, ToolCall
from . import anthropic
from ._base import STAINLESS_RETRY_COUNT, Dialect, no_retrieve
from ._content import Message, Part, definition, text_parts, tools_of
from ._request import DeclaredTool, Reader, assistant, described, items, result_text

__all__ = [
    "ENTRY",
    "REQUEST_PARAMS",
    "TOOL_NAME_RULE",
    "claims_path",
    "declarations",
    "from_path",
    "input_messages",
    "output_text",
    "provider_name",
    "read_request",
    "result_message",
    "result_messages",
    "streamed_body",
    "tool_definitions",
]

#: ``^[a-zA-Z0-9_-]{1,64}$`` (Anthropic's tool-use docs; some gateways allow 128, we keep
#: the documented 64).
TOOL_NAME_RULE: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: ``gen_ai.request.<suffix>`` -> where the body keeps it (first found).
REQUEST_PARAMS: Final = {
    "max_tokens": (("max_tokens",),),
    "temperature": (("temperature",),),
    "top_p": (("top_p",),),
    "top_k": (("top_k",),),
    "stop_sequences": (("stop_sequences",),),
}
# Anthropic-defined tools the CLIENT executes (the model calls them by name); other
# typed tools (web_search_*, web_fetch_*, code_execution_*...) run on the server.
_CLIENT_TYPES: Final = ("bash_", "text_editor_", "computer_", "memory_")
# Anthropic toolsets: one nameless ``tools`` entry declaring a family of client tools,
# each called by its member name; ``configs.<member>.enabled`` turns a member on or off.
# Per type: (members, members off unless enabled), as anthropic's SDK types list them.
_TOOLSETS: Final[dict[str, tuple[tuple[str, ...], frozenset[str]]]] = {
    "computer_toolset_20260801": (
        (
            "cursor_position", "double_click", "hold_key", "key", "left_click",
            "left_click_drag", "left_mouse_down", "left_mouse_up", "middle_click",
            "mouse_move", "right_click", "screenshot", "scroll", "triple_click", "type",
            "wait", "zoom",
        ),
        frozenset(),
    ),
    "browser_toolset_20260801": (
        (
            "close_tab", "double_click", "file_upload", "find", "form_input",
            "get_page_text", "hold_key", "hover", "javascript_exec", "key", "left_click",
            "left_click_drag", "left_mouse_down", "left_mouse_up", "list_tabs",
            "middle_click", "mouse_move", "navigate", "new_tab", "read_console",
            "read_network", "read_page", "right_click", "screenshot", "scroll", "scroll_to",
            "switch_tab", "triple_click", "type", "wait", "zoom",
        ),
        frozenset({"file_upload", "read_console", "read_network", "javascript_exec"}),
    ),
}  # fmt: skip


def _tool(r: Reader, tool: Mapping[str, Any], where: str) -> None:
    """One Anthropic tool definition (a ``tools`` entry, or a ``tool_addition``'s)."""
    kind = tool.get("type")
    toolset = _TOOLSETS.get(kind) if isinstance(kind, str) else None
    if toolset is not None:
        members, off = toolset
        configs = tool.get("configs")
        configs = configs if (type(configs) is dict or isinstance(configs, Mapping)) else {}
        for member in members:
            config = configs.get(member)
            enabled = (
                config.get("enabled")
                if (type(config) is dict or isinstance(config, Mapping))
                else None
            )
            if enabled is True or (enabled is None and member not in off):
                r.member(str(kind).split("_toolset", 1)[0], member)  # schema built into the model
    elif kind in (None, "custom"):
        r.tool(tool.get("name"), tool.get("input_schema"), where)
    elif isinstance(kind, str) and kind.startswith(_CLIENT_TYPES):
        r.tool(tool.get("name"), None, where)  # schema built into the model


def _addition(r: Reader, block: Mapping[str, Any], where: str) -> None:
    """A ``tool_addition`` block: a tool defined inline is declared from there on.

    A reference (``tool_reference``, MCP references) names a tool already declared
    in ``tools`` or by an earlier addition, or one the server runs.
    """
    tool = block.get("tool")
    if (type(tool) is dict or isinstance(tool, Mapping)) and tool.get("type") == "tool_definition":
        definition = tool.get("definition")
        if type(definition) is dict or isinstance(definition, Mapping):
            _tool(r, definition, where)
        else:
            r.problem(f"{where}: tool_definition without a definition object")


def read_request(r: Reader, body: Mapping[str, Any]) -> None:
    """Declared ``tools`` (also ``tool_addition`` blocks), ``tool_choice``, new results."""
    for i, tool in enumerate(items(body.get("tools"), r, "tools")):
        _tool(r, tool, f"tools[{i}]")
    choice = body.get("tool_choice")
    if type(choice) is dict or isinstance(choice, Mapping):
        kind = choice.get("type")
        if kind == "tool" and isinstance(choice.get("name"), str):
            r.tool_choice = f"tool:{choice['name']}"
        elif kind in ("auto", "any", "none"):
            r.tool_choice = kind
    messages = body.get("messages")
    if isinstance(messages, list):
        _additions(r, messages)
    for at, msg, model in r.history(messages, "messages", assistant, body.get("system")):
        content = msg.get("content")
        if model:
            blocks = content if isinstance(content, list) else ()
            r.model_turn(at, [(b.get("id"), b.get("name"), b.get("input")) for b in blocks
                              if (type(b) is dict or isinstance(b, Mapping))
                              and b.get("type") == "tool_use"], content)  # fmt: skip
            continue
        if msg.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if (type(block) is dict or isinstance(block, Mapping)) and block.get(
                "type"
            ) == "tool_result":
                cid = block.get("tool_use_id")
                error = block.get("is_error") is True
                turn, call = r.answered(cid)
                r.result(cid, error, block.get("content"), call, at=at, turn=turn)


def _additions(r: Reader, messages: list[Any]) -> None:
    """Tools declared mid-conversation (``tool_addition`` blocks, also inside a
    ``compaction``'s ``tool_changes``): a cheap look at each block of the history."""
    for msg in messages:
        content = msg.get("content") if (type(msg) is dict or isinstance(msg, Mapping)) else None
        if not isinstance(content, list):
            continue
        for block in content:
            kind = (
                block.get("type") if (type(block) is dict or isinstance(block, Mapping)) else None
            )
            if kind == "tool_addition":
                _addition(r, block, "tool_addition")
            elif kind == "tool_removal":
                _removal(r, block)
            elif kind == "compaction":
                for change in items(block.get("tool_changes"), r, "compaction.tool_changes"):
                    if change.get("type") == "tool_addition":
                        _addition(r, change, "compaction.tool_changes")
                    elif change.get("type") == "tool_removal":
                        _removal(r, change)


def _removal(r: Reader, block: Mapping[str, Any]) -> None:
    """A ``tool_removal`` block: the tool it references is not offered from there on."""
    tool = block.get("tool")
    if (type(tool) is dict or isinstance(tool, Mapping)) and tool.get("type") == "tool_reference":
        r.removed(tool.get("name"))


#: Claude on Bedrock: ``/model/{modelId}/invoke`` (``-with-response-stream``: an AWS
#: event-stream of base64 Anthropic events). Every Bedrock model family shares the path:
#: a Claude request is told by its body (``claims_body``), whatever the model id names
#: (an inference profile ARN may name no family; its ``/``, decoded, stays in the id).
_BEDROCK_PATH: Final = re.compile(r"/model/(.+)/invoke(-with-response-stream)?$")
_INVOKE: Final = ("/invoke", "/invoke-with-response-stream")
#: Claude on Vertex AI: ``.../publishers/anthropic/models/{model}:rawPredict`` (or
#: ``:streamRawPredict``); ``count-tokens`` is not a Messages call.
_VERTEX_PATH: Final = re.compile(r"/publishers/anthropic/models/([^/:]+):(stream)?[rR]awPredict$")


def claims_path(path: str) -> bool:
    """A ``.../messages`` path is Anthropic's unless it is OpenAI Assistants' ``/threads/``;
    a Bedrock ``/model/{id}/invoke`` path may be (its body tells); a Vertex ``:rawPredict``
    path is when it names a Claude model."""
    if path.endswith("/messages"):
        return "/threads/" not in path
    if path.endswith(_INVOKE):
        return _BEDROCK_PATH.search(path) is not None
    match = _VERTEX_PATH.search(path)
    return match is not None and match.group(1) != "count-tokens"


def claims_body(path: str, body: bytes) -> bool:
    """A body sent to Bedrock's ``/invoke`` is Claude's when it names ``anthropic_version``
    (Bedrock requires it of Claude; Llama, Mistral, Nova, Titan... bodies have none)."""
    return not path.endswith(_INVOKE) or b'"anthropic_version"' in body


def from_path(info: RequestInfo, path: str) -> RequestInfo:
    """Bedrock's and Vertex's path name the model (the body has none); Bedrock's also
    tells streaming (its body has no ``stream``)."""
    model, stream = _path_facts(path)
    model = info.model or model
    stream = info.stream or stream
    if model == info.model and stream == info.stream:
        return info
    return dataclasses.replace(info, model=model, stream=stream)


@lru_cache(maxsize=256)  # a client's few model paths: read once, not on every request
def _path_facts(path: str) -> tuple[str | None, bool]:
    bedrock = _BEDROCK_PATH.search(path)
    if bedrock is not None:
        return unquote(bedrock.group(1)), bedrock.group(2) is not None
    vertex = _VERTEX_PATH.search(path)
    return (unquote(vertex.group(1)) if vertex else None), False


def provider_name(host: str | None, path: str | None) -> str:
    """``gen_ai.provider.name``: ``aws.bedrock`` and ``gcp.vertex_ai`` by their paths."""
    if path and path.endswith(_INVOKE):
        return "aws.bedrock"
    if path and path.endswith((":rawPredict", ":streamRawPredict")):
        return "gcp.vertex_ai"
    return "anthropic"


def result_message(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    """The ``tool_result`` block answering ``call`` (content blocks are kept as they are)."""
    blocks = isinstance(output, list) and all(isinstance(b, dict) and "type" in b for b in output)
    return {
        "type": "tool_result",
        "tool_use_id": call.call_id,
        "content": output if blocks else result_text(output),
        "is_error": is_error,
    }


def result_messages(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ONE user message holding every ``tool_result`` block."""
    return [{"role": "user", "content": results}]


def declarations(tools: Sequence[DeclaredTool]) -> list[dict[str, Any]]:
    """``tools``: one ``{"name", "description", "input_schema"}`` per tool."""
    return [described(t, input_schema=t.schema) for t in tools]


def input_messages(body: Mapping[str, Any]) -> list[Message]:
    """``messages`` as semconv messages: text, ``tool_use`` and ``tool_result`` blocks."""
    out: list[Message] = []
    for msg in body.get("messages") or ():
        if not (type(msg) is dict or isinstance(msg, Mapping)):
            continue
        content = msg.get("content")
        parts = text_parts(content)
        for block in content if isinstance(content, list) else ():
            if not (type(block) is dict or isinstance(block, Mapping)):
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


def output_text(body: Mapping[str, Any]) -> list[Part]:
    """The text and thinking blocks of ``content``."""
    return text_parts(body.get("content"))


def streamed_body(events: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A stream's text (its ``text_delta`` deltas) as a whole body would carry it."""
    pieces: list[str] = []
    for data in events:
        delta = data.get("delta")
        if (type(delta) is dict or isinstance(delta, Mapping)) and delta.get(
            "type"
        ) == "text_delta":
            piece = delta.get("text")
            if isinstance(piece, str):
                pieces.append(piece)
    return {"content": [{"type": "text", "text": "".join(pieces)}]} if pieces else None


def tool_definitions(body: Mapping[str, Any]) -> list[dict[str, Any] | None]:
    """The custom tools the request declares (``gen_ai.tool.definitions``)."""
    return [
        definition(tool.get("name"), tool.get("description"), tool.get("input_schema"))
        for tool in tools_of(body)
        if tool.get("type") in (None, "custom")
    ]


#: The Messages entry of the dialect table.
ENTRY: Final = Dialect(
    name=anthropic.DIALECT,
    provider=anthropic.PROVIDER,
    # Claude on Bedrock and on Vertex AI too (the path names the model)
    path_suffixes=(
        "/messages",
        "/invoke",
        "/invoke-with-response-stream",
        ":rawPredict",
        ":streamRawPredict",
    ),
    claims_path=claims_path,
    claims_body=claims_body,
    body_keys=((b'"messages"',), (b'"model"', b'"max_tokens"')),
    body_streams=True,
    from_path=from_path,
    retrieves=no_retrieve,
    reducer=anthropic.Reducer,
    parse_body=anthropic.parse_body,
    read_request=read_request,
    result_message=result_message,
    result_messages=result_messages,
    declarations=declarations,
    input_messages=input_messages,
    output_text=output_text,
    streamed_body=streamed_body,
    tool_definitions=tool_definitions,
    request_params=REQUEST_PARAMS,
    provider_name=provider_name,
    provider_untold=None,
    operation_name="chat",
    tool_name_rule=TOOL_NAME_RULE,
    finish_reasons={
        "tool_use": "tool_call",
        "end_turn": "stop",
        "stop_sequence": "stop",
        "max_tokens": "length",
    },
    # ``error.type``
    error_tokens={
        "overloaded_error": "overloaded",
        "rate_limit_error": "rate_limited",
        "billing_error": "insufficient_balance",
        "authentication_error": "auth_error",
        "permission_error": "permission_denied",
        "not_found_error": "not_found",
        "invalid_request_error": "bad_request",
        "request_too_large": "bad_request",
        "api_error": "server_error",
        "timeout_error": "timeout",
    },
    retry_count_header=STAINLESS_RETRY_COUNT,
)
