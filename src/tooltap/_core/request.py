"""Read a request body: declared tools and their schemas, tool_choice, new tool results.

Only the tail of the history is read: the tool results after the last model turn are
new, and the calls they answer are looked up in that model turn; everything before it
is history already accounted. So the cost is the tools and the tail, not the history.
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
    conversation = body.get("conversation")
    if isinstance(conversation, Mapping):
        conversation = conversation.get("id")
    previous = body.get("previous_response_id")
    return RequestInfo(
        dialect=dialect,
        model=model if isinstance(model, str) else None,
        stream=not google and body.get("stream") is True,
        tools=reader.tools,
        invalid_tool_names=tuple(n for n in reader.tools if not valid_tool_name(n, dialect)),
        tool_choice=reader.tool_choice,
        tool_results=tuple(reader.results),
        problems=tuple(reader.problems),
        conversation_id=conversation if isinstance(conversation, str) and conversation else None,
        previous_response_id=previous if isinstance(previous, str) and previous else None,
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
        self, call_id: Any, is_error: bool, content: Any, call: _Call | None, name: Any = None
    ) -> None:
        """One new result; ``call``: the (position, name, args) it answers in the model turn."""
        position, call_name, args = call if call is not None else (None, name, None)
        self.results.append(
            ToolResultRef(
                call_id=call_id if isinstance(call_id, str) else None,
                name=call_name if isinstance(call_name, str) else None,
                is_error=is_error,
                index=len(self.results),
                call_args=_args(args),
                position=position,
                digest=_digest(content),
            )
        )


#: A call of the last model turn: (position in the turn, name, arguments as sent).
_Call = tuple[int, Any, Any]


def _args(value: Any) -> dict[str, Any] | None:
    """Arguments as the history carries them (an object, or JSON text) as a dict."""
    if isinstance(value, str):
        try:
            value = loads_str(value)
        except (ValueError, RecursionError):
            return None
    return dict(value) if isinstance(value, Mapping) else None


def _digest(content: Any) -> int:
    """A hash of a result's content (the same content gives the same digest)."""
    if isinstance(content, str):
        return hash(content)
    try:
        return hash(json.dumps(content, sort_keys=True, default=str))
    except (TypeError, ValueError, RecursionError):
        return hash(repr(content))


def _tail(
    items: Any, r: _Reader, where: str, is_model: Callable[[Mapping[str, Any]], bool]
) -> tuple[Mapping[str, Any] | None, list[Mapping[str, Any]], int]:
    """(the last model turn, the object items after it, its index): a walk from the end."""
    if items is None:
        return None, [], -1
    if not isinstance(items, list):
        r.problem(f"{where} is {type(items).__name__}, not a list")
        return None, [], -1
    after: list[Mapping[str, Any]] = []
    skipped = 0
    for i in range(len(items) - 1, -1, -1):
        item = items[i]
        if not isinstance(item, Mapping):
            skipped += 1
        elif is_model(item):
            after.reverse()
            _skipped(r, where, skipped)
            return item, after, i
        else:
            after.append(item)
    after.reverse()
    _skipped(r, where, skipped)
    return None, after, -1


def _skipped(r: _Reader, where: str, count: int) -> None:
    if count:
        r.problem(f"{where}: {count} item(s) are not objects")


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
    last, after, _ = _tail(body.get("messages"), r, "messages", _assistant)
    calls: dict[str, _Call] = {}
    legacy: _Call | None = None
    if last is not None:
        for position, tc in enumerate(_items(last.get("tool_calls"), r, "tool_calls")):
            spec = tc.get("function") or tc.get("custom")
            if isinstance(spec, Mapping):
                calls[str(tc.get("id"))] = (position, spec.get("name"), spec.get("arguments"))
        legacy_call = last.get("function_call")
        if isinstance(legacy_call, Mapping):
            legacy = (0, legacy_call.get("name"), legacy_call.get("arguments"))
    for msg in after:
        role = msg.get("role")
        content = msg.get("content")
        if role == "tool":
            cid = msg.get("tool_call_id")
            r.result(cid, _result_is_error(content), content, calls.get(str(cid)), msg.get("name"))
        elif role == "function":  # legacy function-calling result
            r.result(None, _result_is_error(content), content, legacy, msg.get("name"))


def _assistant(msg: Mapping[str, Any]) -> bool:
    return msg.get("role") == "assistant"


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


def _responses_tools(r: _Reader, tools: Any, where: str) -> None:
    """Function and custom tools of a tools list, those grouped in a ``namespace`` included
    (a call names the tool itself, and carries the namespace beside it)."""
    for i, tool in enumerate(_items(tools, r, where)):
        kind = tool.get("type")
        if kind == "function":
            r.tool(tool.get("name"), tool.get("parameters"), f"{where}[{i}]")
        elif kind == "custom":
            r.tool(tool.get("name"), None, f"{where}[{i}]")
        elif kind == "namespace":
            _responses_tools(r, tool.get("tools"), f"{where}[{i}].tools")


def _responses(r: _Reader, body: Mapping[str, Any]) -> None:
    _responses_tools(r, body.get("tools"), "tools")
    r.tool_choice = _openai_choice(body.get("tool_choice"))
    items = body.get("input")
    if isinstance(items, str):
        return
    if not isinstance(items, list):
        _tail(items, r, "input", _response_output)  # the shape problem, if any
        return
    for i, item in enumerate(items):  # tools declared mid-input: a cheap look at each item
        if isinstance(item, Mapping) and item.get("type") in _TOOL_ITEMS:
            _responses_tools(r, item.get("tools"), f"input[{i}].tools")
    last, after, at = _tail(items, r, "input", _response_output)
    calls: dict[str, _Call] = {}
    position = 0
    while last is not None:  # the model turn: the run of output items ending at ``last``
        if last.get("type") in ("function_call", "custom_tool_call"):
            args = last.get("arguments", last.get("input"))
            calls.setdefault(str(last.get("call_id")), (position, last.get("name"), args))
            position -= 1
        at -= 1
        previous = items[at] if at >= 0 else None
        last = previous if isinstance(previous, Mapping) and _response_output(previous) else None
    count = len(calls)
    calls = {k: (p + count - 1, n, a) for k, (p, n, a) in calls.items()}
    for item in after:
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            cid = item.get("call_id")
            output = item.get("output")
            r.result(cid, _result_is_error(output), output, calls.get(str(cid)))


#: Responses input items that declare tools beside the top-level ``tools``.
_TOOL_ITEMS: Final = frozenset({"additional_tools", "tool_search_output"})
#: Responses input items the model produced (a model turn), as opposed to the app's.
_OUTPUT_ITEMS: Final = frozenset(
    {"function_call", "custom_tool_call", "reasoning", "web_search_call", "file_search_call",
     "computer_call", "code_interpreter_call", "image_generation_call", "mcp_call",
     "local_shell_call"}
)  # fmt: skip


def _response_output(item: Mapping[str, Any]) -> bool:
    kind = item.get("type")
    return kind in _OUTPUT_ITEMS or (kind in (None, "message") and item.get("role") == "assistant")


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
    messages = body.get("messages")
    if isinstance(messages, list):
        _anthropic_additions(r, messages)
    last, after, _ = _tail(messages, r, "messages", _assistant)
    calls: dict[str, _Call] = {}
    content = last.get("content") if last is not None else None
    if isinstance(content, list):
        blocks = [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"]
        for position, block in enumerate(blocks):
            calls[str(block.get("id"))] = (position, block.get("name"), block.get("input"))
    for msg in after:
        content = msg.get("content")
        if msg.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                cid = block.get("tool_use_id")
                error = block.get("is_error") is True
                r.result(cid, error, block.get("content"), calls.get(str(cid)))


def _anthropic_additions(r: _Reader, messages: list[Any]) -> None:
    """Tools declared mid-conversation (``tool_addition`` blocks, also inside a
    ``compaction``'s ``tool_changes``): a cheap look at each block of the history."""
    for msg in messages:
        content = msg.get("content") if isinstance(msg, Mapping) else None
        if not isinstance(content, list):
            continue
        for block in content:
            kind = block.get("type") if isinstance(block, Mapping) else None
            if kind == "tool_addition":
                _anthropic_addition(r, block, "tool_addition")
            elif kind == "compaction":
                for change in _items(block.get("tool_changes"), r, "compaction.tool_changes"):
                    if change.get("type") == "tool_addition":
                        _anthropic_addition(r, change, "compaction.tool_changes")


# --- Google GenAI ------------------------------------------------------------------


def _google(r: _Reader, body: Mapping[str, Any]) -> None:
    tools = body.get("tools")
    if isinstance(tools, Mapping):  # one Tool for the repeated field: the API takes it
        tools = [tools]
    for i, tool in enumerate(_items(tools, r, "tools")):
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
    last, after, _ = _tail(body.get("contents"), r, "contents", _model_turn)
    model_calls: list[Mapping[str, Any]] = []
    if last is not None:
        found = [
            _get(p, "functionCall", "function_call") for p in _items(last.get("parts"), r, "parts")
        ]
        model_calls = [c for c in found if isinstance(c, Mapping)]
    seen: dict[str, int] = {}
    for content in after:
        for part in _items(content.get("parts"), r, "parts"):
            resp = _get(part, "functionResponse", "function_response")
            if not isinstance(resp, Mapping):
                continue
            name, cid = resp.get("name"), resp.get("id")
            k = seen.get(str(name), 0)
            seen[str(name)] = k + 1
            payload = resp.get("response")
            is_error = isinstance(payload, Mapping) and "error" in payload
            r.result(cid, is_error, payload, _google_call(model_calls, name, cid, k), name)


def _model_turn(content: Mapping[str, Any]) -> bool:
    return content.get("role") == "model"


def _google_call(calls: list[Mapping[str, Any]], name: Any, call_id: Any, k: int) -> _Call | None:
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
