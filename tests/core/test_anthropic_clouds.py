"""Claude on Bedrock (event-stream ``chunk`` messages) and on Vertex AI: the Anthropic dialect,
the same calls as the SSE stream carrying the same events."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import examples
from tooltap._core.dialects import TABLE
from tooltap._core.errors import classify_problem
from tooltap.core import RequestInfo, StreamParser, parse_request, parse_response
from tooltap.simulator._eventstream import chunk_message, exception_message

DIALECT = "anthropic.messages"


def events(args: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "claude", "usage": {}}}
    ]
    for i, text in enumerate(args):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "f", "input": {}}
        out.append({"type": "content_block_start", "index": i, "content_block": block})
        for at in range(0, len(text), 3):
            delta = {"type": "input_json_delta", "partial_json": text[at : at + 3]}
            out.append({"type": "content_block_delta", "index": i, "delta": delta})
        out.append({"type": "content_block_stop", "index": i})
    out.append({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}})
    out.append({"type": "message_stop"})
    return out


def sse(evs: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in evs)


def bedrock(evs: list[dict[str, Any]]) -> bytes:
    return b"".join(chunk_message(e) for e in evs)


_ARGS = st.lists(
    st.dictionaries(st.text(max_size=5), st.text(max_size=12), max_size=3).map(json.dumps),
    min_size=1,
    max_size=3,
)


@examples(50)
@given(_ARGS, st.lists(st.integers(min_value=0), max_size=15))
def test_chunks_in_any_split_are_the_sse_stream(args: list[str], cuts: list[int]) -> None:
    body = bedrock(events(args))
    parser = StreamParser(DIALECT, framing="eventstream")
    emitted = []
    last = 0
    for cut in [*sorted({c % (len(body) + 1) for c in cuts}), len(body)]:
        emitted += parser.feed(body[last:cut])
        last = cut
    parsed = parser.close()
    reference = parse_response(sse(events(args)), DIALECT)
    assert parsed == reference
    assert tuple(emitted) == parsed.calls
    assert [c.args for c in parsed.calls] == [json.loads(a) for a in args]


def test_an_exception_message_ends_the_stream_as_its_error() -> None:
    head = events(['{"a": 1}'])[:3]
    body = bedrock(head) + exception_message("throttlingException", "Too many tokens")
    parsed = parse_response(body, DIALECT)
    assert not parsed.complete and parsed.calls == ()
    assert [(p.kind, p.detail) for p in parsed.problems] == [
        ("error_event", "throttlingException"),
        ("truncated_json", "stream ended inside the block"),
    ]
    error = classify_problem(parsed.problems[0])
    assert error is not None and error.error_type == "rate_limited"


def test_the_path_names_the_model_streaming_and_provider() -> None:
    entry = TABLE[DIALECT]
    info = parse_request({"anthropic_version": "bedrock-2023-05-31", "messages": []}, DIALECT)
    path = "/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/invoke-with-response-stream"
    got = entry.from_path(info, path)
    assert (got.model, got.stream) == ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", True)
    whole = entry.from_path(info, "/model/anthropic.claude-v2/invoke")
    assert (whole.model, whole.stream) == ("anthropic.claude-v2", False)
    vertex = "/v1/projects/p/locations/r/publishers/anthropic/models/claude-x@1:streamRawPredict"
    named = entry.from_path(RequestInfo(DIALECT, stream=True), vertex)
    assert (named.model, named.stream) == ("claude-x@1", True)
    assert entry.from_path(RequestInfo(DIALECT, model="m"), "/v1/messages").model == "m"
    assert entry.provider_name("bedrock-runtime.us-east-1.amazonaws.com", path) == "aws.bedrock"
    assert entry.provider_name("gw", vertex) == "gcp.vertex_ai"
    assert entry.provider_name("api.anthropic.com", "/v1/messages") == "anthropic"


@examples(30)
@given(_ARGS, st.integers(min_value=1, max_value=64))
def test_the_chunks_are_the_events_anthropics_bedrock_decoder_yields(
    args: list[str], size: int
) -> None:
    from anthropic.lib.bedrock._stream_decoder import AWSEventStreamDecoder

    body = bedrock(events(args))
    pieces = [body[at : at + size] for at in range(0, len(body), size)]
    sdk = list(AWSEventStreamDecoder().iter_bytes(iter(pieces)))
    as_sse = b"".join(f"event: {e.event}\ndata: {e.data}\n\n".encode() for e in sdk)
    assert parse_response(body, DIALECT) == parse_response(as_sse, DIALECT)
