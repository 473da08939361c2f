"""ToolRegistry: provider name rules at registration, schemas, declarations per dialect."""

from __future__ import annotations

import enum
from typing import Any, Literal

import jsonschema
import pytest
from anthropic.types import ToolParam
from google.genai import types as gtypes
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from openai.types.shared_params import FunctionDefinition

import tooltap
from tooltap.harness import ToolRegistry

KEY_SCHEMA = {
    "type": "object",
    "properties": {"key": {"type": "string", "enum": ["height", "weight"]}},
    "required": ["key"],
    "additionalProperties": False,
}


def _registry() -> ToolRegistry:
    reg = ToolRegistry()

    @reg.tool(schema=KEY_SCHEMA)
    def lookup_demo_value(key: str) -> str:
        """Look up one stored value of the user."""
        return key

    @reg.tool("save-note", side_effects=True)
    async def save(text: str, pinned: bool = False) -> dict[str, Any]:
        return {"saved": text}

    return reg


@pytest.mark.parametrize("name", ["a", "A_b-9", "_private", "x" * 64])
def test_valid_names_register(name: str) -> None:
    reg = ToolRegistry()
    reg.add(lambda: None, name=name)
    assert name in reg


@pytest.mark.parametrize("name", ["", "x" * 65, "has space", "peso_ñ", "1st", "a.b", "-dash"])
def test_invalid_names_fail_at_registration_with_the_rule(name: str) -> None:
    reg = ToolRegistry()
    with pytest.raises(ValueError, match=r"invalid tool name .*1-64 ASCII"):
        reg.add(lambda: None, name=name)
    assert len(reg) == 0


def test_duplicate_name_is_refused() -> None:
    reg = _registry()
    with pytest.raises(ValueError, match="already registered"):
        reg.add(lambda key: key, name="lookup_demo_value")


def test_retrying_a_side_effecting_tool_needs_an_idempotency_key() -> None:
    reg = ToolRegistry()
    with pytest.raises(ValueError, match="idempotency_key"):
        reg.add(lambda: None, name="pay", side_effects=True, retry=tooltap.harness.RetryPolicy(3))
    tool = reg.add(
        lambda amount: None,
        name="pay",
        side_effects=True,
        retry=tooltap.harness.RetryPolicy(3),
        idempotency_key=lambda args: str(args["amount"]),
    )
    assert tool.retry.attempts == 3


def test_side_effecting_tools_default_to_one_attempt_read_only_to_the_registry_policy() -> None:
    policy = tooltap.harness.RetryPolicy(attempts=4, initial_delay=0.0)
    reg = ToolRegistry(retry=policy)
    read = reg.add(lambda: 1, name="read")
    write = reg.add(lambda: 1, name="write", side_effects=True)
    assert read.retry is policy
    assert write.retry.attempts == 1


def test_non_object_schema_is_refused() -> None:
    with pytest.raises(ValueError, match="object"):
        ToolRegistry().add(lambda: None, name="x", schema={"type": "string"})


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_schema_from_type_hints() -> None:
    def paint(
        wall: str,
        coats: int,
        color: Color,
        finish: Literal["matte", "gloss"] = "matte",
        ratio: float | None = None,
        tags: list[str] | None = None,
        extra: dict[str, Any] | None = None,
        dry: bool = False,
    ) -> None: ...

    schema = ToolRegistry().add(paint).schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["required"] == ["wall", "coats", "color"]
    props = schema["properties"]
    assert props["wall"] == {"type": "string"}
    assert props["coats"] == {"type": "integer"}
    assert props["color"] == {"enum": ["red", "blue"]}
    assert props["finish"] == {"enum": ["matte", "gloss"]}
    assert props["ratio"] == {"anyOf": [{"type": "number"}, {"type": "null"}]}
    assert props["tags"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}}
    assert props["dry"] == {"type": "boolean"}
    assert schema["additionalProperties"] is False
    good = {"wall": "north", "coats": 2, "color": "red", "ratio": None, "tags": ["a"]}
    jsonschema.validate(good, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"wall": "north", "coats": "two", "color": "red"}, schema)


def test_kwargs_handler_allows_additional_properties() -> None:
    def anything(**kwargs: Any) -> None: ...

    schema = ToolRegistry().add(anything).schema
    assert schema == {"type": "object", "properties": {}}


def test_docstring_becomes_the_description() -> None:
    reg = _registry()
    decl = reg.declarations("anthropic.messages")[0]
    assert decl["description"] == "Look up one stored value of the user."
    assert "description" not in reg.declarations("anthropic.messages")[1]


def _keys_fit(decl: dict[str, Any], typed: Any) -> None:
    assert (
        typed.__required_keys__ <= decl.keys() <= typed.__required_keys__ | typed.__optional_keys__
    )


def test_openai_chat_declarations() -> None:
    decls = _registry().declarations("openai.chat")
    assert [d["function"]["name"] for d in decls] == ["lookup_demo_value", "save-note"]
    for d in decls:
        _keys_fit(d, ChatCompletionFunctionToolParam)
        _keys_fit(d["function"], FunctionDefinition)
    assert decls[0]["function"]["parameters"] == KEY_SCHEMA


def test_openai_responses_declarations() -> None:
    decls = _registry().declarations("openai.responses")
    for d in decls:
        _keys_fit(d, FunctionToolParam)
        assert d["type"] == "function" and d["strict"] is False
    assert decls[0]["parameters"] == KEY_SCHEMA


def test_anthropic_declarations() -> None:
    decls = _registry().declarations("anthropic.messages")
    for d in decls:
        _keys_fit(d, ToolParam)
    assert decls[0] == {
        "name": "lookup_demo_value",
        "description": "Look up one stored value of the user.",
        "input_schema": KEY_SCHEMA,
    }


def test_google_declarations_validate_as_sdk_tools() -> None:
    decls = _registry().declarations("google.genai")
    assert len(decls) == 1
    tool = gtypes.Tool.model_validate(decls[0])
    assert tool.function_declarations is not None
    names = [f.name for f in tool.function_declarations]
    assert names == ["lookup_demo_value", "save-note"]
    assert tool.function_declarations[0].parameters_json_schema == KEY_SCHEMA
    assert ToolRegistry().declarations("google.genai") == []


def test_unknown_dialect() -> None:
    with pytest.raises(ValueError, match="unknown dialect"):
        _registry().declarations("cohere")


def test_request_info_carries_every_schema() -> None:
    info = _registry().request_info("openai.chat")
    assert info.dialect == "openai.chat"
    assert info.tools["lookup_demo_value"] == KEY_SCHEMA
    assert set(info.tools) == {"lookup_demo_value", "save-note"}
