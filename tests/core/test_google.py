"""Google GenAI reducer: SSE chunks, whole bodies, arrays, SDK objects, Vertex oddities."""

from __future__ import annotations

import json
from typing import Any

from google.genai import types as gt
from hypothesis import given
from hypothesis import strategies as st

import tooltap
from tests.conftest import examples
from tooltap import Parsed
from tooltap._core.dialects import google as reducer_module
from tooltap._core.sse import SSEEvent
from tooltap.core import Limits, StreamParser, parse_response

DIALECT = "google.genai"


def sse(*chunks: Any) -> bytes:
    """Google's SSE framing: ``data:`` lines, CRLF CRLF between events."""
    return "".join(f"data: {json.dumps(c, ensure_ascii=False)}\r\n\r\n" for c in chunks).encode()


def fc(name: str, args: Any = None, **extra: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, **extra}
    if args is not None:
        call["args"] = args
    return {"functionCall": call}


def chunk(*parts: dict[str, Any], finish: Any = None, **top: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **top}


def kinds(parsed: Parsed) -> list[str]:
    return [p.kind for p in parsed.problems]


USAGE = {"promptTokenCount": 11, "candidatesTokenCount": 22, "cachedContentTokenCount": 4}

SEVERAL = sse(
    chunk({"text": "Checking "}, modelVersion="gemini-2.5-flash", responseId="resp_1"),
    chunk(
        {**fc("get_weather", {"city": "Paris"}), "thoughtSignature": "c2ln"},
        fc("get_weather", {"city": "Tōkyō"}),
        responseId="resp_1",
    ),
    chunk(fc("get_time", {"tz": "CET"}), finish="STOP", usageMetadata=USAGE, responseId="resp_1"),
)


def test_several_calls_over_two_chunks_are_numbered_across_the_stream() -> None:
    parser = StreamParser(DIALECT)
    per_event = [parser.feed(block + b"\r\n\r\n") for block in SEVERAL.split(b"\r\n\r\n")[:-1]]
    assert [[c.name for c in calls] for calls in per_event] == [
        [],
        ["get_weather", "get_weather"],
        ["get_time"],
    ]
    parsed = parser.close()
    assert [(c.name, c.args, c.index, c.call_id) for c in parsed.calls] == [
        ("get_weather", {"city": "Paris"}, 0, None),
        ("get_weather", {"city": "Tōkyō"}, 1, None),
        ("get_time", {"tz": "CET"}, 2, None),
    ]
    assert {(c.provider, c.dialect) for c in parsed.calls} == {("google", DIALECT)}
    assert parsed.complete and parsed.problems == ()
    assert (parsed.finish_reason, parsed.response_id, parsed.model) == (
        "STOP",
        "resp_1",
        "gemini-2.5-flash",
    )
    assert parsed.usage == tooltap.core.Usage(11, 22, 4, None)


def test_byte_by_byte_matches_whole() -> None:
    parser = StreamParser(DIALECT)
    emitted = []
    for i in range(len(SEVERAL)):
        emitted += parser.feed(SEVERAL[i : i + 1])
    parsed = parser.close()
    assert parsed == parse_response(SEVERAL, DIALECT)
    assert emitted == list(parsed.calls)
    assert parsed.calls[1].args == {"city": "Tōkyō"}


def test_args_as_a_json_string_are_decoded() -> None:
    parsed = parse_response(chunk(fc("f", '{"a": [1, 2]}'), finish="STOP"), DIALECT)
    assert [(c.args, c.raw_arguments) for c in parsed.calls] == [({"a": [1, 2]}, '{"a": [1, 2]}')]


def test_args_of_other_shapes_are_problems() -> None:
    body = chunk(
        fc("not_json", "{'a': 1}"),
        fc("cut_json", '{"a": [1'),
        fc("a_list", [1, 2]),
        fc("string_list", "[1]"),
        fc("good", {"ok": True}),
        finish="STOP",
    )
    parsed = parse_response(body, DIALECT)
    assert [(c.name, c.index) for c in parsed.calls] == [("good", 0)]
    assert [(p.kind, p.call_index, p.name) for p in parsed.problems] == [
        ("invalid_json", 0, "not_json"),
        ("truncated_json", 1, "cut_json"),
        ("unexpected_shape", 2, "a_list"),
        ("unexpected_shape", 3, "string_list"),
    ]


def test_explicit_id_is_the_call_id() -> None:
    parsed = parse_response(sse(chunk(fc("f", {}, id="call_g_1"), finish="STOP")), DIALECT)
    assert [c.call_id for c in parsed.calls] == ["call_g_1"]


def test_missing_args_mean_no_arguments() -> None:
    parsed = parse_response(sse(chunk(fc("ping"), finish="STOP")), DIALECT)
    assert [(c.name, c.args) for c in parsed.calls] == [("ping", {})]


def test_numeric_finish_reasons_from_vertex() -> None:
    assert parse_response(chunk(fc("f", {}), finish=1), DIALECT).finish_reason == "STOP"
    capped = parse_response(sse(chunk({"text": "lo"}, finish=2)), DIALECT)
    assert (capped.finish_reason, kinds(capped), capped.complete) == (
        "MAX_TOKENS",
        ["incomplete_response"],
        True,
    )
    assert parse_response(chunk(finish=15), DIALECT).finish_reason == "UNEXPECTED_TOOL_CALL"
    assert parse_response(chunk(finish=99), DIALECT).finish_reason == "99"


def test_numeric_table_matches_the_sdk_enum_names() -> None:
    names = {member.value for member in gt.FinishReason}
    assert set(reducer_module.FINISH_REASONS.values()) <= names


def test_malformed_function_call_is_an_invalid_json_problem() -> None:
    message = "Malformed function call: print(default_api.f(x=))"
    body = {"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "finishMessage": message}]}
    parsed = parse_response(sse(chunk(fc("ok", {})), body), DIALECT)
    assert [c.name for c in parsed.calls] == ["ok"]
    assert [(p.kind, p.call_index, p.detail, p.received) for p in parsed.problems] == [
        ("invalid_json", 1, "MALFORMED_FUNCTION_CALL", message)
    ]
    assert parsed.complete


def test_error_event_ends_the_stream() -> None:
    error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    parsed = parse_response(sse(chunk(fc("f", {"a": 1})), error), DIALECT)
    assert [c.name for c in parsed.calls] == ["f"]
    assert [(p.kind, p.detail) for p in parsed.problems] == [("error_event", "UNAVAILABLE")]
    assert not parsed.complete  # ended by the error, not finished
    assert "truncated_stream" not in [p.kind for p in parsed.problems]
    only_code = parse_response({"error": {"code": 429}}, DIALECT)
    assert [(p.kind, p.detail) for p in only_code.problems] == [("error_event", "429")]
    assert not only_code.complete


def test_stream_without_finish_reason_is_truncated_but_keeps_whole_calls() -> None:
    parsed = parse_response(sse(chunk(fc("f", {"a": 1}))), DIALECT)
    assert [c.name for c in parsed.calls] == ["f"]
    assert not parsed.complete
    assert kinds(parsed) == ["truncated_stream"]


def test_cut_inside_the_last_event_is_only_truncation() -> None:
    body = sse(chunk(fc("f", {"a": 1})), chunk(fc("g", {"b": 2}), finish="STOP"))
    parsed = parse_response(body[:-30], DIALECT)
    assert [c.name for c in parsed.calls] == ["f"]
    assert kinds(parsed) == ["truncated_stream"]


def test_array_body_folds_every_response() -> None:
    body = [
        chunk(fc("a", {"n": 1}), responseId="r"),
        chunk(fc("b", {"n": 2}), fc("c", {}), finish="STOP", usageMetadata=USAGE),
    ]
    parsed = parse_response(json.dumps(body).encode(), DIALECT)
    assert [(c.name, c.index) for c in parsed.calls] == [("a", 0), ("b", 1), ("c", 2)]
    assert (parsed.finish_reason, parsed.response_id, parsed.complete) == ("STOP", "r", True)


def sdk_response() -> gt.GenerateContentResponse:
    part = gt.Part(
        function_call=gt.FunctionCall(name="lookup", args={"key": "height"}, id="g1"),
        thought_signature=b"sig",
    )
    return gt.GenerateContentResponse(
        candidates=[
            gt.Candidate(
                content=gt.Content(role="model", parts=[part, gt.Part(text="...")]),
                finish_reason=gt.FinishReason.STOP,
                index=0,
            )
        ],
        usage_metadata=gt.GenerateContentResponseUsageMetadata(
            prompt_token_count=3, candidates_token_count=4, cached_content_token_count=1
        ),
        response_id="resp_sdk",
        model_version="gemini-3-pro",
    )


def test_sdk_object_parses_like_the_wire_body() -> None:
    parsed = parse_response(sdk_response(), DIALECT)
    assert [(c.name, c.args, c.call_id) for c in parsed.calls] == [
        ("lookup", {"key": "height"}, "g1")
    ]
    assert (parsed.finish_reason, parsed.response_id, parsed.model) == (
        "STOP",
        "resp_sdk",
        "gemini-3-pro",
    )
    assert parsed.usage == tooltap.core.Usage(3, 4, 1, None)


def test_snake_case_dump_parses_the_same() -> None:
    response = sdk_response()
    camel = response.model_dump(mode="json", by_alias=True, exclude_none=True)
    snake = response.model_dump(mode="json", exclude_none=True)
    assert "usage_metadata" in snake
    assert parse_response(snake, DIALECT) == parse_response(camel, DIALECT)


def test_only_the_first_candidate_is_read() -> None:
    body = {
        "candidates": [
            {"index": 1, "content": {"parts": [fc("other", {})]}, "finishReason": "STOP"},
            {"index": 0, "content": {"parts": [fc("first", {})]}, "finishReason": "STOP"},
        ]
    }
    assert [c.name for c in parse_response(body, DIALECT).calls] == ["first"]


def test_blocked_prompt_is_complete_with_the_block_reason() -> None:
    body = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": USAGE}
    parsed = parse_response(sse(body), DIALECT)
    assert (parsed.complete, parsed.finish_reason, parsed.problems) == (
        True,
        "PROHIBITED_CONTENT",
        (),
    )


def test_oversized_args_with_small_limits() -> None:
    limits = Limits(max_argument_bytes=30)
    body = chunk(fc("big", {"blob": "y" * 60}), fc("small", {"a": 1}), finish="STOP")
    for parsed in (
        parse_response(sse(body), DIALECT, limits=limits),
        parse_response(body, DIALECT, limits=limits),
        parse_response(
            chunk(fc("big", json.dumps({"blob": "y" * 60})), fc("small", {"a": 1})),
            DIALECT,
            limits=limits,
        ),
    ):
        assert [(c.name, c.index) for c in parsed.calls] == [("small", 0)]
        assert [(p.kind, p.call_index, p.name) for p in parsed.problems] == [
            ("oversized_arguments", 0, "big")
        ]


def streamed_call(*pieces: dict[str, Any], name: str | None = "plan", more: bool = True) -> Any:
    call: dict[str, Any] = {"partialArgs": list(pieces), "willContinue": more}
    if name:
        call["name"] = name
    return {"functionCall": call}


def test_vertex_streamed_arguments_are_assembled() -> None:
    body = sse(
        chunk({"functionCall": {"name": "plan", "id": "v1", "willContinue": True}}),
        chunk(
            streamed_call(
                {"jsonPath": "$.city", "stringValue": "San ", "willContinue": True}, name=None
            )
        ),
        chunk(
            streamed_call(
                {"jsonPath": "$.city", "stringValue": "José"},
                {"jsonPath": "$.days", "numberValue": 3},
                {"jsonPath": "$.stops[1].name", "stringValue": "b"},
                {"jsonPath": "$.opts['a b']", "boolValue": True},
                {"jsonPath": "$.note", "nullValue": "NULL_VALUE"},
                name=None,
            )
        ),
        chunk({"functionCall": {}}),
        chunk(fc("after", {"x": 1}), finish="STOP"),
    )
    parsed = parse_response(body, DIALECT)
    assert [(c.name, c.call_id, c.args, c.index) for c in parsed.calls] == [
        (
            "plan",
            "v1",
            {
                "city": "San José",
                "days": 3,
                "stops": [None, {"name": "b"}],
                "opts": {"a b": True},
                "note": None,
            },
            0,
        ),
        ("after", None, {"x": 1}, 1),
    ]
    assert parsed.problems == ()


def test_vertex_streamed_call_closed_by_the_finish_chunk() -> None:
    body = sse(
        chunk(streamed_call({"jsonPath": "$.q", "stringValue": "abc"})),
        chunk(finish="STOP"),
    )
    parsed = parse_response(body, DIALECT)
    assert [(c.name, c.args) for c in parsed.calls] == [("plan", {"q": "abc"})]


def test_vertex_streamed_call_cut_by_the_stream_end() -> None:
    body = sse(chunk(streamed_call({"jsonPath": "$.q", "stringValue": "ab"})))
    parsed = parse_response(body, DIALECT)
    assert parsed.calls == ()
    assert [(p.kind, p.call_index, p.name, p.received) for p in parsed.problems] == [
        ("truncated_json", 0, "plan", '{"q": "ab"}'),
        ("truncated_stream", None, None, None),
    ]


def test_vertex_streamed_call_with_a_bad_path_is_a_problem() -> None:
    body = sse(
        chunk(streamed_call({"jsonPath": "q", "stringValue": "x"}, more=False), finish="STOP")
    )
    parsed = parse_response(body, DIALECT)
    assert parsed.calls == ()
    assert kinds(parsed) == ["unexpected_shape"]


def test_malformed_chunks_are_unexpected_shape_and_never_raise() -> None:
    raw = b"data: {nope\r\n\r\n" + sse(
        [1, 2],
        {"candidates": "x"},
        {"candidates": [{"content": {"parts": {"a": 1}}}]},
        chunk({"functionCall": "f"}),
        chunk({"functionCall": {"args": {"a": 1}}}),
        chunk(finish={"odd": True}),
    )
    parsed = parse_response(raw, DIALECT)
    assert parsed.calls == ()
    assert kinds(parsed) == ["unexpected_shape"] * 8
    assert parsed.complete


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
TEMPLATE = {
    "candidates": [
        {
            "index": 0,
            "content": {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "f", "args": {"a": 1}, "id": "x"}},
                    {
                        "functionCall": {
                            "name": "p",
                            "partialArgs": [{"jsonPath": "$.a", "stringValue": "s"}],
                            "willContinue": True,
                        }
                    },
                ],
            },
            "finishReason": "STOP",
            "finishMessage": "m",
        }
    ],
    "usageMetadata": {"promptTokenCount": 1},
    "promptFeedback": {"blockReason": "SAFETY"},
    "responseId": "r",
    "modelVersion": "m",
}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else []
    )
    out = []
    for key, child in items:
        out.append((*prefix, key))
        out += _paths(child, (*prefix, key))
    return out


def _mutated(path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(TEMPLATE))
    node = copy
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return copy


@examples(120)
@given(st.lists(st.tuples(st.sampled_from(_paths(TEMPLATE)), JSON), min_size=1, max_size=3))
def test_reducer_and_parse_body_are_total_on_mutated_responses(
    mutations: list[tuple[tuple[Any, ...], Any]],
) -> None:
    reducer = reducer_module.Reducer(Limits())
    bodies = [_mutated(path, value) for path, value in mutations]
    for body in bodies:
        reducer.event(SSEEvent("message", json.dumps(body).encode()))
    streamed = reducer.finish()
    whole = reducer_module.parse_body(bodies, Limits())
    assert [c.index for c in streamed.calls] == list(range(len(streamed.calls)))
    assert streamed.calls == whole.calls


@examples(40)
@given(JSON)
def test_parse_body_is_total_on_any_json(body: Any) -> None:
    assert isinstance(reducer_module.parse_body(body, Limits()), Parsed)
