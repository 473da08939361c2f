"""_schema_check: the fast yes-check agrees with jsonschema on the keyword subset it takes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, SchemaError
from jsonschema.validators import validator_for

from tests.conftest import examples
from tooltap import ToolCall
from tooltap._core._schema_check import compile_check
from tooltap.core import RequestInfo, validate

KEYS = ["city", "n", "tags", "😀"]
DIALECTS = [
    "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
]
TYPES = ["null", "boolean", "string", "integer", "number", "array", "object"]

# Values where jsonschema's equality and types are subtle: 1 == 1.0, 1 != True, -0.0 == 0,
# 2**53 + 1 != its nearest float, astral characters count once in a length.
_numbers = (
    st.sampled_from([0, 1, 1.0, 2, 2.5, -1, -0.0, 2**53 + 1, 9007199254740992.0, 1e300])
    | st.integers()
    | st.floats(allow_nan=False)
)
_strings = st.sampled_from(["", "a", "b", "😀", "a😀", "é"]) | st.text(
    alphabet="ab😀\U0001f9ea\u00e9", max_size=5
)
_scalars = st.none() | st.booleans() | _numbers | _strings
_members = _scalars | st.sampled_from([[1], {"a": 1}, []])
instances = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from([*KEYS, "extra"]), inner, max_size=4)
    ),
    max_leaves=10,
)
_bound = st.sampled_from([0, 1, 1.0, 2, 2.5, -1, 2**53, 9007199254740992.0]) | st.floats(
    allow_nan=False, allow_infinity=False
)
_count = st.integers(0, 4)


@st.composite
def schemas(draw: st.DrawFn, depth: int = 0) -> Any:
    """A schema (or boolean subschema) made only of keywords ``compile_check`` supports."""
    if depth and draw(st.integers(0, 9)) == 0:
        return draw(st.booleans())
    values: dict[str, Any] = {
        "type": st.sampled_from(TYPES)
        | st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True),
        "enum": st.lists(_members, min_size=1, max_size=4),
        "const": _members,
        "minimum": _bound,
        "maximum": _bound,
        "exclusiveMinimum": _bound,
        "exclusiveMaximum": _bound,
        "minLength": _count,
        "maxLength": _count,
        "minItems": _count,
        "maxItems": _count,
        "required": st.lists(st.sampled_from(KEYS), max_size=3, unique=True),
        "description": st.text(max_size=3),
        "format": st.sampled_from(["email", "date-time", "uri", "ipv4"]),
        "default": _members,
        "deprecated": st.booleans(),
    }
    if depth < 2:
        sub = schemas(depth + 1)
        values["properties"] = st.dictionaries(st.sampled_from(KEYS), sub, max_size=3)
        values["additionalProperties"] = sub
        values["items"] = sub
    chosen = draw(st.lists(st.sampled_from(sorted(values)), max_size=4, unique=True))
    schema = {key: draw(values[key]) for key in chosen}
    if depth == 0 and draw(st.booleans()):
        schema["$schema"] = draw(st.sampled_from(DIALECTS))
    return schema


def _jsonschema_valid(schema: Any, instance: Any) -> bool:
    """jsonschema's verdict, built the way validate builds it (no format checker)."""
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError:
        assume(False)  # e.g. a draft's metaschema wants unique enum values
    return not any(cls(schema).iter_errors(instance))


def _container_member(schema: Any) -> bool:
    """Whether an enum or const anywhere in ``schema`` holds an array or object."""
    if not isinstance(schema, dict):
        return False
    found = [schema["const"]] if "const" in schema else []
    found += schema.get("enum", [])
    subs = [*schema.get("properties", {}).values()]
    subs += [schema[k] for k in ("items", "additionalProperties") if k in schema]
    return any(isinstance(v, list | dict) for v in found) or any(map(_container_member, subs))


@examples(1500)
@given(schema=schemas(), instance=instances)
def test_true_only_when_jsonschema_finds_no_error(schema: dict[str, Any], instance: Any) -> None:
    check = compile_check(schema)
    assert check is not None
    verdict = check(instance)
    valid = _jsonschema_valid(schema, instance)
    assert verdict is not True or valid
    if not _container_member(schema):  # NaN is never generated: then it is exact both ways
        assert verdict is valid


_leaf_schemas = st.one_of(
    st.builds(
        lambda t: {"type": t},
        st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), min_size=1, unique=True),
    ),
    st.builds(lambda v: {"enum": v}, st.lists(_scalars, min_size=1, max_size=3)),
    st.builds(lambda v: {"const": v}, _scalars),
    st.builds(
        lambda t, k, v: {"type": t, k: v},
        st.sampled_from(["integer", "number", "string"]),
        st.sampled_from(sorted(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"])),
        _bound,
    ),
    st.builds(
        lambda k, v: {k: v},
        st.sampled_from(["minLength", "maxLength", "minItems", "maxItems"]),
        _count,
    ),
)


@examples(1000)
@given(schema=_leaf_schemas, instance=_scalars | st.lists(_scalars, max_size=3))
def test_types_equality_and_bounds_are_exact(schema: dict[str, Any], instance: Any) -> None:
    """One keyword against a scalar: bool vs int, 1 vs 1.0, -0.0, code-point lengths."""
    check = compile_check(schema)
    assert check is not None
    assert check(instance) is _jsonschema_valid(schema, instance)


@examples(300)
@given(
    schema=schemas(),
    args=st.dictionaries(st.sampled_from([*KEYS, "extra"]), instances, max_size=4),
)
def test_validate_agrees_with_jsonschema(schema: dict[str, Any], args: dict[str, Any]) -> None:
    valid = _jsonschema_valid(schema, args)
    call = ToolCall("f", args, "openai", "c", 0, None, "openai.chat")
    problems = validate(call, RequestInfo("openai.chat", tools={"f": schema}))
    assert all(p.kind == "schema_violation" for p in problems)
    assert (problems == []) is (valid or schema == {})


_CONTENT = 'line of a note with an escaped "echo" and 😀 in it\n' * 38
REALISTIC: list[tuple[dict[str, Any], Any]] = [
    (  # the benchmark's declared tool, with 2,000 characters of arguments
        {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "mode": {"type": "string", "enum": ["append", "replace"]},
                "lines": {"type": "array", "items": {"type": "integer"}},
                "content": {"type": "string"},
            },
            "required": ["path", "content"],
        },
        {"path": "notes/0.md", "mode": "append", "lines": [0, 2], "content": _CONTENT},
    ),
    (  # OpenAI strict mode: every property required, nullable through a type list
        {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "City and country"},
                "unit": {"type": ["string", "null"], "enum": ["celsius", "fahrenheit", None]},
            },
            "required": ["location", "unit"],
            "additionalProperties": False,
        },
        {"location": "Paris, France", "unit": None},
    ),
    (  # nested array of objects; an integer sent as 2.0; a length counted in code points
        {
            "type": "object",
            "properties": {
                "lines": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 50,
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string", "minLength": 1},
                            "qty": {"type": "integer", "minimum": 1, "maximum": 100},
                        },
                        "required": ["sku", "qty"],
                        "additionalProperties": False,
                    },
                },
                "note": {"type": "string", "maxLength": 4},
            },
            "required": ["lines"],
        },
        {"lines": [{"sku": "A-1", "qty": 2.0}, {"sku": "B", "qty": 100}], "note": "😀😀😀😀"},
    ),
    (  # $schema, titles, defaults, examples, exclusive bounds
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "search",
            "type": "object",
            "properties": {
                "query": {"type": "string", "title": "Query", "examples": ["cats"]},
                "limit": {"type": "integer", "default": 10, "exclusiveMinimum": 0},
                "score": {"type": "number", "minimum": 0, "maximum": 1},
            },
            "required": ["query"],
        },
        {"query": "cats", "limit": 3, "score": 0.5},
    ),
    (  # zod-to-json-schema style, draft 7, const and boolean
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "flag": {"type": "boolean"},
                "speed": {"const": "fast"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["flag"],
            "additionalProperties": False,
        },
        {"flag": True, "speed": "fast", "tags": ["a", "😀"]},
    ),
    ({"type": "object", "properties": {}}, {}),
    ({"type": "object", "additionalProperties": {"type": "number"}}, {"a": 1, "b": 2.5}),
    (  # what parse_request makes of a Google schema with nullable
        {
            "type": "object",
            "properties": {"city": {"type": ["string", "null"]}, "n": {"type": "integer"}},
            "required": ["city"],
        },
        {"city": None, "n": 2},
    ),
    (  # format is an annotation: jsonschema asserts it only with a format checker
        {
            "type": "object",
            "properties": {
                "when": {"type": "string", "format": "date-time"},
                "email": {"type": "string", "format": "email"},
            },
        },
        {"when": "not a date", "email": "not an address"},
    ),
]


@pytest.mark.parametrize(("schema", "instance"), REALISTIC)
def test_realistic_valid_arguments_pass(schema: dict[str, Any], instance: Any) -> None:
    check = compile_check(schema)
    assert check is not None
    assert _jsonschema_valid(schema, instance)
    assert check(instance) is True


@pytest.mark.parametrize(
    ("instance", "expected"),
    [
        ({"n": 1}, True),
        ({"n": 1.0}, True),
        ({"n": True}, False),
        ({"n": 1.5}, False),
        ({"n": 0}, False),
        ({"s": "😀😀"}, True),
        ({"s": "😀😀😀"}, False),
        ({"e": 1.0}, True),
        ({"e": True}, False),
        ({"e": None}, True),
        ({"e": "1"}, False),
        ({"b": False}, True),
        ({"b": 0}, False),
        ({"extra": 1}, False),
        ({"n": 1, "s": "", "e": 1, "b": False}, True),
    ],
)
def test_json_schema_types_and_equality(instance: dict[str, Any], expected: bool) -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "s": {"type": "string", "maxLength": 2},
            "e": {"enum": [1, None, "x"]},
            "b": {"const": False},
        },
        "additionalProperties": False,
    }
    check = compile_check(schema)
    assert check is not None
    assert check(instance) is expected
    assert _jsonschema_valid(schema, instance) is expected


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/$defs/x", "$defs": {"x": {}}},
        {"$defs": {"x": {}}},
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"oneOf": [{}]},
        {"allOf": [{}]},
        {"not": {"type": "string"}},
        {"type": "string", "pattern": "^a"},
        {"patternProperties": {"^a": {}}},
        {"if": {}, "then": {}},
        {"prefixItems": [{}]},
        {"uniqueItems": True},
        {"dependentRequired": {"a": ["b"]}},
        {"minProperties": 1},
        {"multipleOf": 2},
        {"contains": {}},
        {"nullable": True},
        {"items": [{"type": "string"}]},  # Draft 7's tuple form
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"},
        {"$schema": "http://json-schema.org/draft-03/schema#"},
        {"$schema": 7},
        {"type": "object", "properties": {"a": {"$schema": DIALECTS[1]}}},  # only at the root
        {"type": "objekt"},
        {"type": []},
        {"type": ["string", 1]},
        {"type": [{}]},
        {"required": "city"},
        {"required": [1]},
        {"properties": []},
        {"enum": "a"},
        {"minimum": True},
        {"minimum": "1"},
        {"maxLength": None},
        {"title": 5},
        {"deprecated": "yes"},
        {"additionalProperties": 0},
        {"properties": {"a": {"items": {"additionalProperties": {"anyOf": []}}}}},  # deep
        [{"type": "string"}],
        True,
        "string",
    ],
)
def test_unsupported_or_malformed_gives_none(schema: Any) -> None:
    assert compile_check(schema) is None


def test_a_deeply_nested_schema_gives_none_not_an_error() -> None:
    schema: dict[str, Any] = {}
    for _ in range(5000):
        schema = {"items": schema}
    assert compile_check(schema) is None


def test_annotations_alone_accept_anything() -> None:
    check = compile_check({"description": "d", "title": "t", "$comment": "c", "examples": [1]})
    assert check is not None
    assert all(check(v) for v in (None, True, 1, 1.5, "s", [1], {"a": 1}, object()))


#: Keyword values of every shape, most of them wrong for the keyword.
_any_value = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.sampled_from([1.0, 1.5, -0.5])
    | st.sampled_from(["string", "integer", "a"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner,
                                                                max_size=2),
    max_leaves=6,
)  # fmt: skip


@st.composite
def loose_schemas(draw: st.DrawFn, depth: int = 0) -> Any:
    """A schema of the subset's keywords whose values may be anything, or a valid one."""
    if draw(st.booleans()):
        return draw(schemas(depth))
    keywords = sorted(
        {"type", "enum", "const", "minimum", "minLength", "maxItems", "required", "examples",
         "description", "format", "default", "deprecated", "readOnly", "properties", "items",
         "additionalProperties"}
    )  # fmt: skip
    chosen = draw(st.lists(st.sampled_from(keywords), max_size=3, unique=True))
    schema = {key: draw(_any_value) for key in chosen}
    if depth < 1 and draw(st.booleans()):
        schema["properties"] = {"a": draw(loose_schemas(depth + 1))}
    if draw(st.booleans()):
        schema["$schema"] = draw(st.sampled_from(DIALECTS))
    return schema


@examples(1500)
@given(schema=loose_schemas())
def test_a_schema_it_compiles_is_valid_against_its_metaschema(schema: dict[str, Any]) -> None:
    if compile_check(schema) is not None:  # validate then skips jsonschema's check_schema
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
