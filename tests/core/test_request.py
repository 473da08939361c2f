"""parse_request: tools, schemas, tool names, tool_choice, tool results; real SDK bodies."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types as gt
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import examples
from tests.loopback_capture import sent as _sent
from tooltap.core import DIALECTS, RequestInfo, parse_request

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _results(info: RequestInfo) -> list[tuple[str | None, str | None, bool]]:
    return [(r.call_id, r.name, r.is_error) for r in info.tool_results]


# --- OpenAI Chat ---------------------------------------------------------------------


def test_chat_tools_choice_and_results() -> None:
    body = {
        "model": "gpt-4o",
        "stream": True,
        "tools": [
            {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}},
            {"type": "function", "function": {"name": "no_params"}},
            {"type": "custom", "custom": {"name": "free_text"}},
        ],
        "tool_choice": "required",
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather"}},
                    {"id": "c2", "type": "function", "function": {"name": "no_params"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "c2", "content": '{"error": "boom"}'},
            {"role": "tool", "tool_call_id": "c9", "content": [{"type": "text", "text": "x"}]},
        ],
    }
    info = parse_request(json.dumps(body).encode(), "openai.chat")
    assert (info.dialect, info.model, info.stream) == ("openai.chat", "gpt-4o", True)
    assert info.tools == {"get_weather": SCHEMA, "no_params": {}, "free_text": {}}
    assert info.tool_choice == "any"
    assert _results(info) == [
        ("c1", "get_weather", False),
        ("c2", "no_params", True),  # tooltap's {"error": ...} convention
        ("c9", None, False),
    ]
    assert [r.index for r in info.tool_results] == [0, 1, 2]
    assert [r.position is not None for r in info.tool_results] == [
        True,
        True,
        False,
    ]  # c9: no such call
    assert info.problems == () and info.invalid_tool_names == ()


def test_chat_legacy_functions() -> None:
    body = {
        "model": "gpt-3.5-turbo",
        "functions": [{"name": "lookup", "parameters": SCHEMA}],
        "function_call": {"name": "lookup"},
        "messages": [{"role": "function", "name": "lookup", "content": "42"}],
    }
    info = parse_request(body, "openai.chat")
    assert info.tools == {"lookup": SCHEMA}
    assert info.tool_choice == "tool:lookup"
    (result,) = info.tool_results
    assert (result.call_id, result.name, result.is_error, result.index) == (
        None,
        "lookup",
        False,
        0,
    )
    assert result.digest == hash("42") and result.position is None
    assert info.stream is False


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "any"),
        ({"type": "function", "function": {"name": "f"}}, "tool:f"),
        ({"type": "function", "name": "f"}, "tool:f"),  # Responses form
        ({"type": "custom", "name": "g"}, "tool:g"),
        ({"type": "web_search_preview"}, "tool:web_search_preview"),
        (
            {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "f"}]},
            "auto",
        ),
        (
            {
                "type": "allowed_tools",
                "mode": "required",
                "tools": [{"type": "function", "name": "f"}],
            },
            "tool:f",
        ),
        (
            {
                "type": "allowed_tools",
                "allowed_tools": {
                    "mode": "required",
                    "tools": [
                        {"type": "function", "function": {"name": "a"}},
                        {"type": "function", "function": {"name": "b"}},
                    ],
                },
            },
            "any",
        ),
        ("sometimes", None),
        (42, None),
    ],
)
def test_openai_tool_choice(choice: Any, expected: str | None) -> None:
    assert parse_request({"tool_choice": choice}, "openai.chat").tool_choice == expected
    assert parse_request({"tool_choice": choice}, "openai.responses").tool_choice == expected


# --- OpenAI Responses --------------------------------------------------------------


def test_responses_tools_and_outputs() -> None:
    body = {
        "model": "gpt-5",
        "stream": True,
        "tools": [
            {"type": "function", "name": "get_weather", "parameters": SCHEMA, "strict": True},
            {"type": "web_search"},
            {"type": "custom", "name": "apply_patch_text"},
        ],
        "input": [
            {"role": "user", "content": "hi"},
            {
                "type": "function_call",
                "call_id": "call_a",
                "name": "get_weather",
                "arguments": "{}",
            },
            {"type": "function_call_output", "call_id": "call_a", "output": "rain"},
            {
                "type": "function_call_output",
                "call_id": "call_b",
                "output": '{"error": {"code": 1}}',
            },
            {
                "type": "function_call_output",
                "call_id": "call_c",
                "output": [{"type": "input_text", "text": '{"error": "x"}'}],
            },
        ],
    }
    info = parse_request(body, "openai.responses")
    assert info.tools == {"get_weather": SCHEMA, "apply_patch_text": {}}
    assert info.stream is True and info.tool_choice is None
    assert _results(info) == [
        ("call_a", "get_weather", False),
        ("call_b", None, True),
        ("call_c", None, True),
    ]
    assert [r.position is not None for r in info.tool_results] == [True, False, False]
    assert parse_request({"input": "just text"}, "openai.responses").tool_results == ()


def test_error_convention_is_exact() -> None:
    def is_error(content: str) -> bool:
        body = {"messages": [{"role": "tool", "tool_call_id": "c", "content": content}]}
        return parse_request(body, "openai.chat").tool_results[0].is_error

    assert is_error('{"error": "x"}') and is_error('{"error":{"a":1}}')
    assert not is_error('{"error": "x", "data": 1}')  # more than the error key
    assert not is_error("Error: x") and not is_error('{"error": ') and not is_error('["error"]')


# --- Anthropic -------------------------------------------------------------------------


def test_anthropic_tools_choice_and_results() -> None:
    body = {
        "model": "claude-x",
        "max_tokens": 10,
        "tools": [
            {"name": "get_weather", "input_schema": SCHEMA},
            {"type": "custom", "name": "other", "input_schema": {"type": "object"}},
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
            {"type": "bash_20250124", "name": "bash"},
            {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
        ],
        "tool_choice": {"type": "tool", "name": "get_weather"},
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "ok"},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
                    {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": "no",
                        "is_error": True,
                    },
                    {"type": "text", "text": "go on"},
                ],
            },
        ],
    }
    info = parse_request(body, "anthropic.messages")
    assert info.tools == {
        "get_weather": SCHEMA,
        "other": {"type": "object"},
        "bash": {},
        "str_replace_based_edit_tool": {},
    }
    assert "web_search" not in info.tools  # a server tool: the provider runs it
    assert info.tool_choice == "tool:get_weather"
    assert _results(info) == [("toolu_1", "get_weather", False), ("toolu_2", "bash", True)]
    assert all(r.position is not None for r in info.tool_results)


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ({"type": "auto"}, "auto"),
        ({"type": "any"}, "any"),
        ({"type": "none"}, "none"),
        ({"type": "tool"}, None),
        ("auto", None),
    ],
)
def test_anthropic_tool_choice(choice: Any, expected: str | None) -> None:
    assert parse_request({"tool_choice": choice}, "anthropic.messages").tool_choice == expected


# --- Google ----------------------------------------------------------------------------


def test_google_declarations_schemas_and_config() -> None:
    body = {
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "get_w",
                        "parameters": {
                            "type": "OBJECT",
                            "properties": {
                                "city": {"type": "STRING", "nullable": True},
                                "tags": {
                                    "type": "ARRAY",
                                    "items": {"type": "STRING"},
                                    "minItems": "1",
                                },
                                "any": {"anyOf": [{"type": "INTEGER"}, {"type": "BOOLEAN"}]},
                            },
                            "required": ["city"],
                            "propertyOrdering": ["city", "tags"],
                        },
                    },
                    {"name": "raw", "parametersJsonSchema": SCHEMA},
                ]
            },
            {"function_declarations": [{"name": "snake", "parameters_json_schema": SCHEMA}]},
            {"googleSearch": {}},
        ],
        "tool_config": {"function_calling_config": {"mode": "any"}},
        "stream": True,
    }
    info = parse_request(body, "google.genai")
    assert info.model is None and info.stream is False  # both live in the URL for Google
    assert set(info.tools) == {"get_w", "raw", "snake"}
    assert info.tools["get_w"] == {
        "type": "object",
        "properties": {
            "city": {"type": ["string", "null"]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "any": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
        },
        "required": ["city"],
        "propertyOrdering": ["city", "tags"],
    }
    assert info.tools["raw"] == SCHEMA == info.tools["snake"]
    assert info.tool_choice == "any"


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"toolConfig": {"functionCallingConfig": {"mode": "AUTO"}}}, "auto"),
        ({"toolConfig": {"functionCallingConfig": {"mode": "NONE"}}}, "none"),
        ({"toolConfig": {"functionCallingConfig": {"mode": "VALIDATED"}}}, "auto"),
        (
            {
                "toolConfig": {
                    "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f"]}
                }
            },
            "tool:f",
        ),
        (
            {
                "toolConfig": {
                    "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f", "g"]}
                }
            },
            "any",
        ),
        (
            {
                "tool_config": {
                    "function_calling_config": {"mode": "ANY", "allowed_function_names": ["f"]}
                }
            },
            "tool:f",
        ),
        ({"toolConfig": {}}, None),
        ({}, None),
    ],
)
def test_google_tool_choice(config: dict[str, Any], expected: str | None) -> None:
    assert parse_request(config, "google.genai").tool_choice == expected


def test_google_results_correlate_by_id_else_by_position() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "weigh and measure me twice"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "lookup", "args": {"key": "height"}}},
                    {"functionCall": {"name": "lookup", "args": {"key": "weight"}}},
                    {"functionCall": {"name": "other", "args": {"n": 1}, "id": "g1"}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "other", "id": "g1", "response": {"output": 1}}},
                    {"functionResponse": {"name": "lookup", "response": {"output": "170 cm"}}},
                    {
                        "function_response": {
                            "name": "lookup",
                            "response": {"error": "scale broken"},
                        }
                    },
                    {"functionResponse": {"name": "lookup", "response": {"output": "extra"}}},
                ],
            },
        ]
    }
    info = parse_request(body, "google.genai")
    assert _results(info) == [
        ("g1", "other", False),
        (None, "lookup", False),
        (None, "lookup", True),
        (None, "lookup", False),
    ]
    assert [r.call_args for r in info.tool_results] == [
        {"n": 1},
        {"key": "height"},
        {"key": "weight"},
        {"key": "weight"},  # a third "lookup" result: a second one for the last such call
    ]
    assert [r.position for r in info.tool_results] == [2, 0, 1, 1]


def test_google_results_are_the_ones_after_the_latest_model_turn() -> None:
    body = {
        "contents": [
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"turn": 1}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"turn": 2}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        ]
    }
    info = parse_request(body, "google.genai")
    assert [r.call_args for r in info.tool_results] == [{"turn": 2}]  # the first is history
    assert [r.index for r in info.tool_results] == [0]


# --- tool names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "openai_ok", "anthropic_ok", "google_ok"),
    [
        ("get_weather", True, True, True),
        ("get-weather-2", True, True, True),
        ("a" * 64, True, True, True),
        ("a" * 65, False, False, False),
        ("ns.tool", False, False, True),
        ("ns:tool", False, False, True),
        ("9lives", True, True, False),  # Google: must start with a letter or underscore
        ("get weather", False, False, False),
        ("météo", False, False, False),
        ("", False, False, False),
    ],
)
def test_invalid_tool_names(
    name: str, openai_ok: bool, anthropic_ok: bool, google_ok: bool
) -> None:
    for dialect, ok in [
        ("openai.chat", openai_ok),
        ("openai.responses", openai_ok),
        ("anthropic.messages", anthropic_ok),
        ("google.genai", google_ok),
    ]:
        body = _one_tool(dialect, name)
        info = parse_request(body, dialect)
        assert name in info.tools
        assert info.invalid_tool_names == (() if ok else (name,)), dialect


def _one_tool(dialect: str, name: str) -> dict[str, Any]:
    if dialect == "openai.chat":
        return {"tools": [{"type": "function", "function": {"name": name, "parameters": SCHEMA}}]}
    if dialect == "openai.responses":
        return {"tools": [{"type": "function", "name": name, "parameters": SCHEMA}]}
    if dialect == "anthropic.messages":
        return {"tools": [{"name": name, "input_schema": SCHEMA}]}
    return {"tools": [{"functionDeclarations": [{"name": name, "parametersJsonSchema": SCHEMA}]}]}


# --- malformed bodies never raise --------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"\xff\xfe",
        "[1, 2]",
        {"tools": "nope", "messages": 3, "input": {"a": 1}, "contents": "x"},
        {
            "tools": [1, None, {"type": "function"}, {"name": 5}, {"functionDeclarations": [7]}],
            "toolConfig": {"tools": [1, {"toolSpec": {"name": 5}}]},
        },
        {
            "tools": [
                {"type": "function", "function": {"name": "f", "parameters": [1]}},
                {"type": "function", "name": "g", "parameters": 3},
                {"name": "h", "input_schema": "x"},
                {"functionDeclarations": [{"name": "i", "parameters": 3}]},
            ],
            "toolConfig": {"tools": [{"toolSpec": {"name": "j", "inputSchema": {"json": 3}}}]},
        },
        {
            "messages": [None, {"role": "tool"}, {"role": "user", "content": [None, 1]}],
            "input": [None, {"type": "function_call_output"}],
            "contents": [{"role": "user", "parts": [{"functionResponse": None}, 3]}],
        },
    ],
)
def test_malformed_bodies_become_problems(dialect: str, body: Any) -> None:
    info = parse_request(body, dialect)
    assert info.dialect == dialect
    assert info.problems, info
    assert {p.kind for p in info.problems} == {"unexpected_shape"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_absurdly_deep_bodies_become_problems(dialect: str) -> None:
    deep = b'{"tools": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert [p.kind for p in parse_request(deep, dialect).problems] == ["unexpected_shape"]
    nested: dict[str, Any] = {"type": "OBJECT"}
    for _ in range(2000):
        nested = {"type": "OBJECT", "properties": {"x": nested}}
    body = {"tools": [{"functionDeclarations": [{"name": "f", "parameters": nested}]}]}
    info = parse_request(body, "google.genai")  # recursion inside a reader: still total
    assert info.dialect == "google.genai"


def test_unknown_dialect_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown dialect"):
        parse_request({}, "openai.completions")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "tools",
                    "messages",
                    "input",
                    "contents",
                    "role",
                    "content",
                    "parts",
                    "type",
                    "name",
                    "function",
                    "tool_choice",
                    "functionResponse",
                    "functionCall",
                    "response",
                    "id",
                    "tool_call_id",
                    "call_id",
                    "functionDeclarations",
                    "parameters",
                    "toolConfig",
                    "mode",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@examples(150)
@given(body=_json, dialect=st.sampled_from(DIALECTS))
def test_any_json_never_raises(body: Any, dialect: str) -> None:
    info = parse_request(json.dumps(body), dialect)
    assert isinstance(info, RequestInfo) and info.dialect == dialect


# --- bodies as the real SDKs send them (captured on a loopback socket) --------------------


def test_openai_sdk_bodies(capture: tuple[str, list[bytes]]) -> None:
    url, bodies = capture
    client = openai.OpenAI(api_key="k", base_url=f"{url}/v1", max_retries=0)
    chat = _sent(
        bodies,
        lambda: client.chat.completions.create(
            model="gpt-4o-mini",
            stream=True,
            tools=[{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}],
            tool_choice={"type": "function", "function": {"name": "get_weather"}},
            messages=[
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            ],
        ),
    )
    info = parse_request(chat, "openai.chat")
    assert (info.model, info.stream, info.tool_choice) == ("gpt-4o-mini", True, "tool:get_weather")
    assert info.tools == {"get_weather": SCHEMA}
    assert _results(info) == [("call_1", "get_weather", False)]
    resp = _sent(
        bodies,
        lambda: client.responses.create(
            model="gpt-5",
            tools=[
                {"type": "function", "name": "get_weather", "parameters": SCHEMA, "strict": True}
            ],
            tool_choice="required",
            input=[{"type": "function_call_output", "call_id": "call_1", "output": "sunny"}],
        ),
    )
    info = parse_request(resp, "openai.responses")
    assert (info.model, info.stream, info.tool_choice) == ("gpt-5", False, "any")
    assert info.tools == {"get_weather": SCHEMA}
    assert _results(info) == [("call_1", None, False)]


def test_anthropic_sdk_body(capture: tuple[str, list[bytes]]) -> None:
    url, bodies = capture
    client = anthropic.Anthropic(api_key="k", base_url=url, max_retries=0)
    raw = _sent(
        bodies,
        lambda: client.messages.create(
            model="claude-x",
            max_tokens=50,
            tools=[
                {"name": "get_weather", "input_schema": SCHEMA},
                {"type": "web_search_20250305", "name": "web_search"},
            ],
            tool_choice={"type": "any"},
            messages=[
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": "x",
                            "is_error": True,
                        }
                    ],
                },
            ],
        ),
    )
    info = parse_request(raw, "anthropic.messages")
    assert (info.model, info.tool_choice, info.tools) == (
        "claude-x",
        "any",
        {"get_weather": SCHEMA},
    )
    assert _results(info) == [("toolu_1", "get_weather", True)]


def test_google_sdk_body(capture: tuple[str, list[bytes]]) -> None:
    url, bodies = capture
    client = genai.Client(api_key="k", http_options=gt.HttpOptions(base_url=url))
    decl = gt.FunctionDeclaration(
        name="get_w",
        parameters=gt.Schema(
            type=gt.Type.OBJECT,
            properties={
                "city": gt.Schema(type=gt.Type.STRING, nullable=True),
                "tags": gt.Schema(type=gt.Type.ARRAY, items=gt.Schema(type="STRING"), min_items=1),
            },
            required=["city"],
        ),
    )
    raw_decl = gt.FunctionDeclaration(name="raw", parameters_json_schema=SCHEMA)
    contents = [
        gt.Content(role="user", parts=[gt.Part(text="hi")]),
        gt.Content(
            role="model",
            parts=[gt.Part(function_call=gt.FunctionCall(name="get_w", args={"city": "Oslo"}))],
        ),
        gt.Content(
            role="user",
            parts=[
                gt.Part(
                    function_response=gt.FunctionResponse(name="get_w", response={"error": "x"})
                )
            ],
        ),
    ]
    config = gt.GenerateContentConfig(
        tools=[gt.Tool(function_declarations=[decl, raw_decl])],
        tool_config=gt.ToolConfig(
            function_calling_config=gt.FunctionCallingConfig(
                mode=gt.FunctionCallingConfigMode.ANY, allowed_function_names=["get_w"]
            )
        ),
    )
    raw = _sent(
        bodies,
        lambda: client.models.generate_content(model="gemini-x", contents=contents, config=config),
    )
    info = parse_request(raw, "google.genai")
    assert info.tools["get_w"] == {
        "type": "object",
        "properties": {
            "city": {"type": ["string", "null"]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        },
        "required": ["city"],
    }
    assert info.tools["raw"] == SCHEMA
    assert info.tool_choice == "tool:get_w"
    (answered,) = info.tool_results
    assert (answered.call_id, answered.name, answered.is_error) == (None, "get_w", True)
    assert (answered.call_args, answered.position) == ({"city": "Oslo"}, 0)
    assert info.problems == ()


def test_anthropic_toolset_declares_its_enabled_members() -> None:
    body = {
        "tools": [
            {"type": "computer_toolset_20260801", "configs": {"zoom": {"enabled": False}}},
            {"type": "browser_toolset_20260801", "configs": {"read_console": {"enabled": True}}},
        ],
        "messages": [],
    }
    tools = parse_request(body, "anthropic.messages").tools
    assert {"left_click", "screenshot", "navigate", "read_page", "read_console"} <= tools.keys()
    assert "zoom" in tools  # the browser's zoom is on: one member name, two toolsets
    # off by default in the browser toolset, and not turned on here
    assert not {"javascript_exec", "file_upload", "read_network"} & tools.keys()
    assert all(schema == {} for schema in tools.values())  # schemas built into the model


def test_anthropic_toolset_alone_declares_zoom() -> None:
    body = {"tools": [{"type": "computer_toolset_20260801"}], "messages": []}
    info = parse_request(body, "anthropic.messages")
    assert "zoom" in info.tools and info.problems == ()


def test_anthropic_tool_addition_declares_an_inline_definition() -> None:
    addition = {
        "type": "tool_addition",
        "tool": {"type": "tool_definition", "definition": {"name": "late", "input_schema": SCHEMA}},
    }
    reference = {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "early"}}
    compaction = {
        "type": "compaction",
        "content": "summary",
        "tool_changes": [
            {
                "type": "tool_addition",
                "tool": {
                    "type": "tool_definition",
                    "definition": {"type": "computer_toolset_20260801"},
                },
            }
        ],
    }
    body = {
        "tools": [{"name": "early", "input_schema": SCHEMA}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}, reference]},
            {"role": "assistant", "content": [compaction]},
            {"role": "system", "content": [addition]},
        ],
    }
    info = parse_request(body, "anthropic.messages")
    assert info.tools["late"] == SCHEMA and info.tools["early"] == SCHEMA
    assert "left_click" in info.tools
    assert info.problems == ()


def test_anthropic_sdk_body_with_toolset_and_tool_addition(
    capture: tuple[str, list[bytes]],
) -> None:
    url, bodies = capture
    client = anthropic.Anthropic(api_key="k", base_url=url, max_retries=0)
    addition: Any = {
        "type": "tool_addition",
        "tool": {"type": "tool_definition", "definition": {"name": "late", "input_schema": SCHEMA}},
    }
    raw = _sent(
        bodies,
        lambda: client.beta.messages.create(
            model="claude-x",
            max_tokens=50,
            tools=[{"type": "computer_toolset_20260801"}],
            messages=[{"role": "user", "content": [{"type": "text", "text": "go"}, addition]}],
        ),
    )
    info = parse_request(raw, "anthropic.messages")
    assert {"left_click", "late"} <= info.tools.keys()
    assert info.problems == ()
