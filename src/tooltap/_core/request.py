"""Read a request body: declared tools and their schemas, tool_choice, carried tool results.

Total: a malformed body gives a ``RequestInfo`` with ``unexpected_shape`` problems.
Google request bodies may be camelCase (the wire) or snake_case (SDK dicts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from ._json import loads_str
from .model import DIALECTS, Problem, RequestInfo, ToolResultRef

__all__ = ["TOOL_NAME_RULES", "parse_request", "valid_tool_name"]

#: Tool-name rule of each dialect, as the providers document it:
#: OpenAI (Chat and Responses) "a-z, A-Z, 0-9, underscores and dashes, max 64";
#: Anthropic ``^[a-zA-Z0-9_-]{1,64}$`` (its tool-use docs; some gateways allow 128,
#: we keep the documented 64); Google ``FunctionDeclaration.name`` "must start with a
#: letter or an underscore; a-z, A-Z, 0-9, underscores, dots, colons and dashes",
#: max 64 in the Gemini API reference (newer Vertex text says 128: we keep 64).
TOOL_NAME_RULES: Final[dict[str, re.Pattern[str]]] = {
    "openai.chat": re.compile(r"[A-Za-z0-9_-]{1,64}"),
    "openai.responses": re.compile(r"[A-Za-z0-9_-]{1,64}"),
    "anthropic.messages": re.compile(r"[A-Za-z0-9_-]{1,64}"),
    "google.genai": re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}"),
}

# Anthropic-defined tools the CLIENT executes (the model calls them by name); other
# typed tools (web_search_*, web_fetch_*, code_execution_*...) run on the server.
_ANTHROPIC_CLIENT_TYPES: Final = ("bash_", "text_editor_", "computer_", "memory_")
# Anthropic toolsets: one nameless ``tools`` entry declaring a family of client tools,
# each called by its member name; ``configs.<member>.enabled`` turns a member on or off.
# Per type: (members, members off unless enabled), as anthropic's SDK types list them.
_ANTHROPIC_TOOLSETS: Final[dict[str, tuple[tuple[str, ...], frozenset[str]]]] = {
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
# Google ``Schema`` keys as google-genai sends them (snake_case) -> JSON Schema keywords.
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


def valid_tool_name(name: str, dialect: str) -> bool:
    """Whether ``name`` satisfies the tool-name rule of ``dialect`` (True if unknown)."""
    rule = TOOL_NAME_RULES.get(dialect)
    return rule is None or rule.fullmatch(name) is not None


def parse_request(body: bytes | str | Mapping[str, Any], dialect: str) -> RequestInfo:
    """What one request declares (tools, schemas, tool_choice) and carries (tool results)."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; expected one of {DIALECTS}")
    if isinstance(body, (bytes, bytearray, memoryview)):
        body = bytes(body).decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            body = loads_str(body)
        except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep JSON
            return RequestInfo(
                dialect, problems=(Problem("unexpected_shape", detail=f"body: {exc}"),)
            )
    if not isinstance(body, Mapping):
        detail = f"body is {type(body).__name__}, not an object"
        return RequestInfo(dialect, problems=(Problem("unexpected_shape", detail=detail),))
    reader = _Reader(dialect)
    try:
        _READERS[dialect](reader, body)
    except Exception as exc:  # noqa: BLE001 - the core is total
        reader.problem(f"request: {exc!r}")
    model = body.get("model")
    google = dialect == "google.genai"
    return RequestInfo(
        dialect=dialect,
        model=model if isinstance(model, str) else None,
        stream=not google and body.get("stream") is True,
        tools=reader.tools,
        invalid_tool_names=tuple(n for n in reader.tools if not valid_tool_name(n, dialect)),
        tool_choice=reader.tool_choice,
        tool_results=tuple(reader.results),
        problems=tuple(reader.problems),
    )


class _Reader:
    """Collects what the dialect readers find."""

    __slots__ = ("dialect", "problems", "results", "tool_choice", "tools")

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.tools: dict[str, dict[str, Any]] = {}
        self.tool_choice: str | None = None
        self.results: list[ToolResultRef] = []
        self.problems: list[Problem] = []

    def problem(self, detail: str) -> None:
        self.problems.append(Problem("unexpected_shape", detail=detail))

    def tool(self, name: Any, schema: Any, where: str) -> None:
        if not isinstance(name, str):
            self.problem(f"{where}: tool without a string name")
        elif schema is not None and not isinstance(schema, Mapping):
            self.problem(f"{where}: schema of {name!r} is not an object")
            self.tools[name] = {}
        else:
            self.tools[name] = dict(schema or {})

    def result(
        self, call_id: Any, name: Any, is_error: bool, args: Any = None, *, in_history: bool
    ) -> None:
        self.results.append(
            ToolResultRef(
                call_id=call_id if isinstance(call_id, str) else None,
                name=name if isinstance(name, str) else None,
                is_error=is_error,
                index=len(self.results),
                call_args=dict(args) if isinstance(args, Mapping) else None,
                in_history=in_history,
            )
        )


def _items(value: Any, reader: _Reader, where: str) -> list[Mapping[str, Any]]:
    """The object items of a list field; a non-list or non-object item is a problem."""
    if value is None:
        return []
    if not isinstance(value, list):
        reader.problem(f"{where} is {type(value).__name__}, not a list")
        return []
    out = [v for v in value if isinstance(v, Mapping)]
    if len(out) != len(value):
        reader.problem(f"{where}: {len(value) - len(out)} item(s) are not objects")
    return out


def _get(obj: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def _result_is_error(content: Any) -> bool:
    """OpenAI results have no error flag: tooltap marks errors as ``{"error": ...}`` text."""
    if isinstance(content, list):  # content parts
        content = "".join(
            p.get("text", "")
            for p in content
            if isinstance(p, Mapping) and p.get("type") in ("text", "input_text", "output_text")
        )
    if not isinstance(content, str) or not content.startswith('{"error"'):
        return False
    try:
        value = json.loads(content)
    except ValueError:
        return False
    return isinstance(value, dict) and list(value) == ["error"]


# --- OpenAI Chat Completions -------------------------------------------------------


def _chat(r: _Reader, body: Mapping[str, Any]) -> None:
    for i, tool in enumerate(_items(body.get("tools"), r, "tools")):
        kind = tool.get("type", "function")
        spec = tool.get(kind)
        if kind in ("function", "custom") and isinstance(spec, Mapping):
            schema = spec.get("parameters") if kind == "function" else None
            r.tool(spec.get("name"), schema, f"tools[{i}]")
        elif kind in ("function", "custom"):
            r.problem(f"tools[{i}]: no {kind!r} object")
    for i, fn in enumerate(_items(body.get("functions"), r, "functions")):
        r.tool(fn.get("name"), fn.get("parameters"), f"functions[{i}]")
    choice = body.get("tool_choice", body.get("function_call"))
    r.tool_choice = _openai_choice(choice)
    names: dict[str, Any] = {}
    for msg in _items(body.get("messages"), r, "messages"):
        role = msg.get("role")
        if role == "assistant":
            for tc in _items(msg.get("tool_calls"), r, "tool_calls"):
                spec = tc.get("function") or tc.get("custom")
                names[str(tc.get("id"))] = spec.get("name") if isinstance(spec, Mapping) else None
        elif role == "tool":
            cid = msg.get("tool_call_id")
            name = names.get(str(cid), msg.get("name"))
            error = _result_is_error(msg.get("content"))
            r.result(cid, name, error, in_history=_known(cid, names))
        elif role == "function":  # legacy function-calling result
            name = msg.get("name")
            r.result(None, name, _result_is_error(msg.get("content")), in_history=False)


def _openai_choice(choice: Any) -> str | None:
    """Chat and Responses ``tool_choice`` (and legacy ``function_call``), normalized."""
    if isinstance(choice, str):
        return {"auto": "auto", "none": "none", "required": "any"}.get(choice)
    if not isinstance(choice, Mapping):
        return None
    kind = choice.get("type")
    if kind == "allowed_tools":
        inner = choice.get("allowed_tools", choice)
        mode = inner.get("mode") if isinstance(inner, Mapping) else None
        tools = inner.get("tools") if isinstance(inner, Mapping) else None
        if mode == "required" and isinstance(tools, list) and len(tools) == 1:
            only = tools[0]
            return (_openai_choice(only) if isinstance(only, Mapping) else None) or "any"
        return {"auto": "auto", "required": "any"}.get(str(mode))
    fn = choice.get(kind) if isinstance(kind, str) else None
    name = fn.get("name") if isinstance(fn, Mapping) else choice.get("name")
    if isinstance(name, str):
        return f"tool:{name}"
    if isinstance(kind, str) and kind not in ("function", "custom"):
        return f"tool:{kind}"  # a forced hosted tool (web_search_preview...)
    return None


# --- OpenAI Responses --------------------------------------------------------------


def _responses(r: _Reader, body: Mapping[str, Any]) -> None:
    for i, tool in enumerate(_items(body.get("tools"), r, "tools")):
        if tool.get("type") == "function":
            r.tool(tool.get("name"), tool.get("parameters"), f"tools[{i}]")
        elif tool.get("type") == "custom":
            r.tool(tool.get("name"), None, f"tools[{i}]")
    r.tool_choice = _openai_choice(body.get("tool_choice"))
    items = body.get("input")
    if isinstance(items, str):
        return
    names: dict[str, Any] = {}
    for item in _items(items, r, "input"):
        kind = item.get("type")
        if kind in ("function_call", "custom_tool_call"):
            names[str(item.get("call_id"))] = item.get("name")
        elif kind in ("function_call_output", "custom_tool_call_output"):
            cid = item.get("call_id")
            error = _result_is_error(item.get("output"))
            r.result(cid, names.get(str(cid)), error, in_history=_known(cid, names))


# --- Anthropic Messages ------------------------------------------------------------


def _anthropic_tool(r: _Reader, tool: Mapping[str, Any], where: str) -> None:
    """One Anthropic tool definition (a ``tools`` entry, or a ``tool_addition``'s)."""
    kind = tool.get("type")
    toolset = _ANTHROPIC_TOOLSETS.get(kind) if isinstance(kind, str) else None
    if toolset is not None:
        members, off = toolset
        configs = tool.get("configs")
        configs = configs if isinstance(configs, Mapping) else {}
        for member in members:
            config = configs.get(member)
            enabled = config.get("enabled") if isinstance(config, Mapping) else None
            if enabled is True or (enabled is None and member not in off):
                r.tool(member, None, where)  # schema built into the model
    elif kind in (None, "custom"):
        r.tool(tool.get("name"), tool.get("input_schema"), where)
    elif isinstance(kind, str) and kind.startswith(_ANTHROPIC_CLIENT_TYPES):
        r.tool(tool.get("name"), None, where)  # schema built into the model


def _anthropic_addition(r: _Reader, block: Mapping[str, Any], where: str) -> None:
    """A ``tool_addition`` block: a tool defined inline is declared from there on.

    A reference (``tool_reference``, MCP references) names a tool already declared
    in ``tools`` or by an earlier addition, or one the server runs.
    """
    tool = block.get("tool")
    if isinstance(tool, Mapping) and tool.get("type") == "tool_definition":
        definition = tool.get("definition")
        if isinstance(definition, Mapping):
            _anthropic_tool(r, definition, where)
        else:
            r.problem(f"{where}: tool_definition without a definition object")


def _anthropic(r: _Reader, body: Mapping[str, Any]) -> None:
    for i, tool in enumerate(_items(body.get("tools"), r, "tools")):
        _anthropic_tool(r, tool, f"tools[{i}]")
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping):
        kind = choice.get("type")
        if kind == "tool" and isinstance(choice.get("name"), str):
            r.tool_choice = f"tool:{choice['name']}"
        elif kind in ("auto", "any", "none"):
            r.tool_choice = kind
    names: dict[str, Any] = {}
    for msg in _items(body.get("messages"), r, "messages"):
        content = msg.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool_addition":
                _anthropic_addition(r, block, "tool_addition")
            elif block.get("type") == "compaction":
                for change in _items(block.get("tool_changes"), r, "compaction.tool_changes"):
                    if change.get("type") == "tool_addition":
                        _anthropic_addition(r, change, "compaction.tool_changes")
            elif block.get("type") == "tool_use":
                names[str(block.get("id"))] = block.get("name")
            elif block.get("type") == "tool_result" and msg.get("role") == "user":
                cid = block.get("tool_use_id")
                error = block.get("is_error") is True
                r.result(cid, names.get(str(cid)), error, in_history=_known(cid, names))


# --- Google GenAI ------------------------------------------------------------------


def _google(r: _Reader, body: Mapping[str, Any]) -> None:
    for i, tool in enumerate(_items(body.get("tools"), r, "tools")):
        decls = _get(tool, "functionDeclarations", "function_declarations")
        for j, decl in enumerate(_items(decls, r, f"tools[{i}].functionDeclarations")):
            where = f"tools[{i}].functionDeclarations[{j}]"
            schema = _get(decl, "parametersJsonSchema", "parameters_json_schema")
            if schema is None:
                params = decl.get("parameters")
                schema = _openapi_to_json_schema(params) if isinstance(params, Mapping) else params
            r.tool(decl.get("name"), schema, where)
    config = _get(body, "toolConfig", "tool_config")
    fcc = (
        _get(config, "functionCallingConfig", "function_calling_config")
        if isinstance(config, Mapping)
        else None
    )
    if isinstance(fcc, Mapping):
        mode = str(fcc.get("mode") or "AUTO").upper()
        allowed = _get(fcc, "allowedFunctionNames", "allowed_function_names")
        if mode == "ANY" and isinstance(allowed, list) and len(allowed) == 1:
            r.tool_choice = f"tool:{allowed[0]}"
        else:
            r.tool_choice = {"ANY": "any", "NONE": "none"}.get(mode, "auto")
    model_calls: list[Mapping[str, Any]] = []
    for content in _items(body.get("contents"), r, "contents"):
        parts = _items(content.get("parts"), r, "parts")
        if content.get("role") == "model":
            found = [_get(p, "functionCall", "function_call") for p in parts]
            model_calls = [c for c in found if isinstance(c, Mapping)]
            continue
        seen: dict[str, int] = {}
        for part in parts:
            resp = _get(part, "functionResponse", "function_response")
            if not isinstance(resp, Mapping):
                continue
            name, cid = resp.get("name"), resp.get("id")
            k = seen.get(str(name), 0)
            seen[str(name)] = k + 1
            payload = resp.get("response")
            is_error = isinstance(payload, Mapping) and "error" in payload
            answered = _google_call(model_calls, name, cid, k)
            args = answered.get("args") if answered is not None else None
            r.result(cid, name, is_error, args, in_history=answered is not None)


def _google_call(
    calls: list[Mapping[str, Any]], name: Any, call_id: Any, k: int
) -> Mapping[str, Any] | None:
    """The call a result answers: same id, else the k-th call with the same name."""
    if call_id is not None:
        for call in calls:
            if call.get("id") == call_id:
                return call
    same = [c for c in calls if c.get("name") == name]
    return same[k] if k < len(same) else None


def _known(call_id: Any, names: Mapping[str, Any]) -> bool:
    """Whether the request's history holds the call with this id."""
    return isinstance(call_id, str) and call_id in names


def _openapi_to_json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Google's OpenAPI-subset ``Schema`` (``type: "OBJECT"``, ``nullable``) as JSON Schema."""
    out: dict[str, Any] = {}
    for raw_key, value in schema.items():
        key = _SCHEMA_KEYS.get(raw_key, raw_key)
        if key == "type" and isinstance(value, str):
            if value.upper() != "TYPE_UNSPECIFIED":
                out["type"] = value.lower()
        elif key in ("properties", "$defs", "definitions") and isinstance(value, Mapping):
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
    return _openapi_to_json_schema(value) if isinstance(value, Mapping) else value


_READERS: Final[dict[str, Callable[[_Reader, Mapping[str, Any]], None]]] = {
    "openai.chat": _chat,
    "openai.responses": _responses,
    "anthropic.messages": _anthropic,
    "google.genai": _google,
}
