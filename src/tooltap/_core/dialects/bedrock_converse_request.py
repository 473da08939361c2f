"""AWS Bedrock Converse, request side: read a request, answer calls, declare tools.

A request is the Converse wire JSON (boto3's ``converse`` parameters are the same
shape, plus ``modelId``, which the wire carries in the path ``/model/{modelId}/converse``
or ``/converse-stream``). Tools are ``toolConfig.tools[].toolSpec`` with
``inputSchema.json``; a result is a content BLOCK ``{"toolResult": {toolUseId, content,
status}}``: the results of one turn go in ONE ``role: "user"`` message.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Final
from urllib.parse import unquote

from ..model import RequestInfo, ToolCall
from . import bedrock_converse
from ._base import Dialect, any_body, no_retrieve
from ._content import Message, Part, definition
from ._request import DeclaredTool, Reader, assistant, is_map, items, result_text

__all__ = [
    "AWS_ERROR_CODES",
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

#: ``ToolSpecification.name``: ``[a-zA-Z0-9_-]+``, 1 to 64 characters (Bedrock API reference).
TOOL_NAME_RULE: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: Lower-cased AWS error codes -> error_type (Bedrock sends ``ServiceQuotaExceededException``
#: with a 400, so the code outranks the status).
AWS_ERROR_CODES: Final = {
    "throttlingexception": "rate_limited",
    "servicequotaexceededexception": "rate_limited",
    "toomanyrequestsexception": "rate_limited",
    "modelnotreadyexception": "overloaded",
    "serviceunavailableexception": "overloaded",
    "validationexception": "bad_request",
    "accessdeniedexception": "permission_denied",
    "unrecognizedclientexception": "auth_error",
    "expiredtokenexception": "auth_error",
    "resourcenotfoundexception": "not_found",
    "internalserverexception": "server_error",
    "modelerrorexception": "server_error",
    "modelstreamerrorexception": "server_error",
    "modeltimeoutexception": "timeout",
}
REQUEST_PARAMS: Final = {
    "max_tokens": (("inferenceConfig", "maxTokens"),),
    "temperature": (("inferenceConfig", "temperature"),),
    "top_p": (("inferenceConfig", "topP"),),
    "stop_sequences": (("inferenceConfig", "stopSequences"),),
}
_PATH: Final = re.compile(r"/model/([^/]+)/converse(-stream)?$")


def _tool_uses(content: Any) -> list[Mapping[str, Any]]:
    """The ``toolUse`` values of a content list, in order."""
    if not isinstance(content, list):
        return []
    return [b["toolUse"] for b in content if is_map(b) and is_map(b.get("toolUse"))]


def read_request(r: Reader, body: Mapping[str, Any]) -> None:
    """Declared ``toolConfig.tools``, ``toolChoice``, and the new ``toolResult`` blocks."""
    config = body.get("toolConfig")
    if is_map(config):
        for i, tool in enumerate(items(config.get("tools"), r, "toolConfig.tools")):
            spec = tool.get("toolSpec")
            if not is_map(spec):
                continue  # cachePoint, systemTool entries
            schema = spec.get("inputSchema")
            r.tool(spec.get("name"), schema.get("json") if is_map(schema) else None, f"tools[{i}]")
        choice = config.get("toolChoice")
        if is_map(choice):
            forced = choice.get("tool")
            if is_map(forced) and isinstance(forced.get("name"), str):
                r.tool_choice = f"tool:{forced['name']}"
            elif "any" in choice:
                r.tool_choice = "any"
            elif "auto" in choice:
                r.tool_choice = "auto"
    history = r.history(body.get("messages"), "messages", assistant, body.get("system"))
    for at, msg, model in history:
        content = msg.get("content")
        if model:
            uses = _tool_uses(content)
            r.model_turn(at, [(u.get("toolUseId"), u.get("name"), u.get("input")) for u in uses],
                         content)  # fmt: skip
            continue
        if msg.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            result = block.get("toolResult") if is_map(block) else None
            if is_map(result):
                cid = result.get("toolUseId")
                error = result.get("status") == "error"
                turn, call = r.answered(cid)
                r.result(cid, error, result.get("content"), call, at=at, turn=turn)


def claims_path(path: str) -> bool:
    """A ``.../converse`` path is Bedrock's when it names a model (``/model/{id}/``)."""
    return _PATH.search(path) is not None


def from_path(info: RequestInfo, path: str) -> RequestInfo:
    """The model (the path's ``modelId``, decoded) and streaming (``/converse-stream``)."""
    model, stream = _path_facts(path)
    model = info.model or model
    if model == info.model and stream == info.stream:
        return info
    return dataclasses.replace(info, model=model, stream=stream)


@lru_cache(maxsize=256)
def _path_facts(path: str) -> tuple[str | None, bool]:
    match = _PATH.search(path)
    if match is None:
        return None, False
    return unquote(match.group(1)), match.group(2) is not None


def provider_name(host: str | None, path: str | None) -> str:
    """``gen_ai.provider.name``, whatever the host."""
    return "aws.bedrock"


def result_message(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    """The ``toolResult`` block answering ``call``: an object output as a ``json`` block."""
    if isinstance(output, list) and all(is_map(b) and len(b) == 1 for b in output):
        content = output  # already content blocks ({"text"}, {"json"}, {"image"}...)
    elif isinstance(output, dict):
        content = [{"json": output}]
    else:
        content = [{"text": result_text(output)}]
    return {
        "toolResult": {
            "toolUseId": call.call_id,
            "content": content,
            "status": "error" if is_error else "success",
        }
    }


def result_messages(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ONE user message holding every ``toolResult`` block."""
    return [{"role": "user", "content": results}]


def declarations(tools: Sequence[DeclaredTool]) -> list[dict[str, Any]]:
    """``toolConfig.tools``: one ``{"toolSpec": {name, description, inputSchema}}`` per tool."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        spec: dict[str, Any] = {"name": tool.name}
        if tool.description:
            spec["description"] = tool.description
        spec["inputSchema"] = {"json": dict(tool.schema)}
        out.append({"toolSpec": spec})
    return out


def _parts(content: Any) -> list[Part]:
    parts: list[Part] = []
    for block in content if isinstance(content, list) else ():
        if not is_map(block):
            continue
        if isinstance(block.get("text"), str):
            parts.append({"type": "text", "content": block["text"]})
        elif is_map(block.get("reasoningContent")):
            text = block["reasoningContent"].get("reasoningText")
            if is_map(text) and isinstance(text.get("text"), str):
                parts.append({"type": "reasoning", "content": text["text"]})
        elif is_map(block.get("toolUse")):
            use = block["toolUse"]
            parts.append(
                {
                    "type": "tool_call",
                    "id": use.get("toolUseId"),
                    "name": use.get("name"),
                    "arguments": use.get("input"),
                }
            )
        elif is_map(block.get("toolResult")):
            result = block["toolResult"]
            parts.append(
                {
                    "type": "tool_call_response",
                    "id": result.get("toolUseId"),
                    "response": result.get("content"),
                }
            )
    return parts


def input_messages(body: Mapping[str, Any]) -> list[Message]:
    """``system`` and ``messages`` as semconv messages."""
    out: list[Message] = []
    system = _parts(body.get("system"))
    if system:
        out.append({"role": "system", "parts": system})
    for msg in body.get("messages") or ():
        if is_map(msg):
            out.append({"role": str(msg.get("role", "user")), "parts": _parts(msg.get("content"))})
    return out


def output_text(body: Mapping[str, Any]) -> list[Part]:
    """The text and reasoning blocks of ``output.message.content``."""
    output = body.get("output")
    message = output.get("message") if is_map(output) else None
    parts = _parts(message.get("content") if is_map(message) else None)
    return [p for p in parts if p["type"] in ("text", "reasoning")]


def streamed_body(events: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A stream's text (``contentBlockDelta.delta.text``) as a whole body would carry it."""
    pieces: list[str] = []
    for data in events:
        delta = data.get("delta")
        if is_map(delta) and isinstance(delta.get("text"), str):
            pieces.append(delta["text"])
    if not pieces:
        return None
    return {"output": {"message": {"role": "assistant", "content": [{"text": "".join(pieces)}]}}}


def tool_definitions(body: Mapping[str, Any]) -> list[dict[str, Any] | None]:
    """The ``toolSpec`` tools of the request (``gen_ai.tool.definitions``)."""
    config = body.get("toolConfig")
    tools = config.get("tools") if is_map(config) else None
    found: list[dict[str, Any] | None] = []
    for tool in tools if isinstance(tools, list) else ():
        spec = tool.get("toolSpec") if is_map(tool) else None
        if is_map(spec):
            schema = spec.get("inputSchema")
            found.append(
                definition(
                    spec.get("name"),
                    spec.get("description"),
                    schema.get("json") if is_map(schema) else None,
                )
            )
    return found


#: The Converse entry of the dialect table.
ENTRY: Final = Dialect(
    name=bedrock_converse.DIALECT,
    provider=bedrock_converse.PROVIDER,
    path_suffixes=("/converse", "/converse-stream"),
    claims_path=claims_path,
    claims_body=any_body,
    body_keys=((b'"messages"',),),  # the model is in the path; no other key is in every body
    body_streams=False,
    from_path=from_path,
    retrieves=no_retrieve,
    reducer=bedrock_converse.Reducer,
    parse_body=bedrock_converse.parse_body,
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
        "guardrail_intervened": "content_filter",
        "content_filtered": "content_filter",
    },
    # AWS error codes (``x-amzn-errortype``, ``__type``, botocore's ``Error.Code``, a
    # stream's exception event): ``_core.errors`` lets them outrank the HTTP status
    error_tokens=AWS_ERROR_CODES,
    retry_count_header=None,  # botocore's ``amz-sdk-request`` is no count; its patch counts
)
