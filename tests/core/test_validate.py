"""validate: undeclared tools, JSON-schema violations, tool names, hostile schemas."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tests.conftest import examples
from tests.loopback_capture import QuietHandler, serving
from tooltap import Problem, ToolCall
from tooltap._core import validate as validate_module
from tooltap._core._schema_check import compile_check
from tooltap.core import RequestInfo, parse_request, validate

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
    assert after.hits - before.hits == 0  # the others: found by the tool's name, unencoded


def test_a_tool_name_hint_is_checked_against_the_schema() -> None:
    """A request off the wire declares new dicts each time: the name finds the compiled
    schema without encoding it, and a changed schema under the same name is noticed."""
    loose = {"type": "object", "properties": {"name_hint_n": {"type": "number"}}}
    strict = {"type": "object", "properties": {"name_hint_n": {"type": "integer"}}}
    args = {"name_hint_n": 1.5}
    before = validate_module._compile.cache_info()
    assert validate(_call("hinted", args), _info({"hinted": dict(loose)})) == []
    assert validate(_call("hinted", args), _info({"hinted": dict(loose)})) == []
    assert validate_module._compile.cache_info().misses - before.misses == 1
    (problem,) = validate(_call("hinted", args), _info({"hinted": dict(strict)}))
    assert problem.kind == "schema_violation" and "integer" in problem.detail
    assert validate(_call("hinted", args), _info({"hinted": dict(loose)})) == []


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


@examples(100)
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


def _weather_info(schema: dict[str, Any]) -> RequestInfo:
    return _info({"weather": schema})


def test_a_schema_object_seen_again_skips_the_text_cache() -> None:
    schema = {"type": "object", "properties": {"identity_cache_probe": {"type": "string"}}}
    info = _weather_info(schema)
    call = _call("weather", {"identity_cache_probe": "x"})
    assert validate(call, info) == []
    before = validate_module._compile.cache_info()
    for _ in range(5):
        assert validate(call, info) == []
    after = validate_module._compile.cache_info()
    assert (after.hits, after.misses) == (before.hits, before.misses)


@pytest.mark.parametrize(
    ("mutate", "args", "first", "then"),
    [  # first and then: the problem details before and after the app edits its schema in place
        (
            lambda s: s["properties"]["days"].update(minimum=5),
            {"city": "Oslo", "days": 2},
            [],
            ["$.days: violates minimum 5"],
        ),
        (
            lambda s: s["required"].append("days"),
            {"city": "Oslo"},
            [],
            ["$: 'days' is a required property"],
        ),
        (  # 1.0 == 1, yet the detail quotes the schema as it is now
            lambda s: s["properties"]["days"].update(minimum=1.0),
            {"city": "Oslo", "days": 0},
            ["$.days: violates minimum 1"],
            ["$.days: violates minimum 1.0"],
        ),
        (  # True == 1, yet jsonschema's const tells them apart
            lambda s: s["properties"]["units"].update(const=True),
            {"city": "Oslo", "units": 1},
            [],
            ["$.units: violates const true"],
        ),
        (
            lambda s: s.update(additionalProperties=False),
            {"city": "Oslo", "x": 1},
            [],
            ["$: violates additionalProperties false (unexpected: x)"],
        ),
    ],
)
def test_an_edited_schema_takes_effect(
    mutate: Any, args: dict[str, Any], first: list[str], then: list[str]
) -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "minimum": 1},
            "units": {"const": 1},
        },
        "required": ["city"],
    }
    info = _weather_info(schema)
    call = _call("weather", args)
    for _ in range(3):  # the last two are identity hits
        assert [p.detail for p in validate(call, info)] == first
    mutate(schema)
    for _ in range(3):
        assert [p.detail for p in validate(call, info)] == then


def test_an_invalid_schema_is_remembered_too() -> None:
    schema = {"type": "object", "properties": {"invalid_schema_probe": {"type": "objekt"}}}
    info = _weather_info(schema)
    call = _call("weather", {})
    first = validate(call, info)
    assert [p.kind for p in first] == ["unexpected_shape"]
    before = validate_module._compile.cache_info()
    assert validate(call, info) == first
    assert validate_module._compile.cache_info() == before


def test_the_fast_check_is_compiled_once_per_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Also when the schema is outside the subset (None is remembered)."""
    compiled: list[Any] = []

    def counting(schema: Any) -> Any:
        compiled.append(schema)
        return compile_check(schema)

    monkeypatch.setattr(validate_module, "compile_check", counting)
    probes = {"supported_probe": {"type": "string"}, "unsupported_probe": {"anyOf": [{}]}}
    for probe, sub in probes.items():
        schema = {"type": "object", "properties": {probe: sub}}
        for _ in range(5):
            assert validate(_call("f", {probe: "x"}), _info({"f": dict(schema)})) == []
    assert len(compiled) == 2
    assert [compile_check(s) is None for s in compiled] == [False, True]


@pytest.fixture
def jsonschema_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any call that reaches jsonschema's iter_errors becomes an ``unusable`` problem."""

    def boom(self: Any, instance: Any) -> Any:
        raise AssertionError("jsonschema was asked")

    monkeypatch.setattr(Draft202012Validator, "iter_errors", boom)


@pytest.mark.usefixtures("jsonschema_raises")
def test_valid_calls_never_reach_jsonschema() -> None:
    """Fails if the fast check silently stops being used (fresh and repeated schemas)."""
    info = _weather_info(SCHEMA)
    for args in ({"city": "Oslo"}, {"city": "Oslo", "days": 2.0, "units": "f"}):
        for _ in range(2):  # compiled, then found by identity
            assert validate(_call("weather", args), info) == []
            assert validate(_call("weather", args), _weather_info(dict(SCHEMA))) == []
    # the patch is effective: an invalid call, or a schema outside the subset, gets there
    (problem,) = validate(_call("weather", {"city": 1}), info)
    assert "jsonschema was asked" in problem.detail
    any_of = {"type": "object", "properties": {"city": {"anyOf": [{"type": "string"}]}}}
    (problem,) = validate(_call("weather", {"city": "Oslo"}), _weather_info(any_of))
    assert "jsonschema was asked" in problem.detail


def test_the_identity_cache_stays_bounded() -> None:
    call = _call("weather", {"city": "Oslo"})
    infos = [_weather_info(dict(SCHEMA)) for _ in range(validate_module._MAX_BY_ID * 2)]
    for info in infos:
        assert validate(call, info) == []
    assert len(validate_module._BY_ID) <= validate_module._MAX_BY_ID


def test_an_id_hint_is_checked_against_the_schema() -> None:
    """A hint left by another object (an id reused after it died) is not trusted blindly."""
    strict = {"type": "object", "properties": {"id_hint_probe": {"type": "integer"}}}
    loose = {"type": "object", "properties": {"id_hint_probe": {"type": "string"}}}
    call = _call("f", {"id_hint_probe": "x"})
    assert [p.kind for p in validate(call, _info({"f": strict}))] == ["schema_violation"]
    validate_module._BY_ID[id(loose)] = validate_module._BY_ID[id(strict)]
    assert validate(call, _info({"f": loose})) == []
    assert [p.kind for p in validate(call, _info({"f": strict}))] == ["schema_violation"]


def test_the_identity_cache_keeps_no_schema_alive() -> None:
    class Schema(dict[str, Any]):  # a plain dict cannot be weakly referenced
        pass

    schema = Schema(type="object", properties={"alive_probe": {"type": "string"}})
    ref = weakref.ref(schema)
    for _ in range(3):
        assert validate(_call("f", {"alive_probe": "x"}), _info({"f": schema})) == []
    del schema
    gc.collect()
    assert ref() is None
