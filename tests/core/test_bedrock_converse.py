"""Bedrock Converse: whole bodies and ConverseStream event streams, checked against
botocore's own parse of the same bytes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import botocore.session
import pytest
from botocore.eventstream import EventStream
from botocore.parsers import EventStreamJSONParser
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import examples
from tooltap._core.errors import classify_error, classify_problem
from tooltap.core import Limits, StreamParser, parse_request, parse_response
from tooltap.simulator._eventstream import event_message, exception_message

DIALECT = "bedrock.converse"
PROFILE = examples(60)


def tool_stream(calls: list[tuple[str, str, str]], *, text: str = "ok", pieces: int = 3) -> bytes:
    """A ConverseStream body: a text block, then one toolUse block per (id, name, json)."""
    out = [
        event_message("messageStart", {"role": "assistant"}),
        event_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}}),
        event_message("contentBlockStop", {"contentBlockIndex": 0}),
    ]
    for i, (call_id, name, arguments) in enumerate(calls, start=1):
        start = {"toolUse": {"toolUseId": call_id, "name": name}}
        out.append(event_message("contentBlockStart", {"contentBlockIndex": i, "start": start}))
        step = max(1, len(arguments) // pieces)
        for at in range(0, len(arguments), step):
            delta = {"toolUse": {"input": arguments[at : at + step]}}
            out.append(event_message("contentBlockDelta", {"contentBlockIndex": i, "delta": delta}))
        out.append(event_message("contentBlockStop", {"contentBlockIndex": i}))
    out.append(event_message("messageStop", {"stopReason": "tool_use" if calls else "end_turn"}))
    usage = {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18}
    out.append(event_message("metadata", {"usage": usage, "metrics": {"latencyMs": 5}}))
    return b"".join(out)


def feed(body: bytes, cuts: list[int]) -> tuple[list[Any], Any]:
    parser = StreamParser(DIALECT, framing="eventstream")
    emitted: list[Any] = []
    last = 0
    for cut in [*sorted({c % (len(body) + 1) for c in cuts}), len(body)]:
        emitted += parser.feed(body[last:cut])
        last = cut
    return emitted, parser.close()


class _Raw:
    def __init__(self, body: bytes, size: int) -> None:
        self._body, self._size = body, size

    def stream(self) -> Iterator[bytes]:
        for at in range(0, len(self._body), self._size):
            yield self._body[at : at + self._size]


def botocore_calls(body: bytes, size: int = 7) -> list[tuple[str, str, Any]]:
    """The calls as an app accumulates them from the events boto3's EventStream yields."""
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    shape = model.operation_model("ConverseStream").output_shape.members["stream"]
    events = EventStream(_Raw(body, size), shape, EventStreamJSONParser(), "ConverseStream")
    open_: dict[int, dict[str, Any]] = {}
    calls: list[tuple[str, str, Any]] = []
    for event in events:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            if "toolUse" in start["start"]:
                open_[start["contentBlockIndex"]] = {**start["start"]["toolUse"], "input": ""}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            if "toolUse" in delta["delta"]:
                open_[delta["contentBlockIndex"]]["input"] += delta["delta"]["toolUse"]["input"]
        elif "contentBlockStop" in event:
            block = open_.pop(event["contentBlockStop"]["contentBlockIndex"], None)
            if block is not None:
                calls.append((block["toolUseId"], block["name"], json.loads(block["input"])))
    return calls


_ARGS = st.dictionaries(
    st.text(min_size=1, max_size=6), st.one_of(st.integers(), st.text(max_size=20)), max_size=4
)


@PROFILE
@given(st.lists(_ARGS, min_size=1, max_size=4), st.lists(st.integers(min_value=0), max_size=20))
def test_any_chunking_gives_the_calls_boto3_yields(
    arguments: list[dict[str, Any]], cuts: list[int]
) -> None:
    calls = [(f"tooluse_{i}", f"tool_{i}", json.dumps(a)) for i, a in enumerate(arguments)]
    body = tool_stream(calls, text="ünï")
    emitted, parsed = feed(body, cuts)
    reference = botocore_calls(body)
    assert [(c.call_id, c.name, c.args) for c in parsed.calls] == reference
    assert list(parsed.calls) == emitted
    assert parsed.complete and parsed.problems == ()
    assert parsed.finish_reason == "tool_use"
    assert parsed.usage is not None and parsed.usage.input_tokens == 11
    assert {c.provider for c in parsed.calls} == {"aws.bedrock"}
    assert [c.index for c in parsed.calls] == list(range(len(calls)))


def test_one_byte_chunks() -> None:
    body = tool_stream([("t1", "get_weather", '{"city": "Köln"}')])
    emitted, parsed = feed(body, list(range(len(body))))
    assert [(c.name, c.args) for c in emitted] == [("get_weather", {"city": "Köln"})]
    assert parsed.calls == tuple(emitted)


def test_parse_response_recognises_an_event_stream_body() -> None:
    parsed = parse_response(tool_stream([("t1", "f", '{"a": 1}')]), DIALECT)
    assert [(c.call_id, c.args) for c in parsed.calls] == [("t1", {"a": 1})]


def test_a_tool_without_parameters_sends_no_delta() -> None:
    start = {"toolUse": {"toolUseId": "t1", "name": "now"}}
    body = b"".join(
        [
            event_message("contentBlockStart", {"contentBlockIndex": 0, "start": start}),
            event_message("contentBlockStop", {"contentBlockIndex": 0}),
            event_message("messageStop", {"stopReason": "tool_use"}),
        ]
    )
    parsed = parse_response(body, DIALECT)
    assert [(c.name, c.args) for c in parsed.calls] == [("now", {})]


def test_a_cut_stream_is_truncated_json_and_truncated_stream() -> None:
    body = tool_stream([("t1", "f", '{"city": "Paris", "days": 3}')], pieces=4)
    cut = body.index(b"contentBlockStop", body.index(b"toolUseId")) - 40
    parsed = parse_response(body[:cut], DIALECT)
    assert parsed.calls == () and not parsed.complete
    kinds = [p.kind for p in parsed.problems]
    assert kinds == ["truncated_json", "truncated_stream"]
    assert parsed.problems[0].call_id == "t1" and parsed.problems[0].received


def test_invalid_arguments_are_a_problem_not_a_call() -> None:
    parsed = parse_response(tool_stream([("t1", "f", '{"a": 1,,}')]), DIALECT)
    assert parsed.calls == ()
    assert [(p.kind, p.call_id, p.name) for p in parsed.problems] == [("invalid_json", "t1", "f")]


@pytest.mark.parametrize(
    ("exception", "error_type"),
    [
        ("throttlingException", "rate_limited"),
        ("modelStreamErrorException", "server_error"),
        ("internalServerException", "server_error"),
        ("serviceUnavailableException", "overloaded"),
        ("validationException", "bad_request"),
    ],
)
def test_an_exception_event_ends_the_stream_as_an_error(exception: str, error_type: str) -> None:
    head = b"".join(
        [
            event_message("messageStart", {"role": "assistant"}),
            event_message(
                "contentBlockStart",
                {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t9", "name": "g"}}},
            ),
            event_message(
                "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{"}}}
            ),
        ]
    )
    parsed = parse_response(head + exception_message(exception, "try later"), DIALECT)
    assert not parsed.complete and parsed.calls == ()
    kinds = [(p.kind, p.detail) for p in parsed.problems]
    assert kinds == [
        ("error_event", exception),
        ("truncated_json", "stream ended inside the block"),
    ]
    error = classify_problem(parsed.problems[0])
    assert error is not None and error.error_type == error_type


def test_a_bad_checksum_is_a_counted_problem() -> None:
    body = bytearray(tool_stream([("t1", "f", '{"a": 1}')]))
    body[-5] ^= 0xFF  # the metadata message's payload
    parsed = parse_response(bytes(body), DIALECT)
    assert [c.call_id for c in parsed.calls] == ["t1"]
    assert [p.detail for p in parsed.problems] == [
        "event-stream: message checksum mismatch: message skipped"
    ]


def test_whole_body() -> None:
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"text": "Checking."},
                    {"toolUse": {"toolUseId": "tooluse_a", "name": "w", "input": {"c": "x"}}},
                    {"toolUse": {"toolUseId": "tooluse_b", "name": "w", "input": "nope"}},
                    {"toolUse": {"toolUseId": "tooluse_c", "name": "v", "input": {}}},
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
    }
    parsed = parse_response(json.dumps(body).encode(), DIALECT)
    assert [(c.call_id, c.index, c.args) for c in parsed.calls] == [
        ("tooluse_a", 0, {"c": "x"}),
        ("tooluse_c", 1, {}),
    ]
    assert [(p.kind, p.call_index, p.call_id) for p in parsed.problems] == [
        ("unexpected_shape", 1, "tooluse_b")
    ]
    assert parsed.complete and parsed.finish_reason == "tool_use"
    capped = parse_response(body, DIALECT, limits=Limits(max_argument_bytes=3))
    assert [p.kind for p in capped.problems][:1] == ["oversized_arguments"]
    cut = parse_response({**body, "stopReason": "max_tokens"}, DIALECT)
    assert "incomplete_response" in [p.kind for p in cut.problems]


def test_request_reader_tools_choice_and_new_results() -> None:
    body = {
        "modelId": "anthropic.claude-3",
        "toolConfig": {
            "tools": [
                {"toolSpec": {"name": "w", "inputSchema": {"json": {"type": "object"}}}},
                {"cachePoint": {"type": "default"}},
            ],
            "toolChoice": {"tool": {"name": "w"}},
        },
        "messages": [
            {"role": "user", "content": [{"text": "hi"}]},
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "old", "name": "w", "input": {}}},
                ],
            },
            {"role": "user", "content": [{"toolResult": {"toolUseId": "old", "content": []}}]},
            {
                "role": "assistant",
                "content": [
                    {"text": "two"},
                    {"toolUse": {"toolUseId": "a", "name": "w", "input": {"c": 1}}},
                    {"toolUse": {"toolUseId": "b", "name": "w", "input": {"c": 2}}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": "b", "content": [{"text": "x"}]}},
                    {"toolResult": {"toolUseId": "a", "content": [], "status": "error"}},
                ],
            },
        ],
    }
    info = parse_request(body, DIALECT)
    assert info.tools == {"w": {"type": "object"}} and info.tool_choice == "tool:w"
    got = [(r.call_id, r.name, r.is_error, r.position, r.call_args) for r in info.tool_results]
    assert got == [("b", "w", False, 1, {"c": 2}), ("a", "w", True, 0, {"c": 1})]
    assert info.problems == ()


@pytest.mark.parametrize(
    ("status", "headers", "body", "error_type"),
    [
        (429, {"x-amzn-errortype": "ThrottlingException:http://internal/"}, b"{}", "rate_limited"),
        (400, {}, b'{"__type": "ServiceQuotaExceededException"}', "rate_limited"),
        (429, {}, b'{"__type": "com.amazon#ModelNotReadyException"}', "overloaded"),
        (400, {"X-Amzn-ErrorType": "ValidationException"}, b'{"message": "x"}', "bad_request"),
        (403, {"x-amzn-errortype": "AccessDeniedException"}, b"{}", "permission_denied"),
    ],
)
def test_aws_error_codes_outrank_the_status(
    status: int, headers: dict[str, str], body: bytes, error_type: str
) -> None:
    assert classify_error(status, headers, body).error_type == error_type
