"""validate: undeclared tools, JSON-schema violations, tool names, hostile schemas."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from loopback_capture import QuietHandler, serving

from tooltap import Problem, RequestInfo, ToolCall, parse_request, validate
from tooltap._core import validate as validate_module

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "days": {"type": "integer", "minimum": 1},
        "units": {"enum": ["c", "f"]},
    },
    "required": ["city"],
    "additionalProperties": False,
}


def _call(name: str, args: dict[str, Any], dialect: str = "openai.chat") -> ToolCall:
    return ToolCall(name, args, dialect.split(".")[0], "call_1", 3, None, dialect)


def _info(tools: dict[str, dict[str, Any]], dialect: str = "openai.chat") -> RequestInfo:
    return RequestInfo(dialect, tools=tools)


def test_valid_call_has_no_problems() -> None:
    assert validate(_call("weather", {"city": "Oslo", "days": 2}), _info({"weather": SCHEMA})) == []


def test_each_schema_error_is_one_problem_with_its_path() -> None:
    call = _call("weather", {"city": "", "days": 0, "units": "k", "extra": 1})
    problems = validate(call, _info({"weather": SCHEMA}))
    assert {p.kind for p in problems} == {"schema_violation"}
    assert all((p.call_index, p.call_id, p.name) == (3, "call_1", "weather") for p in problems)
    details = [p.detail for p in problems]
    assert len(details) == 4
    assert any(d.startswith("$.city:") for d in details)
    assert any(d.startswith("$.days:") and "minimum" in d for d in details)
    assert any(d.startswith("$.units:") for d in details)
    assert any(d.startswith("$:") and "extra" in d for d in details)  # additionalProperties


def test_schema_violation_never_quotes_the_argument_value() -> None:
    """Argument values may be secrets: a detail names the rule, not the value."""
    secret = "sk-canary-0123456789"
    call = _call("weather", {"city": secret, "days": 2, "units": secret})
    details = [p.detail for p in validate(call, _info({"weather": SCHEMA}))]
    assert details and all(secret not in d for d in details)


def test_missing_required_argument() -> None:
    (problem,) = validate(_call("weather", {}), _info({"weather": SCHEMA}))
    assert problem.kind == "schema_violation" and "'city' is a required property" in problem.detail


def test_undeclared_tool() -> None:
    problems = validate(_call("delete_everything", {}), _info({"weather": SCHEMA}))
    assert [p.kind for p in problems] == ["undeclared_tool"]
    assert problems[0].name == "delete_everything"


def test_nothing_declared_means_nothing_to_check() -> None:
    assert validate(_call("anything", {"x": 1}), _info({})) == []


def test_declared_without_schema_accepts_any_args() -> None:
    assert validate(_call("free", {"x": [1, 2]}), _info({"free": {}})) == []


@pytest.mark.parametrize(
    ("name", "dialect", "bad"),
    [
        ("functions.get_weather", "openai.chat", True),
        ("functions.get_weather", "google.genai", False),
        ("get weather", "anthropic.messages", True),
        ("x" * 65, "openai.responses", True),
        ("get_weather", "openai.responses", False),
    ],
)
def test_invalid_tool_name(name: str, dialect: str, bad: bool) -> None:
    problems = validate(_call(name, {}, dialect), _info({}, dialect))
    assert [p.kind for p in problems] == (["invalid_tool_name"] if bad else [])


def test_name_rule_falls_back_to_the_request_dialect() -> None:
    call = ToolCall("a.b", {}, "openai", "c", 0)  # built by hand: no dialect
    assert [p.kind for p in validate(call, _info({}, "openai.chat"))] == ["invalid_tool_name"]
    assert validate(call, _info({}, "google.genai")) == []


def test_invalid_schema_is_reported_not_raised_and_the_call_is_not_flagged() -> None:
    info = _info({"weather": {"type": "objekt", "properties": 5}})
    problems = validate(_call("weather", {"city": 1}), info)
    assert [p.kind for p in problems] == ["unexpected_shape"]
    assert "invalid" in problems[0].detail and "weather" in problems[0].detail


def test_schema_dialect_follows_dollar_schema() -> None:
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "maximum": 5, "exclusiveMaximum": True}},
    }
    info = _info({"f": draft4})
    assert [p.kind for p in validate(_call("f", {"n": 5}), info)] == ["schema_violation"]
    assert validate(_call("f", {"n": 4}), info) == []


def test_local_refs_resolve() -> None:
    schema = {
        "type": "object",
        "properties": {"where": {"$ref": "#/$defs/place"}},
        "$defs": {"place": {"type": "object", "required": ["lat"]}},
    }
    problems = validate(_call("f", {"where": {}}), _info({"f": schema}))
    assert [p.detail.split(":")[0] for p in problems] == ["$.where"]


@pytest.fixture
def ref_server() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.reply(200, b'{"type": "integer"}')

    with serving(Handler) as url:
        yield url, hits


def test_remote_refs_are_never_fetched(ref_server: tuple[str, list[str]]) -> None:
    url, hits = ref_server
    schema = {"type": "object", "properties": {"n": {"$ref": f"{url}/int.json"}}}
    problems = validate(_call("f", {"n": "not an int"}), _info({"f": schema}))
    assert hits == []  # no I/O from the core
    assert [p.kind for p in problems] == ["unexpected_shape"]
    assert "unusable" in problems[0].detail


def test_long_messages_are_cut() -> None:
    schema = {"type": "object", "properties": {"blob": {"type": "integer"}}}
    (problem,) = validate(_call("f", {"blob": "x" * 10_000}), _info({"f": schema}))
    assert problem.kind == "schema_violation" and len(problem.detail) <= 520


def test_validators_are_compiled_once_per_schema() -> None:
    schema = {"type": "object", "properties": {"unique_key_for_cache_test": {"type": "string"}}}
    before = validate_module._compile.cache_info()
    for _ in range(20):
        validate(_call("f", {"unique_key_for_cache_test": "x"}), _info({"f": dict(schema)}))
    after = validate_module._compile.cache_info()
    assert after.misses - before.misses == 1
    assert after.hits - before.hits == 19


def test_google_schema_from_parse_request_validates() -> None:
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
                                "n": {"type": "INTEGER"},
                            },
                            "required": ["city"],
                        },
                    }
                ]
            }
        ]
    }
    info = parse_request(body, "google.genai")
    ok = ToolCall("get_w", {"city": None, "n": 2}, "google", None, 0, None, "google.genai")
    bad = ToolCall("get_w", {"n": "2"}, "google", None, 0, None, "google.genai")
    assert validate(ok, info) == []
    assert sorted(p.detail.split(":")[0] for p in validate(bad, info)) == ["$", "$.n"]


_args = st.dictionaries(
    st.sampled_from(["city", "days", "units", "other"]),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
        lambda inner: st.lists(inner, max_size=3),
        max_leaves=6,
    ),
    max_size=4,
)


def _integer(value: Any) -> bool:
    """JSON Schema's "integer": any number with a zero fractional part, never a boolean."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


@settings(max_examples=100, deadline=None)
@given(args=_args)
def test_validate_is_total(args: dict[str, Any]) -> None:
    problems = validate(_call("weather", args), _info({"weather": SCHEMA}))
    assert all(isinstance(p, Problem) and p.kind == "schema_violation" for p in problems)
    days = args.get("days", 1)
    expected_valid = (
        isinstance(args.get("city"), str)
        and len(args["city"]) >= 1
        and set(args) <= {"city", "days", "units"}
        and _integer(days)
        and days >= 1
        and args.get("units", "c") in ("c", "f")
    )
    assert (problems == []) == expected_valid
