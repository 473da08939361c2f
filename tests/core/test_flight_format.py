"""The flight record format: it round-trips, refuses what it cannot read, and holds no credential.

Masking works on the whole body, so a credential cut across chunk boundaries is masked
too, with every chunk kept (a boundary inside it moves to its start). Replaying a record
parses its chunks with their boundaries and judges them as the telemetry does.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import examples
from tests.core.test_split_property import PROFILE, STREAMED
from tests.corpus import Case
from tooltap._core.errors import mask_secrets
from tooltap._core.eventstream import EventStreamDecoder
from tooltap._core.flight import (
    VERSION,
    Chunk,
    FlightRecord,
    FormatError,
    Reported,
    SeenCall,
    SeenProblem,
    decode,
    encode,
    masked,
)
from tooltap._core.model import Parsed, Problem, RequestInfo
from tooltap._core.replay import judge, replay
from tooltap._core.stream import StreamParser
from tooltap.simulator._eventstream import chunk_message, exception_message

KEY = "sk-proj-abcdefghijklmnop0123"
BODY = (
    b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1",'
    b'"type":"function","function":{"name":"lookup","arguments":"{\\"k\\": \\"'
    + KEY.encode()
    + b'\\"}"}}]}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
    b"data: [DONE]\n\n"
)


def record(chunks: tuple[Chunk, ...], **fields: object) -> FlightRecord:
    values: dict[str, object] = {
        "dialect": "openai.chat",
        "method": "POST",
        "path": "/v1/chat/completions",
        "status": 200,
        "mode": "sse",
        "headers": (("content-type", "text/event-stream"),),
        "end": "exhausted",
        "chunks": chunks,
        "reported": Reported(
            (SeenCall("call_1", "lookup", {"k": KEY}),), (SeenProblem("invalid_json", "c2"),)
        ),
        "tooltap": "1.2.3",
        "recorded_at": "2026-01-01T00:00:00.000+00:00",
        "request": {"model": "m", "tools": {"lookup": {"type": "object"}}},
        "timing": {"sent": 0.1, "read": 0.0, "first": 0.01, "settled": 0.2},
        "settings": {"max_event_bytes": 1000, "stream_buffered_wait": 2.0},
        "transport_error": None,
        "sdk_error": "bad_request",
    }
    values.update(fields)
    return FlightRecord(**values)  # type: ignore[arg-type]


def split(body: bytes, cuts: list[int]) -> tuple[Chunk, ...]:
    points = [0, *sorted({c for c in cuts if 0 < c < len(body)}), len(body)]
    return tuple(Chunk(i / 100, body[a:b]) for i, (a, b) in enumerate(pairwise(points)))


def test_a_record_round_trips() -> None:
    original = record(split(BODY, [5, 60, 61, 200]))
    data = encode(original)
    header = json.loads(data.splitlines()[0])
    assert (header["format"], header["version"], header["chunks"]) == ("tooltap-flight", 1, 5)
    assert decode(data) == original


@pytest.mark.parametrize(("mode", "framing"), [("sse", "sse"), ("body", "body")])
def test_a_record_without_its_framing_reads_as_before(mode: str, framing: str) -> None:
    """Records written before the framing was kept: a stream is SSE, a whole body a body."""
    original = record(split(BODY, [40]), mode=mode, framing="eventstream")
    data = encode(original)
    assert b'"framing":"eventstream",' in data
    old = decode(data.replace(b'"framing":"eventstream",', b"", 1))
    assert old == dataclasses.replace(original, framing=framing)
    assert replay(old).calls == (SeenCall("call_1", "lookup", {"k": KEY}),)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not json\n",
        b'{"format": "something-else"}\n',
        json.dumps({"format": "tooltap-flight", "version": VERSION + 1}).encode(),
        encode(record(split(BODY, []))).replace(b'"data":"', b'"data":"!'),
        encode(record(split(BODY, []))).replace(b'"status":200', b'"status":"x"'),
    ],
    ids=["empty", "not-json", "other-format", "newer-version", "bad-base64", "bad-status"],
)
def test_what_is_not_a_record_is_refused(data: bytes) -> None:
    with pytest.raises(FormatError):
        decode(data)


def test_masking_removes_credential_headers_and_the_query() -> None:
    headers = (
        ("Content-Type", "text/event-stream"),
        ("Set-Cookie", "session=1"),
        ("Authorization", "Bearer abc"),
        ("x-request-note", f"echo {KEY}"),
    )
    out = masked(record((), headers=headers, path="/v1beta/models/g:gen?key=AIzaSecret"))
    assert out.headers == (
        ("content-type", "text/event-stream"),
        ("x-request-note", "echo [redacted]"),
    )
    assert out.path == "/v1beta/models/g:gen"
    assert out.reported is not None and out.reported.calls[0].args == {"k": "[redacted]"}
    assert KEY.encode() not in encode(out)


def test_a_bearer_token_in_the_request_or_a_call_is_masked_as_a_whole_value() -> None:
    request = {"model": "m", "results": [{"content": "use Bearer tok_abc"}]}
    calls = (SeenCall("call_1", "lookup", {"auth": "Bearer tok_abc", "n": 1}),)
    out = masked(record((), request=request, reported=Reported(calls)))
    assert out.request == {"model": "m", "results": [{"content": "use [redacted]"}]}
    assert out.reported is not None
    assert out.reported.calls[0].args == {"auth": "[redacted]", "n": 1}


@pytest.mark.parametrize("cuts", [[], [5], [40, 41], [20, 90, 150]])
def test_a_masked_event_stream_still_decodes(cuts: list[int]) -> None:
    """A credential in an event-stream message: the payload is masked and the message
    framed anew (lengths, CRCs), so the record replays to what the stream said."""
    body = exception_message("accessDeniedException", f"denied for {KEY} and AKIAIOSFODNN7EXAMPLE")
    fields = {"framing": "eventstream", "dialect": "bedrock.converse", "reported": None}
    chunks = split(body, cuts)
    out = masked(record(chunks, **fields))
    data = b"".join(c.data for c in out.chunks)
    assert len(out.chunks) == len(chunks) and KEY.encode() not in data
    assert b"AKIA" not in data and data.count(b"[redacted]") == 2
    live, today = replay(record(chunks, **fields)), replay(out)
    assert [p.kind for p in live.problems] == [p.kind for p in today.problems] == ["error_event"]


def test_a_credential_inside_a_bedrock_chunk_is_masked_in_its_base64() -> None:
    delta = {"type": "text_delta", "text": f"your key is {KEY}"}
    events = [
        {"type": "message_start", "message": {"id": "m", "role": "assistant", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    ]
    chunks = tuple(Chunk(i / 10, chunk_message(e)) for i, e in enumerate(events))
    fields = {"framing": "eventstream", "dialect": "anthropic.messages", "reported": None}
    out = masked(record(chunks, **fields))
    assert [c.data == d.data for c, d in zip(out.chunks, chunks, strict=True)] == [
        True, True, False, True, True, True
    ]  # fmt: skip
    (parsed,) = [json.loads(m.payload) for m in EventStreamDecoder().feed(out.chunks[2].data)]
    text = base64.b64decode(parsed["bytes"]).decode()
    assert KEY not in text and json.loads(text)["delta"]["text"] == "your key is [redacted]"
    assert replay(out).same_as(replay(record(chunks, **fields)))


@PROFILE
@given(st.lists(st.integers(0, len(BODY)), max_size=12))
def test_a_credential_across_chunk_boundaries_is_masked(cuts: list[int]) -> None:
    chunks = split(BODY, cuts)
    out = masked(record(chunks)).chunks
    assert len(out) == len(chunks)
    assert [c.at for c in out] == [c.at for c in chunks]
    assert b"".join(c.data for c in out) == mask_secrets(BODY.decode()).encode()
    assert all(b"abcdefgh" not in c.data for c in out)
    assert sum(c.data.count(b"[redacted]") for c in out) == 1  # the mask stays whole


def test_replay_parses_the_recorded_chunks() -> None:
    today = replay(record(split(BODY, [7, 90])))
    assert today.calls == (SeenCall("call_1", "lookup", {"k": KEY}),)
    assert today.problems == ()  # declared, valid arguments


def test_replay_classes_an_error_body() -> None:
    body = b'{"error": {"type": "rate_limit_error", "message": "slow down"}}'
    error = record((Chunk(0.0, body),), mode="error", status=429)
    assert replay(error) == Reported(error="rate_limited")


def test_a_stream_the_app_closed_early_is_not_truncated() -> None:
    cut = BODY[:150]
    assert replay(record(split(cut, [40]))).problems == (SeenProblem("truncated_stream"),)
    assert replay(record(split(cut, [40]), end="closed")).problems == ()


def test_judge_checks_calls_against_the_request() -> None:
    parsed = Parsed("openai.chat", calls=(), problems=(Problem("truncated_stream"),))
    request = RequestInfo("openai.chat", tools={"other": {}})
    reported = judge(parsed, request, end="exhausted", first=None, total=0, timing={}, settings={})
    assert reported == Reported(
        problems=(SeenProblem("truncated_stream"),), error="truncated_stream"
    )
    call = replay(record(split(BODY, []), request={"tools": {"other": {}}}))
    assert SeenProblem("undeclared_tool", "call_1") in call.problems


def test_a_burst_after_a_long_wait_replays_as_buffered() -> None:
    burst = record(
        (Chunk(2.5, BODY),),
        timing={"sent": 0.0, "read": 0.0, "first": 2.5, "settled": 2.5},
        settings={"stream_buffered_wait": 2.0, "stream_buffered_events": 2},
    )
    assert SeenProblem("stream_buffered") in replay(burst).problems
    steady = dataclasses.replace(burst, timing={**burst.timing, "first": 0.01})
    assert SeenProblem("stream_buffered") not in replay(steady).problems


@pytest.mark.parametrize("case", STREAMED, ids=lambda c: c.name)
def test_every_corpus_stream_survives_the_file(case: Case) -> None:
    """A real provider stream, cut anywhere, written to a record's bytes and read back,
    replays to what the live parse of those very chunks was judged to be."""

    @examples(10)
    @given(st.lists(st.integers(0, len(case.body)), max_size=20))
    def check(cuts: list[int]) -> None:
        chunks = split(case.body, cuts)
        parser = StreamParser(case.dialect)
        for chunk in chunks:
            parser.feed(chunk.data)
        live = judge(
            parser.close(), None, end="exhausted", first=None, total=0, timing={}, settings={}
        )
        written = masked(
            record(chunks, dialect=case.dialect, request={}, reported=live, settings={})
        )
        read = decode(encode(written))
        assert [c.data for c in read.chunks] == [c.data for c in written.chunks]
        assert read.reported == written.reported
        if mask_secrets(case.body.decode("latin-1")) == case.body.decode("latin-1"):
            assert replay(read).same_as(live)  # nothing was masked: the same bytes

    check()
