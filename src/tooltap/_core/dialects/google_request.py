"""Google GenAI, request side: read a request, answer calls, declare tools, map content.

A result is ``{"functionResponse": {"name", "response", "id"?}}``, a PART: the results of
one turn go in ONE ``role: "user"`` content (``result_messages``); ``id`` only when the
call had one. An error result is ``{"error": <output>}`` as Google documents it.
Request bodies may be camelCase (the wire) or snake_case (SDK dicts). The model and
whether the response streams are in the path (``/models/{model}:streamGenerateContent``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Final

from ..model import RequestInfo, ToolCall
from . import google
from ._base import Dialect, always, any_body, no_retrieve
from ._content import Message, Part, definition, tools_of
from ._request import Call, DeclaredTool, Reader, described, get, items

__all__ = [
    "ENTRY",
    "REQUEST_PARAMS",
    "TOOL_NAME_RULE",
    "UNTOLD_PROVIDER",
    "declarations",
    "from_path",
    "input_messages",
    "output_text",
    "provider_name",
    "read_request",
    "result_message",
    "result_messages",
    "streamed_body",
    "streaming",
    "tool_definitions",
]

#: ``FunctionDeclaration.name`` "must start with a letter or an underscore; a-z, A-Z, 0-9,
#: underscores, dots, colons and dashes", max 64 in the Gemini API reference (newer Vertex
#: text says 128: we keep 64).
#: ``gen_ai.provider.name`` when neither host nor path tells Vertex AI from the Gemini API.
UNTOLD_PROVIDER: Final = "gcp.gen_ai"
TOOL_NAME_RULE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")
#: ``gen_ai.request.<suffix>`` -> where the body keeps it (first found).
REQUEST_PARAMS: Final = {
    "max_tokens": (("generationConfig", "maxOutputTokens"),),
    "temperature": (("generationConfig", "temperature"),),
    "top_p": (("generationConfig", "topP"),),
    "top_k": (("generationConfig", "topK"),),
    "seed": (("generationConfig", "seed"),),
    "stop_sequences": (("generationConfig", "stopSequences"),),
}
_MODEL: Final = re.compile(r"/models/([^/:]+):")
#: Vertex AI paths: ``/v1/projects/{p}/locations/{l}/...`` and ``.../publishers/google/models/``.
_VERTEX_PATH: Final = re.compile(r"/publishers/google/models/|/projects/[^/]+/locations/[^/]+/")
#: Gemini API paths: ``/{v1|v1beta|v1alpha...}/{models|tunedModels}/{model}:{method}``.
_GEMINI_PATH: Final = re.compile(r"/v\d+(?:alpha|beta)?\d*/(?:models|tunedModels)/[^/:]+:")
# ``Schema`` keys as google-genai sends them (snake_case) -> JSON Schema keywords.
_SCHEMA_KEYS: Final[dict[str, str]] = {
    "min_items": "minItems",
    "max_items": "maxItems",
    "min_length": "minLength",
    "max_length": "maxLength",
    "min_properties": "minProperties",
    "max_properties": "maxProperties",
    "any_of": "anyOf",
    "additional_properties": "additionalProperties",
    "property_ordering": "propertyOrdering",
    "ref": "$ref",
    "defs": "$defs",
}
# Integer fields that proto3 JSON may send as strings ("minItems": "1").
_INT_FIELDS: Final = frozenset(
    {"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"}
)


def read_request(r: Reader, body: Mapping[str, Any]) -> None:
    """Declared ``functionDeclarations``, ``toolConfig``, new ``functionResponse`` parts."""
    tools = body.get("tools")
    if type(tools) is dict or isinstance(
        tools, Mapping
    ):  # one Tool for the repeated field: the API takes it
        tools = [tools]
    for i, tool in enumerate(items(tools, r, "tools")):
        decls = get(tool, "functionDeclarations", "function_declarations")
        for j, decl in enumerate(items(decls, r, f"tools[{i}].functionDeclarations")):
            where = f"tools[{i}].functionDeclarations[{j}]"
            schema = get(decl, "parametersJsonSchema", "parameters_json_schema")
            if schema is None:
                params = decl.get("parameters")
                schema = (
                    _openapi_to_json_schema(params)
                    if (type(params) is dict or isinstance(params, Mapping))
                    else params
                )
            r.tool(decl.get("name"), schema, where)
    config = get(body, "toolConfig", "tool_config")
    fcc = (
        get(config, "functionCallingConfig", "function_calling_config")
        if (type(config) is dict or isinstance(config, Mapping))
        else None
    )
    if type(fcc) is dict or isinstance(fcc, Mapping):
        mode = str(fcc.get("mode") or "AUTO").upper()
        allowed = get(fcc, "allowedFunctionNames", "allowed_function_names")
        if mode == "ANY" and isinstance(allowed, list) and len(allowed) == 1:
            r.tool_choice = f"tool:{allowed[0]}"
        else:
            r.tool_choice = {"ANY": "any", "NONE": "none"}.get(mode, "auto")
    model_calls: list[Mapping[str, Any]] = []
    turn: int | None = None
    seen: dict[str, int] = {}
    system = get(body, "systemInstruction", "system_instruction")
    for at, content, model in r.history(body.get("contents"), "contents", _model_turn, system):
        parts = items(content.get("parts"), r, "parts")
        if model:
            found = [get(p, "functionCall", "function_call") for p in parts]
            model_calls = [c for c in found if (type(c) is dict or isinstance(c, Mapping))]
            r.model_turn(
                at, [(c.get("id"), c.get("name"), c.get("args")) for c in model_calls], parts
            )
            turn, seen = at, {}
            continue
        for part in parts:
            resp = get(part, "functionResponse", "function_response")
            if not (type(resp) is dict or isinstance(resp, Mapping)):
                continue
            name, cid = resp.get("name"), resp.get("id")
            k = seen.get(str(name), 0)
            seen[str(name)] = k + 1
            payload = resp.get("response")
            is_error = (
                type(payload) is dict or isinstance(payload, Mapping)
            ) and "error" in payload
            turn_at, call = r.answered(cid)
            if call is None:
                turn_at, call = turn, _answered(model_calls, name, cid, k)
            r.result(cid, is_error, payload, call, name, at=at, turn=turn_at)


def _model_turn(content: Mapping[str, Any]) -> bool:
    return content.get("role") == "model"


def _answered(calls: list[Mapping[str, Any]], name: Any, call_id: Any, k: int) -> Call | None:
    """The call a result answers: same id, else the k-th call with the same name (the last
    one when there are more results than calls: a second result for it)."""
    if call_id is not None:
        for position, call in enumerate(calls):
            if call.get("id") == call_id:
                return position, call.get("name"), call.get("args")
    same = [(p, c) for p, c in enumerate(calls) if c.get("name") == name]
    if not same:
        return None
    position, call = same[min(k, len(same) - 1)]
    return position, call.get("name"), call.get("args")


def _openapi_to_json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Google's OpenAPI-subset ``Schema`` (``type: "OBJECT"``, ``nullable``) as JSON Schema."""
    out: dict[str, Any] = {}
    for raw_key, value in schema.items():
        key = _SCHEMA_KEYS.get(raw_key, raw_key)
        if key == "type" and isinstance(value, str):
            if value.upper() != "TYPE_UNSPECIFIED":
                out["type"] = value.lower()
        elif key in ("properties", "$defs", "definitions") and (
            type(value) is dict or isinstance(value, Mapping)
        ):
            out[key] = {k: _convert(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not"):
            out[key] = _convert(value)
        elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
            out[key] = [_convert(v) for v in value]
        elif key in _INT_FIELDS and isinstance(value, str) and value.isdigit():
            out[key] = int(value)
        elif key == "$ref" and isinstance(value, str) and value.startswith("#/defs/"):
            out[key] = "#/$defs/" + value.removeprefix("#/defs/")
        elif key != "nullable":
            out[key] = value
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _convert(value: Any) -> Any:
    return (
        _openapi_to_json_schema(value)
        if (type(value) is dict or isinstance(value, Mapping))
        else value
    )


def streaming(url: str) -> bool:
    """Whether a request asks for a stream (``:streamGenerateContent``)."""
    return ":streamGenerateContent" in url.split("?", 1)[0]


def from_path(info: RequestInfo, path: str) -> RequestInfo:
    """The model (when the body has none) and streaming, as the path tells them."""
    path_model, stream = _path_facts(path)
    model = info.model or path_model
    if model == info.model and stream == info.stream:
        return info
    return dataclasses.replace(info, model=model, stream=stream)


@lru_cache(maxsize=256)  # a client's few model paths: read once, not on every request
def _path_facts(path: str) -> tuple[str | None, bool]:
    match = _MODEL.search(path)
    return (match.group(1) if match else None), streaming(path)


@lru_cache(maxsize=256)  # a client's host and model paths: told once, not on every request
def provider_name(host: str | None, path: str | None) -> str:
    """``gen_ai.provider.name``: the backend told by host, then by the path's form.

    Vertex AI: host ``*aiplatform.googleapis.com`` or a Vertex path; Gemini API: host
    ``generativelanguage.googleapis.com`` or a Gemini path on any host (a proxy, the
    simulator); ``gcp.gen_ai`` only when neither can be told.
    """
    host = (host or "").lower().rstrip(".")
    path = path or ""
    if host.endswith("aiplatform.googleapis.com") or _VERTEX_PATH.search(path):
        return "gcp.vertex_ai"
    if host.endswith("generativelanguage.googleapis.com") or _GEMINI_PATH.search(path):
        return "gcp.gemini"
    return UNTOLD_PROVIDER


def result_message(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    """The ``functionResponse`` part answering ``call`` (a dict output is the response)."""
    if is_error:
        response = output if isinstance(output, dict) and "error" in output else {"error": output}
    else:
        response = output if isinstance(output, dict) else {"output": output}
    part: dict[str, Any] = {"name": call.name, "response": response}
    if call.call_id is not None:
        part["id"] = call.call_id
    return {"functionResponse": part}


def result_messages(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ONE ``{"role": "user", "parts": [...]}`` content holding every result."""
    return [{"role": "user", "parts": results}]


def declarations(tools: Sequence[DeclaredTool]) -> list[dict[str, Any]]:
    """``tools``: ONE tool whose ``functionDeclarations`` hold every tool (none: [])."""
    decls = [described(t, parametersJsonSchema=t.schema) for t in tools]
    return [{"functionDeclarations": decls}] if decls else []


def _parts(parts: Any) -> list[Part]:
    out: list[Part] = []
    for part in parts if isinstance(parts, list) else ():
        if not (type(part) is dict or isinstance(part, Mapping)):
            continue
        call = part.get("functionCall") or part.get("function_call")
        answer = part.get("functionResponse") or part.get("function_response")
        if isinstance(part.get("text"), str):
            kind = "reasoning" if part.get("thought") else "text"
            out.append({"type": kind, "content": part["text"]})
        elif type(call) is dict or isinstance(call, Mapping):
            out.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": call.get("name"),
                    "arguments": call.get("args"),
                }
            )
        elif type(answer) is dict or isinstance(answer, Mapping):
            out.append(
                {
                    "type": "tool_call_response",
                    "id": answer.get("id"),
                    "response": answer.get("response"),
                }
            )
    return out


def input_messages(body: Mapping[str, Any]) -> list[Message]:
    """``contents`` as semconv messages: text, thoughts, function calls and responses."""
    out: list[Message] = []
    for content in body.get("contents") or ():
        if type(content) is dict or isinstance(content, Mapping):
            out.append(
                {
                    "role": str(content.get("role", "user")),
                    "parts": _parts(content.get("parts")),
                }
            )
    return out


def output_text(body: Mapping[str, Any]) -> list[Part]:
    """The text and thought parts of the first candidate."""
    candidates = body.get("candidates") or [{}]
    first = (
        candidates[0] if (type(candidates[0]) is dict or isinstance(candidates[0], Mapping)) else {}
    )
    parts = _parts((first.get("content") or {}).get("parts"))
    return [p for p in parts if p["type"] in ("text", "reasoning")]


def streamed_body(events: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A stream's text: each event a ``GenerateContentResponse``, their text parts joined
    (thoughts apart), as a whole body would carry them."""
    parts: list[dict[str, Any]] = []
    for data in events:
        candidates = data.get("candidates") or [{}]
        first = (
            candidates[0]
            if (type(candidates[0]) is dict or isinstance(candidates[0], Mapping))
            else {}
        )
        for part in (first.get("content") or {}).get("parts") or ():
            if not (type(part) is dict or isinstance(part, Mapping)) or not isinstance(
                part.get("text"), str
            ):
                continue
            thought = bool(part.get("thought"))
            if parts and parts[-1]["thought"] == thought:
                parts[-1]["text"] += part["text"]
            else:
                parts.append({"text": part["text"], "thought": thought})
    return {"candidates": [{"content": {"parts": parts}}]} if parts else None


_DEFINITION_SCHEMAS: Final = ("parametersJsonSchema", "parameters_json_schema", "parameters")


def tool_definitions(body: Mapping[str, Any]) -> list[dict[str, Any] | None]:
    """The function declarations of the request (``gen_ai.tool.definitions``)."""
    found: list[dict[str, Any] | None] = []
    for tool in tools_of(body):
        for fn in tool.get("functionDeclarations") or tool.get("function_declarations") or ():
            if type(fn) is dict or isinstance(fn, Mapping):
                schema = next((fn[k] for k in _DEFINITION_SCHEMAS if fn.get(k) is not None), None)
                found.append(definition(fn.get("name"), fn.get("description"), schema))
    return found


#: The Gemini API / Vertex AI entry of the dialect table.
ENTRY: Final = Dialect(
    name=google.DIALECT,
    provider=google.PROVIDER,
    path_suffixes=(":generateContent", ":streamGenerateContent"),
    claims_path=always,
    claims_body=any_body,
    body_keys=((b'"contents"',),),  # the model is in the path, so a body need not name it
    body_streams=False,
    from_path=from_path,
    retrieves=no_retrieve,
    reducer=google.Reducer,
    parse_body=google.parse_body,
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
    provider_untold=UNTOLD_PROVIDER,
    operation_name="generate_content",
    tool_name_rule=TOOL_NAME_RULE,
    finish_reasons={
        "max_tokens": "length",
        "safety": "content_filter",
        "recitation": "content_filter",
        "blocklist": "content_filter",
        "prohibited_content": "content_filter",
        "spii": "content_filter",
    },
    # ``error.status`` and ``google.rpc.ErrorInfo.reason`` (``API_KEY_INVALID`` comes with 400)
    error_tokens={
        "unavailable": "overloaded",
        "resource_exhausted": "rate_limited",
        "unauthenticated": "auth_error",
        "api_key_invalid": "auth_error",
        "permission_denied": "permission_denied",
        "not_found": "not_found",
        "invalid_argument": "bad_request",
        "failed_precondition": "bad_request",
        "internal": "server_error",
        "deadline_exceeded": "timeout",
    },
    retry_count_header=None,
)
